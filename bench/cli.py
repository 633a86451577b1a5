"""What the benchmarks' command lines share: ``--set KEY=JSON`` overrides of MEMORY_LANE settings."""

from __future__ import annotations

import argparse
import json


def parse_setting(parser: argparse.ArgumentParser, item: str) -> tuple[str, list]:
    """``KEY=JSON`` or ``KEY=JSON;JSON…`` → (key, values). A key MEMORY_LANE does not have is an error,
    not a silent no-op. Call after ``django.setup()``."""
    from django.conf import settings

    key, _, raw = item.partition("=")
    if not key or not raw:
        parser.error(f"expected KEY=JSON, got {item!r}")
    if key not in settings.MEMORY_LANE:
        parser.error(f"{key!r} is not a MEMORY_LANE setting")
    try:
        return key, [json.loads(part) for part in raw.split(";")]
    except json.JSONDecodeError as exc:
        parser.error(f"{item!r}: {exc}")


def apply_settings(parser: argparse.ArgumentParser, items: list[str]) -> None:
    """Apply each ``--set KEY=JSON`` (one value each) to MEMORY_LANE."""
    from django.conf import settings

    for item in items:
        key, values = parse_setting(parser, item)
        if len(values) != 1:
            parser.error(f"{item!r}: --set takes one value")
        settings.MEMORY_LANE[key] = values[0]
