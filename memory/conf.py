"""Read the rule book's numbers: ``setting("RRF_K")`` is ``settings.MEMORY_LANE["RRF_K"]``."""

from __future__ import annotations

from typing import Any

from django.conf import settings


def setting(name: str) -> Any:
    return settings.MEMORY_LANE[name]
