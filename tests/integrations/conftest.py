"""A live Memory Lane server (uvicorn with memorylane.asgi, as `make run` starts it) on the test
database, and helpers to drive the memlane CLI and its hooks as subprocesses."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from memory.services.tokens import token_create
from tests.conftest import database_url_for
from tests.workers import ROOT, stop

FIXTURES = Path(__file__).parent / "fixtures"
MEMLANE = str(Path(sys.executable).parent / "memlane")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(base: str, process: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {log.read_text()}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{base}/api/v1/health", timeout=5) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.3)
    raise AssertionError(f"the server did not become healthy: {log.read_text()}")


@contextlib.contextmanager
def uvicorn_server(database_url: str, log: Path, *, lifespan: str = "on", extra_env: dict | None = None):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL"}}
    env.update(DATABASE_URL=database_url, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **(extra_env or {}))
    handle = open(log, "wb")  # noqa: SIM115 - closed below
    command = [sys.executable, "-m", "uvicorn", "memorylane.asgi:application", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--lifespan", lifespan, "--no-access-log"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, process, log)
        yield base
    finally:
        stop(process)
        handle.close()


@pytest.fixture(scope="session")
def lane_server(django_db_setup, django_db_blocker, tmp_path_factory) -> str:
    """The web process (Django and /mcp) on the test database, with ASGI lifespan on."""
    from django.db import connection

    with django_db_blocker.unblock():
        url = database_url_for(connection.settings_dict)
    with uvicorn_server(url, tmp_path_factory.mktemp("server") / "uvicorn.log") as base:
        yield base


@pytest.fixture
def tokens(transactional_db) -> dict[str, str]:
    """Committed users of one team and their tokens (the live server reads them from its own
    connections)."""
    from memory.models import Team
    from tests.conftest import join

    team = Team.objects.get_or_create(slug="acme", defaults={"name": "Acme"})[0]
    User = get_user_model()
    member = join(User.objects.create_user(username="ada"), team, "member")
    reader = join(User.objects.create_user(username="rex"), team, "reader")
    return {
        "member": token_create(user=member, scopes=["read", "write"])[1],
        "read_only": token_create(user=reader, scopes=["read"])[1],
    }


def api(
    base: str,
    token: str,
    method: str,
    path: str,
    body: dict | None = None,
    query: str = "",
    timeout: float = 60,
):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}/api/v1{path}{query}",
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


@pytest.fixture
def memlane_env(tmp_path, lane_server, tokens) -> dict[str, str]:
    """Environment for memlane subprocesses: the live server, a member's token, private state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(
        MEMLANE_URL=lane_server,
        MEMLANE_TOKEN=tokens["member"],
        MEMLANE_STATE_DIR=str(tmp_path / "state"),
        MEMLANE_CONFIG=str(tmp_path / "config.json"),
        HOME=str(tmp_path / "home"),
    )
    return env


def run_memlane(args: list[str], env: dict, stdin: str = "", cwd: str | None = None, timeout: float = 60):
    """Run the installed console script; returns (completed process, wall seconds)."""
    started = time.monotonic()
    done = subprocess.run(
        [MEMLANE, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )
    return done, time.monotonic() - started


def hook_payload(name: str, **overrides) -> dict:
    return {**json.loads((FIXTURES / "claude_code" / f"{name}.json").read_text()), **overrides}


@pytest.fixture(scope="session")
def standalone(tmp_path_factory) -> Path:
    """A fresh virtual environment holding only the memlane client (tests/integrations/standalone.py)."""
    from tests.integrations.standalone import standalone_client

    return standalone_client(tmp_path_factory.mktemp("client"))
