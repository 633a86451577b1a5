"""Start real Celery worker processes for tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stop(process: subprocess.Popen, timeout: float = 20) -> None:
    """Ask a child process to stop; kill it if it has not within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def celery_worker(
    *, env: dict[str, str], queues: str = "celery", log_path: Path | None = None
) -> Iterator[subprocess.Popen]:
    """A ``celery worker`` child (solo pool) with ``env`` on top of ours; stopped on exit."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "memorylane",
        "worker",
        "--pool",
        "solo",
        "--loglevel",
        "INFO",
        "--queues",
        queues,
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
    ]
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        stop(process)
        if log_path:
            log.close()


def wait_for(predicate, *, what: str, log: Path | None = None, timeout: float = 120):
    """The predicate's first truthy value, polled until ``timeout``; the log's tail on failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    if log is not None and log.exists():
        print(log.read_text()[-6000:])
    raise AssertionError(f"timed out waiting for {what}")
