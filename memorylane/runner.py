"""``python -m memorylane.runner`` (what ``make run`` calls): the whole server in one command.

Starts (or attaches to) the database, migrates, makes sure an admin account exists, then runs
the ASGI web server, a Celery worker and Celery beat as child processes, and supervises them: a part
that dies — the embedded PostgreSQL included — is restarted with backoff while the others keep
serving (the decisions are in memorylane/supervision.py; this module applies them). A crash loop is
given up after a bounded number of tries: on the web server or the database, everything stops and
the runner exits 1; on the worker or beat, the web server keeps serving, health says ``degraded``,
and ``kill -HUP <runner pid>`` tries again. Ctrl-C or SIGTERM — however many arrive — stops the web
server, beat, the worker, then the embedded database, in that order.

``MEMORYLANE_PROCESSES`` (default ``web,worker,beat``) picks the parts to run: a second host of a
scale-out runs ``web,worker`` (beat runs once per deployment).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from memorylane import supervision
from memorylane.supervision import BACKOFF, GAVE_UP, RUNNING, STOPPED, PartState

PROCESSES = ("web", "worker", "beat")


def ensure_admin(stdout=None) -> None:
    """Create the ``admin`` superuser when there is no superuser at all, as the owner of the team
    ``default`` (created when missing, DESIGN.md §11)."""
    stdout = stdout or sys.stdout
    from django.contrib.auth import get_user_model

    from memory.models import TeamRole
    from memory.services.teams import member_add, team_default

    User = get_user_model()
    if User.objects.filter(is_superuser=True).exists():
        if not User.objects.filter(memberships__isnull=False).exists():
            # An upgrade of an empty-but-for-admin home: the admin owns the default team.
            admin = User.objects.filter(is_superuser=True).order_by("pk").first()
            member_add(team=team_default(), user=admin, role=TeamRole.OWNER)
        return
    password = os.environ.get("MEMORYLANE_ADMIN_PASSWORD")
    generated = not password
    if generated:
        password = secrets.token_urlsafe(12)
    admin = User.objects.create_superuser(username="admin", email="", password=password)
    member_add(team=team_default(), user=admin, role=TeamRole.OWNER)
    if generated:
        print(
            "\n  Created the superuser 'admin' with the password (shown once, change it in the dashboard):\n"
            f"\n      {password}\n",
            file=stdout,
        )
    else:
        print("  Created the superuser 'admin' with MEMORYLANE_ADMIN_PASSWORD.", file=stdout)


def child_commands(host: str, port: str) -> dict[str, list[str]]:
    from django.conf import settings

    python = sys.executable
    concurrency = os.environ.get("MEMORYLANE_WORKER_CONCURRENCY", "1")
    return {
        "web": [
            python,
            "-m",
            "uvicorn",
            "memorylane.asgi:application",
            "--host",
            host,
            "--port",
            port,
            "--lifespan",
            "off",
            "--no-access-log",
        ],
        "worker": [
            python,
            "-m",
            "celery",
            "-A",
            "memorylane",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            concurrency,
            "--hostname",
            f"worker@{settings.MEMORYLANE_HOST}",
        ],
        "beat": [
            python,
            "-m",
            "celery",
            "-A",
            "memorylane",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            settings.CELERY_BEAT_SCHEDULE_FILENAME,
        ],
    }


class Flags:
    """Set by signal handlers and read by the loop. A handler does nothing but assign here: no lock,
    no Event.set() (not re-entrant: a second SIGTERM inside the first handler deadlocked)."""

    stop = False
    retry = False


FLAGS = Flags()


def _request_stop(signum, frame) -> None:
    FLAGS.stop = True


def _request_retry(signum, frame) -> None:
    FLAGS.retry = True


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Children get SIGTERM if the runner itself is killed (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def selected_processes(value: str | None) -> list[str]:
    """``MEMORYLANE_PROCESSES`` → the parts to run, in start order; unknown names are an error."""
    if not value or not value.strip():
        return list(PROCESSES)
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = sorted(set(names) - set(PROCESSES))
    if unknown:
        raise SystemExit(
            f"MEMORYLANE_PROCESSES: unknown part(s) {', '.join(unknown)}; use {','.join(PROCESSES)}"
        )
    return [name for name in PROCESSES if name in names]


def log(message: str) -> None:
    print(f"Memory Lane: {message}", file=sys.stderr, flush=True)


class Supervisor:
    """Applies supervision's decisions: owns the child processes, the database restarts and
    ``supervisor.json``."""

    def __init__(
        self,
        *,
        commands: dict[str, list[str]],
        env: dict[str, str],
        home: Path,
        conf: dict,
        embedded_database: bool,
    ) -> None:
        self.commands = commands
        self.env = env
        self.home = home
        self.conf = conf
        self.policy = supervision.Policy.from_settings(conf)
        self.processes: dict[str, subprocess.Popen] = {}
        self.states: dict[str, PartState] = {}
        if embedded_database:
            from memorylane import embedded

            lines = embedded.postmaster_lines()
            self.states["database"] = PartState(
                "database",
                status=RUNNING,
                started_at=time.monotonic(),
                pid=int(lines[0]) if lines and lines[0].strip().isdigit() else None,
            )
        for name in commands:
            self.states[name] = PartState(name)
        self.report_path = home / "supervisor.json"
        self._last_report = 0.0
        self.exit_code = 0

    # --- applying decisions -----------------------------------------------------------------

    def start(self, name: str) -> None:
        state = self.states[name]
        now = time.monotonic()
        if name == "database":
            from memorylane import embedded

            try:
                embedded.restart_after_crash()
            except Exception as exc:  # noqa: BLE001 - a failed start is one more failure to decide on
                state.started_at = now
                self.died(name, f"failed to start: {exc.__class__.__name__}: {exc}"[:300], uptime=0.0)
                return
            lines = embedded.postmaster_lines()
            state.pid = int(lines[0]) if lines and lines[0].strip().isdigit() else None
        else:
            process = subprocess.Popen(
                self.commands[name],
                env=self.env,
                # Their own process group: Ctrl-C reaches only us, and we stop them in order.
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no locks
            )
            self.processes[name] = process
            state.pid = process.pid
        state.status, state.started_at, state.restart_at = RUNNING, now, None
        self.write_report(force=True)

    def died(self, name: str, exit: str, *, uptime: float) -> None:
        state = self.states[name]
        decision = supervision.decide_after_exit(state, uptime=uptime, exit=exit, policy=self.policy)
        state.last_exit, state.quick_failures, state.pid = exit, decision.quick_failures, None
        if decision.action == supervision.RESTART:
            state.status, state.restart_at = BACKOFF, time.monotonic() + decision.delay
            log(decision.message)
        else:
            state.status, state.restart_at = GAVE_UP, None
            log(decision.message)
            if decision.consequence == supervision.STOP_ALL:
                FLAGS.stop = True
                self.exit_code = 1
        self.write_report(force=True)

    def check(self) -> None:
        """Look at every part once: notice deaths, start what is due."""
        now = time.monotonic()
        for name, state in self.states.items():
            if FLAGS.stop:
                return
            if state.status == RUNNING:
                exit = self._exit_of(name)
                if exit is not None:
                    self.died(name, exit, uptime=now - (state.started_at or now))
            elif state.status == BACKOFF and state.restart_at is not None and now >= state.restart_at:
                state.restarts += 1
                log(f"restarting {name} (restart {state.restarts})")
                self.start(name)

    def _exit_of(self, name: str) -> str | None:
        if name == "database":
            from memorylane import embedded

            return None if embedded.postmaster_alive() else "the postmaster is gone"
        process = self.processes[name]
        code = process.poll()
        if code is None:
            return None
        self._end_group(process)  # a killed worker's pool children must not outlive it
        return supervision.exit_description(code)

    @staticmethod
    def _end_group(process: subprocess.Popen) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def retry(self) -> None:
        names = supervision.retry_given_up(self.states)
        for name in names:
            state = self.states[name]
            state.quick_failures, state.status, state.restart_at = 0, BACKOFF, time.monotonic()
            log(f"SIGHUP: trying {name} again")
        self.write_report(force=True)

    def stop(self) -> None:
        timeout = float(self.conf["RUNNER_STOP_TIMEOUT_SECONDS"])
        for name in supervision.stop_sequence(self.states):
            state = self.states[name]
            if name == "database":
                continue  # stopped by main(), after the connections are closed
            process = self.processes.get(name)
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    log(f"{name} did not stop within {timeout:g} s; killing it")
                    process.kill()
                    process.wait()
            if process is not None:
                self._end_group(process)
            state.status, state.pid = STOPPED, None
            self.write_report(force=True, stopping=True)

    def write_report(self, *, force: bool = False, stopping: bool = False, stopped: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_report < 5:
            return
        self._last_report = now
        from django.conf import settings

        report = supervision.Report.of(
            pid=os.getpid(),
            host=settings.MEMORYLANE_HOST,
            states=self.states,
            stopping=stopping or FLAGS.stop,
        ).as_dict()
        if stopped:
            report["status"] = "stopped"
        report["updated_at"] = time.time()
        temporary = self.report_path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(report, indent=1))
        os.replace(temporary, self.report_path)  # health never reads half a file


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310 - our own loopback URL
            return response.status == 200
    except OSError:
        return False


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from memorylane import embedded

    FLAGS.stop = FLAGS.retry = False
    signal.signal(signal.SIGINT, _request_stop)
    signal.signal(signal.SIGTERM, _request_stop)
    signal.signal(signal.SIGHUP, _request_retry)

    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    parts = selected_processes(os.environ.get("MEMORYLANE_PROCESSES"))
    # Children must find the same data directory whatever their working directory.
    os.environ["MEMORYLANE_HOME"] = str(settings.MEMORYLANE_HOME)
    env = dict(os.environ)
    # The web process serves Django on a fixed pool of threads (memorylane/asgi.py), so a connection
    # each thread keeps is reused: opening one per request cost the database more than the queries.
    env.setdefault("DATABASE_CONN_MAX_AGE", str(settings.MEMORY_LANE["RUNNER_CONN_MAX_AGE_SECONDS"]))
    env.setdefault("WEB_CONCURRENCY", str(settings.MEMORY_LANE["RUNNER_WEB_PROCESSES"]))  # uvicorn reads it
    embedded_database = not os.environ.get("DATABASE_URL")
    if embedded_database:
        # The children attach to the cluster by URL and never start one themselves: restarting it after
        # a crash is the runner's job alone.
        env["DATABASE_URL"] = embedded.database_url()

    print("Memory Lane: migrating the database…", flush=True)
    call_command("migrate", interactive=False, verbosity=0)
    ensure_admin()
    from django.db import connections

    connections.close_all()

    commands = {name: command for name, command in child_commands(host, port).items() if name in parts}
    supervisor = Supervisor(
        commands=commands,
        env=env,
        home=Path(settings.MEMORYLANE_HOME),
        conf=settings.MEMORY_LANE,
        embedded_database=embedded_database,
    )
    poll = float(settings.MEMORY_LANE["RUNNER_POLL_SECONDS"])
    base = f"http://{host if host not in ('0.0.0.0', '::') else '127.0.0.1'}:{port}"
    announced = "web" not in commands
    try:
        for name in commands:
            if not FLAGS.stop:
                supervisor.start(name)
        while not FLAGS.stop:
            if FLAGS.retry:
                FLAGS.retry = False
                supervisor.retry()
            supervisor.check()
            if (
                not announced
                and supervisor.states["web"].status == RUNNING
                and healthy(f"{base}/api/v1/health")
            ):
                announced = True
                print(
                    f"\n  Memory Lane is running at {base}/\n"
                    f"  Dashboard: {base}/ (log in as 'admin')   Django admin: {base}/admin/\n"
                    f"  API docs: {base}/api/docs/   Health: {base}/api/v1/health\n"
                    f"  Press Ctrl-C to stop (runner pid {os.getpid()}).\n",
                    flush=True,
                )
            supervisor.write_report()
            time.sleep(poll)
    finally:
        print("Memory Lane: stopping…", flush=True)
        supervisor.stop()
        connections.close_all()
        if embedded_database and embedded.postmaster_alive():
            embedded.stop_if_started_here()
        if "database" in supervisor.states:
            supervisor.states["database"].status = STOPPED
        supervisor.write_report(force=True, stopped=True)
        print("Memory Lane: stopped.", flush=True)
    return supervisor.exit_code


if __name__ == "__main__":
    sys.exit(main())
