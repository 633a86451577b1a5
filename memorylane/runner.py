"""``python -m memorylane.runner`` (what ``make run`` calls): the whole server in one command.

Starts (or attaches to) the database, migrates, makes sure an admin account exists, then runs
the ASGI web server, a Celery worker and Celery beat as child processes. Ctrl-C or SIGTERM stops
every child, then the embedded database if this process started it. If a child dies, the others
are stopped too and the runner exits non-zero, so a supervisor sees the failure.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request

STOP_TIMEOUT_SECONDS = 15


def ensure_admin(stdout=None) -> None:
    """Create the ``admin`` superuser when there is no superuser at all."""
    stdout = stdout or sys.stdout
    from django.contrib.auth import get_user_model

    User = get_user_model()
    if User.objects.filter(is_superuser=True).exists():
        return
    password = os.environ.get("MEMORYLANE_ADMIN_PASSWORD")
    generated = not password
    if generated:
        password = secrets.token_urlsafe(12)
    User.objects.create_superuser(username="admin", email="", password=password)
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
            "worker@%h",
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


def wait_until_healthy(url: str, children: dict[str, subprocess.Popen], stopping: threading.Event) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not stopping.is_set():
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own loopback URL
                if response.status == 200:
                    return
        except OSError:
            pass
        if any(child.poll() is not None for child in children.values()):
            return
        time.sleep(0.5)


def stop_children(children: dict[str, subprocess.Popen]) -> None:
    for child in children.values():
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from memorylane import embedded

    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    # Children must find the same data directory whatever their working directory.
    os.environ["MEMORYLANE_HOME"] = str(settings.MEMORYLANE_HOME)

    print("Memory Lane: migrating the database…", flush=True)
    call_command("migrate", interactive=False, verbosity=0)
    ensure_admin()

    stopping = threading.Event()
    children: dict[str, subprocess.Popen] = {}

    def request_stop(signum, frame) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    exit_code = 0
    try:
        for name, command in child_commands(host, port).items():
            # Their own process group: Ctrl-C reaches only us, and we stop them in order.
            children[name] = subprocess.Popen(command, start_new_session=True)
        base = f"http://{host if host not in ('0.0.0.0', '::') else '127.0.0.1'}:{port}"
        wait_until_healthy(f"{base}/api/v1/health", children, stopping)
        if not stopping.is_set() and all(child.poll() is None for child in children.values()):
            print(
                f"\n  Memory Lane is running at {base}/\n"
                f"  Dashboard: {base}/ (log in as 'admin')   Django admin: {base}/admin/\n"
                f"  API docs: {base}/api/docs/   Health: {base}/api/v1/health\n"
                "  Press Ctrl-C to stop.\n",
                flush=True,
            )
        while not stopping.is_set():
            dead = [name for name, child in children.items() if child.poll() is not None]
            if dead:
                print(
                    f"Memory Lane: {', '.join(dead)} exited; stopping the rest.", file=sys.stderr, flush=True
                )
                exit_code = 1
                break
            stopping.wait(0.5)
    finally:
        print("Memory Lane: stopping…", flush=True)
        stop_children(children)
        from django.db import connections

        connections.close_all()
        embedded.stop_if_started_here()
        print("Memory Lane: stopped.", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
