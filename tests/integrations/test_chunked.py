"""Request bodies sent with Transfer-Encoding: chunked (no Content-Length), through the real server."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.slow


def post_chunked(base: str, token: str, path: str, body: bytes, chunk: int = 1000) -> tuple[int, dict]:
    url = urlparse(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    connection.putrequest("POST", f"/api/v1{path}")
    connection.putheader("Authorization", f"Bearer {token}")
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    try:
        for start in range(0, len(body), chunk):
            piece = body[start : start + chunk]
            connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        connection.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered 413 before reading everything
    response = connection.getresponse()
    status, payload = response.status, json.loads(response.read() or b"{}")
    connection.close()
    return status, payload


def test_a_chunked_body_is_read_not_taken_as_empty(lane_server, tokens):
    body = json.dumps({"content": "Chunked uploads must reach the store service intact.", "tags": ["http"]})
    status, payload = post_chunked(lane_server, tokens["member"], "/observations", body.encode(), chunk=7)
    assert status == 201, payload
    assert payload["memory"]["content"] == "Chunked uploads must reach the store service intact."


def test_a_chunked_body_over_the_limit_is_413(lane_server, tokens):
    body = json.dumps({"content": "x" * (2 * 1024 * 1024)}).encode()
    status, payload = post_chunked(lane_server, tokens["member"], "/observations", body, chunk=64 * 1024)
    assert status == 413 and payload["error"]["code"] == "PAYLOAD_TOO_LARGE"
