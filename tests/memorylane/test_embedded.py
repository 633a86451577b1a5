"""The embedded PostgreSQL's own settings (EMBEDDED_POSTGRES_SETTINGS)."""

from __future__ import annotations

import os
import time

import psycopg
import pytest

from memorylane import embedded

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="the embedded cluster is not the one in use"
)


def shown(uri: str, name: str, *, expect: str | None = None) -> str:
    """The value a new connection sees; with ``expect``, waits a little for a reload to reach it."""
    deadline = time.monotonic() + 5
    while True:
        with psycopg.connect(uri, autocommit=True) as conn:
            value = conn.execute(f"SHOW {name}").fetchone()[0]
        if expect is None or value == expect or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_the_cluster_runs_with_the_configured_shared_buffers(settings):
    wanted = settings.MEMORY_LANE["EMBEDDED_POSTGRES_SETTINGS"]["shared_buffers"]
    assert shown(embedded.server().get_uri(), "shared_buffers") == wanted


def test_tuning_applies_what_a_reload_can_and_reports_what_waits_for_a_restart():
    uri = embedded.server().get_uri()
    buffers, work_mem = shown(uri, "shared_buffers"), shown(uri, "work_mem")
    other_buffers = "256MB" if buffers != "256MB" else "512MB"
    try:
        assert not embedded.apply_tuning(uri, {"shared_buffers": buffers})  # already in place
        assert not embedded.apply_tuning(uri, {"work_mem": "7MB"})  # a reload is enough
        assert shown(uri, "work_mem", expect="7MB") == "7MB"
        assert embedded.apply_tuning(uri, {"shared_buffers": other_buffers, "work_mem": "7MB"})
        assert shown(uri, "shared_buffers") == buffers  # only a restart changes it
    finally:
        embedded.apply_tuning(uri, {"shared_buffers": buffers})
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM RESET work_mem")
            conn.execute("SELECT pg_reload_conf()")
    assert shown(uri, "work_mem", expect=work_mem) == work_mem
