"""A real database outage, made by cutting a TCP proxy between live processes and PostgreSQL: the web
server answers 503 with Retry-After (API, /mcp, dashboard, health) and recovers by itself; a real
worker's extraction that met the outage resumes within seconds of recovery without spending an attempt."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory.models import Session
from memory.services.tokens import token_create
from tests.conftest import join
from tests.integrations.conftest import uvicorn_server
from tests.pipeline.conftest import CORRECTION_TRANSCRIPT, WORKED_OUTCOME
from tests.workers import celery_worker

pytestmark = pytest.mark.slow


class DatabaseProxy:
    """127.0.0.1:<port> → the test database's socket; ``cut()`` drops every connection and refuses
    new ones until ``restore()``."""

    def __init__(self, target: str | tuple[str, int]) -> None:
        self.target = target
        self.down = False
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _upstream(self) -> socket.socket:
        if isinstance(self.target, str):
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            upstream = socket.socket()
        upstream.connect(self.target)
        return upstream

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                client.close()
                continue
            try:
                upstream = self._upstream()
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.down = True
        with self.lock:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.sockets.clear()

    def restore(self) -> None:
        self.down = False

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.fixture
def proxy_url(transactional_db):
    from django.db import connection

    settings_dict = connection.settings_dict
    host, port, name = settings_dict["HOST"], settings_dict["PORT"] or "5432", settings_dict["NAME"]
    target = f"{host}/.s.PGSQL.{port}" if host.startswith("/") else (host, int(port))
    proxy = DatabaseProxy(target)
    user = settings_dict["USER"] or "postgres"
    yield proxy, f"postgresql://{user}@127.0.0.1:{proxy.port}/{name}"
    proxy.close()


def call(url: str, *, method: str = "GET", body: dict | None = None, headers: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_a_database_outage_is_a_503_with_retry_after_everywhere_and_heals_by_itself(
    proxy_url, team, tmp_path
):
    proxy, url = proxy_url
    user = join(get_user_model().objects.create_user(username="outage", is_staff=True), team, "owner")
    token = token_create(user=user, scopes=["read", "write"])[1]
    browser = Client()
    browser.force_login(user)
    cookie = f"sessionid={browser.cookies['sessionid'].value}"
    bearer = {"Authorization": f"Bearer {token}"}
    with uvicorn_server(url, tmp_path / "uvicorn.log", lifespan="off") as base:
        store = {"content": "Outages answer 503 with Retry-After, never 500.", "type": "learning"}
        assert call(f"{base}/api/v1/observations", method="POST", body=store, headers=bearer)[0] == 201
        assert call(f"{base}/api/v1/search?q=outage+retry", headers=bearer)[0] == 200
        proxy.cut()

        status, headers, body = call(
            f"{base}/api/v1/observations",
            method="POST",
            body={**store, "content": "During the outage."},
            headers=bearer,
        )
        assert status == 503 and headers.get("Retry-After") == "5", (headers, body)
        assert json.loads(body)["error"]["code"] == "SERVICE_UNAVAILABLE"
        status, headers, body = call(f"{base}/api/v1/search?q=outage", headers=bearer)
        assert status == 503 and headers["Retry-After"] == "5"

        status, headers, body = call(f"{base}/api/v1/health")
        assert status == 503 and headers["Retry-After"] == "5" and json.loads(body)["database"] == "error"

        status, headers, page = call(f"{base}/memories/", headers={"Cookie": cookie})
        assert status == 503 and headers["Retry-After"] == "5"
        assert b"Temporarily unavailable" in page and b'http-equiv="refresh"' in page
        status, headers, text = call(f"{base}/memories/", headers={"Cookie": cookie, "HX-Request": "true"})
        assert status == 503 and b"database is unavailable" in text

        mcp_call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_lane_find", "arguments": {"query": "outage"}},
        }
        mcp_headers = {**bearer, "Accept": "application/json, text/event-stream"}
        status, headers, body = call(f"{base}/mcp", method="POST", body=mcp_call, headers=mcp_headers)
        assert status == 503 and headers["Retry-After"] == "5", body
        assert json.loads(body)["error"]["code"] == "SERVICE_UNAVAILABLE"

        proxy.restore()
        status, _, body = call(
            f"{base}/api/v1/observations",
            method="POST",
            body={**store, "content": "After the outage."},
            headers=bearer,
        )
        assert status == 201, body
        status, _, body = call(f"{base}/api/v1/search?q=outage+retry", headers=bearer)
        assert status == 200, body
        found = json.loads(body)["results"][0]
        assert "Retry-After" in found["memory"]["content"] and found["explain"]["lexical_rank"] == 1
        assert call(f"{base}/api/v1/health")[0] == 200
        assert call(f"{base}/memories/", headers={"Cookie": cookie})[0] == 200
    assert "Traceback" not in (tmp_path / "uvicorn.log").read_text()


def test_an_extraction_that_met_the_outage_resumes_soon_after_recovery_without_spending_an_attempt(
    proxy_url, team, tmp_path
):
    from memory.services.sessions import messages_append, session_end, session_start
    from memory.tasks import extract_session_task

    proxy, url = proxy_url
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"EXTRACTION_OUTAGE_RETRY_SECONDS": 1}))
    user = join(get_user_model().objects.create_user(username="outage-agent"), team, "member")
    session, _ = session_start(team=team, user=user, external_id="outage-session", agent="claude-code")
    messages_append(session=session, messages=CORRECTION_TRANSCRIPT)
    Session.objects.filter(pk=session.pk).update(ended_at=None)
    log = tmp_path / "worker.log"
    with celery_worker(env={"DATABASE_URL": url, "MEMORYLANE_CONFIG": str(config)}, log_path=log):
        proxy.cut()
        session, _ = session_end(session=session, **WORKED_OUTCOME)  # queues the extraction (on commit)
        # And once more (as a message queued before teams, without the team): the duplicate changes nothing.
        extract_session_task.delay(str(session.pk))
        deadline = time.monotonic() + 90
        while "database unreachable" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert "database unreachable" in log.read_text(), log.read_text()[-4000:]
        time.sleep(3)  # a few retries meet the outage
        proxy.restore()
        recovered = time.monotonic()
        while time.monotonic() - recovered < 90:
            session.refresh_from_db()
            if session.extraction_status == "done":
                break
            time.sleep(0.3)
        waited = time.monotonic() - recovered
    assert session.extraction_status == "done", log.read_text()[-4000:]
    # The bound: within a minute of recovery (here, a few seconds on an idle machine; the first
    # extraction also loads the embedding model).
    assert waited < 60
    assert session.extraction_attempts == 1  # the outage spent none
    assert len(session.extraction_report["added"]) >= 2
