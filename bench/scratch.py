"""Resources for a benchmark: a throwaway database created and migrated on the configured server
and dropped after, a kept one that later runs reuse, and a free port."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def scratch_database(prefix: str) -> Iterator[None]:
    """Point Django's connection at a new ``<prefix>_<pid>`` database for the ``with`` block
    (Django must be set up)."""
    from django.conf import settings
    from django.db import connection

    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = f"{prefix}_{os.getpid()}"
    original_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(original_name, verbosity=0)


@contextlib.contextmanager
def kept_database(name: str):
    """Point Django at database ``name`` on the configured server, created when missing, migrated to
    this code's schema (a database kept from an older build gets its new migrations), never
    dropped."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        exists = cursor.fetchone() is not None
        if not exists:
            cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    settings.DATABASES["default"]["NAME"] = name
    connection.settings_dict["NAME"] = name
    call_command("migrate", interactive=False, verbosity=0)
    yield
