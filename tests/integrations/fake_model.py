"""A scripted stand-in for the Anthropic Messages API on localhost, for driving the real Claude Code
(and OpenCode through its Anthropic provider) offline.

The "model" follows instructions written in the user's prompt, so a test decides what the agent does:

- ``REMEMBER: <text>`` — call the memory store tool (whatever the client named it) with ``<text>``;
- ``RECALL: <question>`` — call the memory find tool with ``<question>``;
- after a tool result: answer ``TOOL RESULT: <the result>`` (so the test sees what reached the model);
- anything else: answer ``OK.``

Every request body is kept in ``requests`` (the system prompt and messages the client sent, with the
hook context in them), streaming (SSE) and plain JSON answers are both served, and token counting
answers a rough count.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

INSTRUCTION = re.compile(r"\b(REMEMBER|RECALL):\s*(.+)", re.S)


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(_text_of(block.get("content")))
    return "\n".join(parts)


def request_text(body: dict) -> str:
    """Everything the model was shown: the system prompt and every message, as text."""
    system = body.get("system")
    parts = [_text_of(system) if not isinstance(system, str) else system]
    parts += [_text_of(message.get("content")) for message in body.get("messages", [])]
    return "\n".join(part for part in parts if part)


def _blocks(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def decide(body: dict) -> dict:
    """The assistant's next content block: ``{"text": …}`` or ``{"tool": name, "input": {…}}``.

    Like a real model, it loads a deferred tool with ToolSearch before calling it (Claude Code
    defers MCP tools: their names are listed, their schemas are loaded on demand)."""
    messages = body.get("messages") or []
    instruction, since = None, 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        texts = [b.get("text", "") for b in _blocks(message) if b.get("type") == "text"]
        found = next((m for m in (INSTRUCTION.search(t) for t in texts) if m), None)
        if found:
            instruction, since = found, index
            break
    called = [
        block.get("name", "")
        for message in messages[since:]
        if message.get("role") == "assistant"
        for block in _blocks(message)
        if block.get("type") == "tool_use"
    ]
    last_blocks = _blocks(messages[-1]) if messages else []
    last_result = next((b for b in last_blocks if b.get("type") == "tool_result"), None)
    if instruction is None:
        if last_result is not None:
            return {"text": "TOOL RESULT: " + _text_of(last_result.get("content"))[:4000]}
        return {"text": "OK."}
    verb, argument = instruction.group(1), instruction.group(2).strip().splitlines()[0].strip(" \"'")
    suffix = "memory_lane_store" if verb == "REMEMBER" else "memory_lane_find"
    if any(name.endswith(suffix) for name in called):
        return {
            "text": "TOOL RESULT: " + (_text_of(last_result.get("content"))[:4000] if last_result else "")
        }
    tools = [tool.get("name", "") for tool in body.get("tools") or []]
    name = next((tool for tool in tools if tool.endswith(suffix)), None)
    if name is not None:
        arguments = (
            {"information": argument, "type": "learning"} if verb == "REMEMBER" else {"query": argument}
        )
        return {"tool": name, "input": arguments}
    deferred = re.search(rf"\bmcp__[\w-]+__{suffix}\b", request_text(body))
    if deferred and "ToolSearch" in tools and "ToolSearch" not in called:
        return {"tool": "ToolSearch", "input": {"query": f"select:{deferred.group(0)}", "max_results": 5}}
    if last_result is not None:  # e.g. the tool was denied
        return {"text": "TOOL RESULT: " + _text_of(last_result.get("content"))[:4000]}
    return {"text": f"NO TOOL {suffix} among {len(tools)} tools"}


class FakeModel:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.url = ""
        self._ids = itertools.count(1)
        self.lock = threading.Lock()

    def keep(self, path: str, body: dict) -> None:
        with self.lock:
            self.requests.append({"path": path, "body": body})

    def texts(self) -> list[str]:
        """What the model was shown in each message request, in order."""
        with self.lock:
            return [
                request_text(r["body"])
                for r in self.requests
                if r["path"].startswith("/v1/messages?") or r["path"] == "/v1/messages"
            ]

    def message(self, body: dict) -> dict:
        step = decide(body)
        number = next(self._ids)
        if "tool" in step:
            block = {
                "type": "tool_use",
                "id": f"toolu_{number:06d}",
                "name": step["tool"],
                "input": step["input"],
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": step["text"]}
            stop = "end_turn"
        return {
            "id": f"msg_{number:06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        }


def _events(message: dict) -> Iterator[tuple[str, dict]]:
    start = {**message, "content": [], "stop_reason": None}
    yield "message_start", {"type": "message_start", "message": start}
    block = message["content"][0]
    if block["type"] == "text":
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        opened = {**block, "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": opened}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _handler(model: FakeModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def _json(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if self.path.startswith("/v1/models"):
                self._json(200, {"data": [{"id": "claude-sonnet-4-5", "type": "model"}], "has_more": False})
            else:
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            model.keep(self.path, body)
            if "count_tokens" in self.path:
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
                return
            if not self.path.startswith("/v1/messages"):
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                return
            message = model.message(body)
            if not body.get("stream"):
                self._json(200, message)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event, data in _events(message):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextlib.contextmanager
def fake_model() -> Iterator[FakeModel]:
    model = FakeModel()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
    server.daemon_threads = True
    model.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
