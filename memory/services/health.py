"""Health of the parts a request depends on — database (with pgvector), broker, embedder — and of
the background pipeline (extraction backlog, last reflection and decay runs), reported apart:
a slow pipeline degrades the server's learning, not its answers."""

from __future__ import annotations

import json
import socket

from django.conf import settings
from django.db import connection

from memory import embeddings
from memorylane.supervision import public_supervisor


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except Exception as exc:  # health reports any failure rather than raising it
        return f"error: {exc.__class__.__name__}: {exc}".strip()
    return "ok" if row else "error: the vector extension is not installed"


def broker_status() -> str:
    from memorylane.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001 - any failure is reported, not raised
        return f"error: {exc.__class__.__name__}: {exc}".strip()
    return "ok"


def tasks_status() -> dict:
    from memory.services.jobs import task_health

    try:
        return task_health()
    except Exception as exc:  # noqa: BLE001 - the database being down is reported above
        return {"status": f"error: {exc.__class__.__name__}", "problems": [str(exc)]}


def supervisor_status() -> dict | None:
    """What `make run` reports about its parts (``MEMORYLANE_HOME/supervisor.json``, written by the
    runner): None when no runner of this data directory is alive (the server runs under compose, or
    by hand)."""
    from memorylane.embedded import process_alive

    try:
        report = json.loads((settings.MEMORYLANE_HOME / "supervisor.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict) or report.get("status") == "stopped":
        return None
    pid = report.get("pid")
    local = report.get("host") in (settings.MEMORYLANE_HOST, socket.gethostname())
    if local and not (isinstance(pid, int) and process_alive(pid)):
        return None  # the runner was killed: its last report is stale
    return report


def public_report(report: dict) -> dict:
    """The report for anonymous callers: states ("ok" / "error") and the pipeline's counts, never
    an exception's text, paths or hosts (DESIGN.md §8). Staff see the full report."""

    def state(value: str) -> str:
        return "ok" if value == "ok" else "error"

    tasks = report.get("tasks") or {}
    if tasks.get("status") not in ("ok", "degraded"):  # an exception's text: keep it to staff
        tasks = {"status": "error", "problems": []}
    return {
        "status": report["status"],
        "database": state(report["database"]),
        "broker": state(report["broker"]),
        "embedder": state(report["embedder"]),
        "version": report["version"],
        "tasks": tasks,
        **({"supervisor": public_supervisor(report["supervisor"])} if report.get("supervisor") else {}),
    }


def health_report() -> dict:
    report = {
        "database": database_status(),
        "broker": broker_status(),
        "embedder": embeddings.check(),
        "version": settings.VERSION,
        "tasks": tasks_status(),
    }
    supervisor = supervisor_status()
    if supervisor is not None:
        report["supervisor"] = supervisor
    ok = all(report[part] == "ok" for part in ("database", "broker", "embedder"))
    # A part of `make run` restarting or given up on: the server answers, with less behind it.
    status = "ok" if ok else "error"
    if ok and supervisor is not None and supervisor.get("status") != "ok":
        status = "degraded"
    return {"status": status, **report}
