"""``memlane mcp``: the Memory Lane MCP server for a local agent, over stdio.

Claude Code (and any MCP client) starts it as a stdio server; it relays each JSON-RPC message to the
server's ``/mcp`` endpoint over HTTP — wherever the memlane configuration points (config file,
``MEMLANE_URL``, ``MEMLANE_TOKEN``), with the token and the agent session now running in this
directory (``X-Memlane-Session``, recorded by the SessionStart hook), so what the agent stores and
finds through MCP is tied to its session. The server runs MCP stateless with JSON responses, so a
relay is one HTTP request per message. Standard library only.

When the server cannot be reached, each request gets a JSON-RPC error saying so; the agent's
session carries on without its memory tools.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

AGENT = os.environ.get("MEMLANE_AGENT", "claude-code")


def headers(config: dict, cwd: str | None = None) -> dict[str, str]:
    """The headers every MCP request carries: the token, the agent and its current session."""
    from . import state

    found = {}
    if config.get("token"):
        found["Authorization"] = f"Bearer {config['token']}"
    session = state.current_session(config, cwd or os.getcwd())
    if session:
        found["X-Memlane-Session"] = session
    found["X-Memlane-Agent"] = AGENT
    return found


def relay(config: dict, message: dict) -> dict | None:
    """Send one JSON-RPC message; the response to write back (None for a notification)."""
    request = urllib.request.Request(
        config["url"].rstrip("/") + "/mcp",
        data=json.dumps(message).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers(config),
        },
    )
    is_request = "id" in message and "method" in message
    try:
        with urllib.request.urlopen(request, timeout=max(30.0, float(config["timeout"]))) as response:  # noqa: S310
            body = response.read()
    except urllib.error.HTTPError as error:
        body = error.read()
        if not is_request:
            return None
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = {}
        if isinstance(decoded, dict) and "jsonrpc" in decoded:
            return decoded
        return _error(message, f"Memory Lane answered HTTP {error.code}: {_describe(decoded)}")
    except (OSError, ValueError) as error:
        return _error(message, f"Memory Lane is unreachable ({error})") if is_request else None
    if not is_request or not body.strip():
        return None
    try:
        return json.loads(body)
    except ValueError:
        return _error(message, "Memory Lane sent a response that is not JSON")


def _describe(body) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    return "no details"


def _error(message: dict, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32603, "message": text}}


def serve(config: dict, stdin=None, stdout=None) -> int:
    """Relay newline-delimited JSON-RPC from stdin to the server until stdin closes."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            messages = message if isinstance(message, list) else [message]
            replies = [
                r for r in (relay(config, m) for m in messages if isinstance(m, dict)) if r is not None
            ]
            reply = replies if isinstance(message, list) else (replies[0] if replies else None)
        if reply:
            stdout.write(json.dumps(reply) + "\n")
            stdout.flush()
    return 0
