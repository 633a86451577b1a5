"""A small OpenAI-compatible chat completions server on localhost, for the LLM client's tests.

``answers`` is a list of replies used in turn (the last one repeats): a dict or str is sent as the
assistant message content (a dict as JSON), an int is an HTTP status with no body, and a float is
a delay in seconds before the next reply. ``hold`` (an Event), when set, blocks every request
until it is set. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLM:
    def __init__(self, answers: list) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []
        self.received = threading.Event()
        self.hold: threading.Event | None = None
        self.url = ""

    def next_answer(self):
        index = min(len(self.requests) - 1, len(self.answers) - 1)
        return self.answers[index]


def _handler(llm: FakeLLM):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            llm.requests.append({"path": self.path, "body": json.loads(body or b"{}")})
            llm.received.set()
            if llm.hold is not None:
                llm.hold.wait(120)
            answer = llm.next_answer()
            if isinstance(answer, float):
                time.sleep(answer)
                answer = llm.answers[-1]
            if isinstance(answer, int):
                self.send_response(answer)
                self.end_headers()
                return
            content = json.dumps(answer) if isinstance(answer, dict) else answer
            payload = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextlib.contextmanager
def fake_llm(answers: list) -> Iterator[FakeLLM]:
    llm = FakeLLM(answers)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(llm))
    server.daemon_threads = True
    llm.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield llm
    finally:
        if llm.hold is not None:
            llm.hold.set()
        server.shutdown()
        server.server_close()
