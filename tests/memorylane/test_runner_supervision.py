"""`make run` heals itself: real runners, real processes killed with -9, real crash loops.

One data directory for the module (a fresh cluster costs an initdb); each test starts its own runner.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.memorylane.test_runner import free_port, get
from tests.workers import ROOT

pytestmark = pytest.mark.slow

FAST = {
    "RUNNER_BACKOFF_INITIAL_SECONDS": 0.2,
    "RUNNER_BACKOFF_MAX_SECONDS": 0.5,
    "RUNNER_CRASH_LOOP_FAILURES": 3,
    "RUNNER_STABLE_SECONDS": 10,
}


@pytest.fixture(scope="module")
def home():
    path = Path("/tmp") / f"ml-sup-{os.getpid()}"  # short: the database socket lives here
    path.mkdir(exist_ok=True)
    yield path
    subprocess.run(
        [sys.executable, "-m", "memorylane.embedded", "stop"],
        cwd=ROOT,
        env={**os.environ, "MEMORYLANE_HOME": str(path)},
        capture_output=True,
        timeout=60,
    )
    subprocess.run(["rm", "-rf", str(path)], check=False)


class Runner:
    def __init__(self, home: Path, tmp_path: Path, config: dict | None = None, **env: str) -> None:
        self.home, self.port, self.log_path = home, free_port(), tmp_path / "runner.log"
        environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
        environment.update(
            MEMORYLANE_HOME=str(home), PORT=str(self.port), MEMORYLANE_ADMIN_PASSWORD="sup-test-pw"
        )
        if config:
            (tmp_path / "config.json").write_text(json.dumps(config))
            environment["MEMORYLANE_CONFIG"] = str(tmp_path / "config.json")
        environment.update(env)
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memorylane.runner"],
            cwd=ROOT,
            env=environment,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def health(self) -> tuple[int | None, dict]:
        try:
            status, body = get(f"http://127.0.0.1:{self.port}/api/v1/health")
            return status, json.loads(body)
        except (OSError, ValueError):
            return None, {}

    def wait_for(self, predicate, timeout: float = 120, what: str = "") -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if predicate():
                return time.monotonic() - started
            assert self.process.poll() is None or "exit" in what, self.output()[-3000:]
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}\n{self.output()[-3000:]}")

    def healthy(self) -> bool:
        status, body = self.health()
        return status == 200 and body.get("status") == "ok"

    def report(self) -> dict:
        return json.loads((self.home / "supervisor.json").read_text())

    def pid_of(self, part: str) -> int:
        return self.report()["processes"][part]["pid"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


@pytest.fixture
def start(home, tmp_path):
    runners = []

    def make(config: dict | None = None, **env: str) -> Runner:
        (tmp_path / str(len(runners))).mkdir()
        runner = Runner(home, tmp_path / str(len(runners)), config, **env)
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


def alive(pid: int) -> bool:
    from memorylane.embedded import process_alive

    return process_alive(pid)


def test_every_part_killed_comes_back_while_the_others_serve_and_health_counts_restarts(start, home):
    runner = start()
    runner.wait_for(runner.healthy, what="healthy")
    web_before = runner.pid_of("web")
    os.kill(runner.pid_of("worker"), signal.SIGKILL)
    runner.wait_for(lambda: runner.report()["processes"]["worker"]["restarts"] == 1, 30, "worker restart")
    assert runner.pid_of("web") == web_before, "the web server was taken down with the worker"
    os.kill(runner.pid_of("beat"), signal.SIGKILL)
    os.kill(web_before, signal.SIGKILL)
    seconds = runner.wait_for(lambda: runner.healthy() and runner.pid_of("web") != web_before, 30, "web back")
    assert seconds < 15
    postmaster = int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
    os.kill(postmaster, signal.SIGKILL)
    seconds = runner.wait_for(
        lambda: runner.healthy() and runner.health()[1]["supervisor"]["restarts"]["database"] == 1,
        30,
        "database back",
    )
    assert seconds < 15
    status, body = runner.health()
    assert body["supervisor"] == {
        "status": "ok",
        "restarts": {"database": 1, "web": 1, "worker": 1, "beat": 1},
    }
    assert "pid" not in json.dumps(body["supervisor"])  # anonymous callers see no pids or hosts
    output = runner.output()
    assert "worker died (killed by SIGKILL)" in output and "database died (the postmaster is gone)" in output
    assert "stopping the rest" not in output


def test_repeated_sigterm_and_sigint_stop_everything_in_order(start, home):
    runner = start()
    runner.wait_for(runner.healthy, what="healthy")
    children = [runner.pid_of(name) for name in ("web", "worker", "beat")]
    for sig in (signal.SIGTERM, signal.SIGTERM, signal.SIGINT, signal.SIGINT, signal.SIGTERM):
        runner.process.send_signal(sig)
        time.sleep(0.05)
    assert runner.process.wait(timeout=60) == 0, runner.output()[-3000:]
    output = runner.output()
    assert output.index("Shutting down") < output.index("worker: Warm shutdown")  # web before the worker
    assert "Memory Lane: stopped." in output
    assert not any(alive(pid) for pid in children)
    assert not (home / "pgdata" / "postmaster.pid").exists(), "the embedded database is still running"
    assert runner.report()["status"] == "stopped"


def test_a_web_server_in_a_crash_loop_stops_everything_with_a_clear_message(start, home):
    with socket.socket() as taken:  # the port is taken: uvicorn exits at once, every time
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        runner = start(FAST, PORT=str(taken.getsockname()[1]))
        assert runner.process.wait(timeout=120) == 1, runner.output()[-3000:]
    output = runner.output()
    assert "web keeps failing (4 quick failures in a row, 3 restarts, last: exit code " in output
    assert "giving up on it: stopping everything" in output
    assert "Memory Lane: stopped." in output
    assert not (home / "pgdata" / "postmaster.pid").exists()


def test_a_worker_in_a_crash_loop_degrades_health_while_the_web_serves_and_sighup_tries_again(start):
    runner = start(FAST, MEMORYLANE_WORKER_CONCURRENCY="not-a-number")
    runner.wait_for(
        lambda: runner.health()[1].get("supervisor", {}).get("status") == "degraded", what="degraded"
    )
    status, body = runner.health()
    assert status == 200 and body["status"] == "degraded" and body["database"] == "ok"
    assert "worker keeps failing (4 quick failures in a row, 3 restarts" in runner.output()
    assert runner.process.poll() is None
    runner.process.send_signal(signal.SIGHUP)
    runner.wait_for(lambda: "SIGHUP: trying worker again" in runner.output(), 30, "retry")
    runner.wait_for(lambda: runner.output().count("worker keeps failing") == 2, 60, "second give-up")
    assert runner.health()[1]["supervisor"]["restarts"]["worker"] > 3
