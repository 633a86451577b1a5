"""Throwaway resources for a benchmark: a database created and migrated on the configured server
and dropped after, and a free port."""

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
