"""A throwaway database for a benchmark: created and migrated on the configured server, dropped after."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


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
