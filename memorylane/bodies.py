"""Request bodies without a Content-Length (``Transfer-Encoding: chunked``) for Django.

Django reads as many body bytes as Content-Length says, so a chunked request looked empty
("content: This field is required."). This wrapper reads such a body first, up to the size limit:
within it, the request reaches Django with its Content-Length set; over it, the client gets 413 in
the API's error shape without the rest being read.
"""

from __future__ import annotations

import json

from django.conf import settings


def _has_length(scope) -> bool:
    return any(name == b"content-length" for name, _ in scope.get("headers", []))


def _chunked(scope) -> bool:
    return any(
        name == b"transfer-encoding" and b"chunked" in value.lower()
        for name, value in scope.get("headers", [])
    )


async def _too_large(send, limit: int) -> None:
    body = json.dumps(
        {
            "error": {
                "code": "PAYLOAD_TOO_LARGE",
                "message": f"The request body is over the limit of {limit} bytes.",
            }
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def with_body_length(app):
    """Wrap an ASGI app so chunked bodies arrive with a Content-Length (or are refused with 413)."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or _has_length(scope) or not _chunked(scope):
            return await app(scope, receive, send)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return await _too_large(send, limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        headers = [(n, v) for n, v in scope["headers"] if n != b"transfer-encoding"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await app(scope, replay, send)

    return wrapped
