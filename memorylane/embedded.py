"""The embedded PostgreSQL 16 + pgvector that runs Memory Lane with no configuration.

With no ``DATABASE_URL``, settings call :func:`database_url`, which starts (or attaches to) a
``pgserver`` cluster in ``$MEMORYLANE_HOME/pgdata`` and returns a socket URL for the
``memorylane`` database. Every process — web, worker, beat, ``manage.py`` — attaches to the same
cluster; the process that found it stopped and started it is the one that stops it
(:func:`stop_if_started_here`), so ``make run`` and ``make test`` leave nothing running.

Run ``python -m memorylane.embedded start|stop|url`` to manage it by hand.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from pathlib import Path
from urllib.parse import quote

# platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI); pgserver copes without it.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

DATABASE_NAME = "memorylane"

_server = None
_started_here = False


def home() -> Path:
    """The data directory (``MEMORYLANE_HOME``, default ``./.memorylane``), created if missing."""
    path = Path(os.environ.get("MEMORYLANE_HOME", ".memorylane")).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def pgdata() -> Path:
    return home() / "pgdata"


def _is_running(data_dir: Path) -> bool:
    from pgserver.utils import PostmasterInfo

    if not (data_dir / "postmaster.pid").exists():
        return False
    try:
        info = PostmasterInfo.read_from_pgdata(data_dir)
    except (AssertionError, ValueError, OSError):
        return False  # a half-written pid file: the server is starting or crashed
    return info is not None and info.is_running() and process_alive(info.pid)


def process_alive(pid: int | None) -> bool:
    """Whether ``pid`` runs. A zombie does not: a postmaster killed with -9 stays one until it is
    reaped, and ``kill(pid, 0)`` (which psutil and PostgreSQL itself use) still finds it."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
        return state not in {"Z", "X"}
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def postmaster_lines(data_dir: Path | None = None) -> list[str]:
    """The lines of ``postmaster.pid`` (pid, data dir, start time, port, socket dir, …), or []."""
    try:
        return (data_dir or pgdata()).joinpath("postmaster.pid").read_text().splitlines()
    except OSError:
        return []


def postmaster_alive(data_dir: Path | None = None) -> bool:
    """Whether the cluster's postmaster (named in ``postmaster.pid``) is alive — what `make run` watches."""
    lines = postmaster_lines(data_dir)
    return bool(lines) and lines[0].strip().isdigit() and process_alive(int(lines[0]))


def leftover_pids(data_dir: Path) -> list[int]:
    """Live processes working in ``data_dir``: a dead postmaster's backends keep its shared memory,
    and PostgreSQL will not start beside them."""
    found = []
    target = str(data_dir.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "cwd") == target and process_alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def clear_after_crash(data_dir: Path | None = None, *, timeout: float = 10.0) -> list[int]:
    """After the postmaster died: end its leftover processes, then remove the stale ``postmaster.pid``
    and socket lock file, which PostgreSQL refuses to start over while the dead postmaster's pid is a
    zombie. Returns the pids ended. Never call it while the postmaster is alive."""
    import signal
    import time

    data_dir = data_dir or pgdata()
    if postmaster_alive(data_dir):
        raise RuntimeError("the database is running; nothing to clear")
    lines = postmaster_lines(data_dir)
    ended = leftover_pids(data_dir)
    for pid in ended:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(process_alive(pid) for pid in ended):
        time.sleep(0.05)
    port = lines[3].strip() if len(lines) > 3 else "5432"
    socket_dir = Path(lines[4].strip()) if len(lines) > 4 and lines[4].strip() else data_dir
    for stale in (data_dir / "postmaster.pid", socket_dir / f".s.PGSQL.{port}.lock"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    return ended


def restart_after_crash() -> None:
    """Start the cluster again after its postmaster died, on the same socket (clients reconnect)."""
    global _started_here
    if postmaster_alive():
        return  # another process (a `manage.py` command) started it in the meantime: use that one
    clear_after_crash()
    handle = server()
    with handle._lock:
        handle._postmaster_info = None
        handle.ensure_postgres_running()
    _started_here = True  # restarted by this process: it stops it


def server(tuning: dict | None = None):
    """Start or attach to the cluster once per process and return pgserver's handle. The process
    that starts it applies ``tuning`` (server settings, ``ALTER SYSTEM``), restarting it once when
    one of them needs a restart (``shared_buffers`` the first time)."""
    global _server, _started_here
    if _server is None:
        import pgserver

        logging.getLogger("pgserver").setLevel(logging.WARNING)
        data_dir = pgdata()
        _started_here = not _is_running(data_dir)
        # cleanup_mode=None: pgserver never stops it behind our back; stop_if_started_here does.
        _server = pgserver.get_server(data_dir, cleanup_mode=None)
        if _started_here and tuning and apply_tuning(_server.get_uri(), tuning):
            stop()
            with _server._lock:
                _server._postmaster_info = None
                _server.ensure_postgres_running()
        _ensure_database(_server.get_uri())
    return _server


def apply_tuning(admin_uri: str, tuning: dict) -> bool:
    """Write ``tuning`` to the cluster's ``postgresql.auto.conf`` and reload it; returns whether a
    setting can only take effect after a restart. Settings already in place change nothing."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        for name, value in tuning.items():
            conn.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(str(value)))
            )
        conn.execute("SELECT pg_reload_conf()")
        # pg_file_settings reads the file now: ``applied`` is false for a value the running server
        # cannot take without a restart.
        waiting = conn.execute(
            "SELECT count(*) FROM pg_file_settings "
            "WHERE name = ANY(%s) AND sourcefile LIKE '%%postgresql.auto.conf' AND NOT applied",
            [list(tuning)],
        ).fetchone()[0]
    return waiting > 0


def _ensure_database(admin_uri: str) -> None:
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if exists:
            return
        # Another process may create it between our check and our CREATE.
        with contextlib.suppress(errors.DuplicateDatabase):
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))


def database_url(tuning: dict | None = None) -> str:
    """A ``postgresql://`` URL for the embedded ``memorylane`` database, starting the cluster if needed
    (with ``tuning``: :func:`server`)."""
    info = server(tuning).get_postmaster_info()
    return f"postgresql://postgres@/{DATABASE_NAME}?host={quote(str(info.socket_dir))}&port={info.port}"


def stop() -> None:
    """Stop the cluster (``pg_ctl stop -m fast``), whoever started it."""
    from pgserver._commands import pg_ctl

    data_dir = pgdata()
    if not _is_running(data_dir):
        return
    user = "pgserver" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir, user=user)


def stop_if_started_here() -> None:
    """Stop the cluster if this process is the one that started it."""
    global _server
    if _server is not None and _started_here:
        stop()
        _server = None


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "url"
    if command in {"start", "url"}:
        print(database_url())
    elif command == "stop":
        stop()
    else:
        print("usage: python -m memorylane.embedded start|stop|url", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
