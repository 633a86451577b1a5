"""Read the rule book's numbers: ``setting("RRF_K")`` is ``settings.MEMORY_LANE["RRF_K"]``.

The dictionary is looked up once and kept (a search reads ~650 settings: through Django's lazy
settings object each read cost more than the value's use), and looked up again when the setting
is overridden (``override_settings``, pytest-django's ``settings`` fixture), as DRF does for its
own settings."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

_values: dict | None = None


def setting(name: str) -> Any:
    global _values
    if _values is None:
        _values = settings.MEMORY_LANE
    return _values[name]


@receiver(setting_changed)
def _reload(**kwargs) -> None:
    global _values
    if kwargs["setting"] == "MEMORY_LANE":
        _values = None
