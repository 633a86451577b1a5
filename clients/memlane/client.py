"""A tiny HTTP client for the Memory Lane API (urllib, imported only when a request is made)."""

from __future__ import annotations

import json


class Unavailable(Exception):
    """The server could not be reached, timed out, or failed (5xx): the caller fails open."""


class ApiError(Exception):
    """The server refused the request (4xx); ``body`` is its ``{"error": {...}}``."""

    def __init__(self, status: int, body: dict) -> None:
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        super().__init__(message or f"HTTP {status}")
        self.status = status
        self.body = body if isinstance(body, dict) else {}

    def describe(self) -> str:
        error = self.body.get("error") or {}
        lines = [f"{error.get('code', 'ERROR')}: {error.get('message', self)}"]
        for name, candidates in (error.get("ambiguities") or {}).items():
            lines.append(f"  '{name}' could be: {', '.join(candidates)}")
        if error.get("hint"):
            lines.append(f"  {error['hint']}")
        for name, messages in (error.get("fields") or {}).items():
            lines.append(f"  {name}: {' '.join(messages)}")
        return "\n".join(lines)


def request(
    config: dict,
    method: str,
    path: str,
    *,
    query: dict | None = None,
    body: dict | None = None,
    timeout: float | None = None,
    raw: bool = False,
):
    """``method path`` against ``config["url"]``; returns the decoded JSON (or text with ``raw``)."""
    import urllib.error
    import urllib.parse
    import urllib.request

    url = config["url"] + path
    if query:
        url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v not in (None, "")})
    headers = {"Accept": "text/markdown, application/json" if raw else "application/json"}
    if config.get("token"):
        headers["Authorization"] = f"Bearer {config['token']}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout or config["timeout"]) as response:  # noqa: S310
            payload = response.read()
    except urllib.error.HTTPError as error:
        payload = error.read()
        if error.code >= 500:
            raise Unavailable(f"HTTP {error.code}") from None
        try:
            decoded = json.loads(payload)
        except ValueError:
            decoded = {}
        raise ApiError(error.code, decoded) from None
    except (OSError, ValueError) as error:  # URLError, timeouts, refused connections, bad URLs
        raise Unavailable(str(error)) from None
    if raw:
        return payload.decode("utf-8", "replace")
    try:
        return json.loads(payload) if payload else {}
    except ValueError:
        raise Unavailable("the server did not answer JSON") from None
