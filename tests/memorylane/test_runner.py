"""`make run` end to end: the runner in a fresh data directory serves health and the admin login."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest
from django.contrib.auth import get_user_model

from memorylane.runner import ensure_admin
from tests.workers import ROOT

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_ensure_admin_creates_one_superuser_with_the_configured_password(db, monkeypatch, capsys):
    monkeypatch.setenv("MEMORYLANE_ADMIN_PASSWORD", "s3cret-pass-word")
    ensure_admin()
    ensure_admin()
    admin = get_user_model().objects.get(is_superuser=True)
    assert admin.username == "admin" and admin.check_password("s3cret-pass-word")
    assert "s3cret-pass-word" not in capsys.readouterr().out


def test_ensure_admin_generates_and_prints_a_password_once(db, monkeypatch, capsys):
    monkeypatch.delenv("MEMORYLANE_ADMIN_PASSWORD", raising=False)
    ensure_admin()
    printed = capsys.readouterr().out
    password = next(line.strip() for line in printed.splitlines() if line.startswith("      "))
    assert get_user_model().objects.get(username="admin").check_password(password)
    ensure_admin()
    assert capsys.readouterr().out == ""


def test_the_runner_serves_health_and_the_admin_login_then_stops_everything(tmp_path, settings):
    wanted_buffers = settings.MEMORY_LANE["EMBEDDED_POSTGRES_SETTINGS"]["shared_buffers"]
    home = Path("/tmp") / f"ml-run-{os.getpid()}"  # short: the database socket lives here
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(MEMORYLANE_HOME=str(home), PORT=str(port), MEMORYLANE_ADMIN_PASSWORD="runner-test-pw")
    log = open(tmp_path / "runner.log", "wb")  # noqa: SIM115
    runner = subprocess.Popen(
        [sys.executable, "-m", "memorylane.runner"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 180
        status = None
        while time.monotonic() < deadline and runner.poll() is None:
            try:
                status, body = get(f"http://127.0.0.1:{port}/api/v1/health")
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert status == 200, (tmp_path / "runner.log").read_text()
        assert json.loads(body)["database"] == "ok"
        status, page = get(f"http://127.0.0.1:{port}/admin/login/")
        assert status == 200 and b"Django administration" in page
        assert (home / "pgdata" / "postmaster.pid").exists()
        # The fresh cluster was tuned, and restarted once for shared_buffers.
        url = subprocess.run(
            [sys.executable, "-m", "memorylane.embedded", "url"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
        with psycopg.connect(url) as conn:
            assert conn.execute("SHOW shared_buffers").fetchone()[0] == wanted_buffers

        while (
            time.monotonic() < deadline
            and "Memory Lane is running at" not in (tmp_path / "runner.log").read_text()
        ):
            time.sleep(0.2)  # the runner announces itself once its own health check passes
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=60) == 0
        output = (tmp_path / "runner.log").read_text()
        assert "Memory Lane is running at" in output and "Memory Lane: stopped." in output
        assert not (home / "pgdata" / "postmaster.pid").exists(), "the embedded database is still running"
        with pytest.raises(OSError):
            get(f"http://127.0.0.1:{port}/api/v1/health")
    finally:
        if runner.poll() is None:
            runner.kill()
        log.close()
        subprocess.run(
            [sys.executable, "-m", "memorylane.embedded", "stop"],
            cwd=ROOT,
            env={**env},
            capture_output=True,
            timeout=60,
        )
        subprocess.run(["rm", "-rf", str(home)], check=False)
