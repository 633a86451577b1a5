"""The dev and frozen test splits of the labeled benchmarks (issue 43).

Each labeled benchmark has a dev split, which rules and thresholds are tuned on, and a test split that
was written first, by another hand and method, and is frozen: its checksum is recorded in
``bench/data/test_splits.md`` and checked before every run. A failure on the test split is answered
by a dev case of the same family, never by a rule written from the test case. The benches print both
splits side by side and list individual failures for dev only.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

DATA = Path(__file__).parent / "data"
RECORD = DATA / "test_splits.md"
SPLITS = {
    # The extraction dev split is two files by two hands (the second written in stop 48, unlike the first).
    "extraction": {
        "dev": (
            DATA / "extraction_sessions.txt",
            DATA / "extraction_sessions_dev2.txt",
            DATA / "extraction_sessions_dev3.txt",
            DATA / "extraction_sessions_dev4.txt",
        ),
        "test": DATA / "extraction_sessions_test.txt",
    },
    "injections": {"dev": DATA / "safety_injections.jsonl", "test": DATA / "safety_injections_test.jsonl"},
    "secrets": {"dev": DATA / "safety_secrets.jsonl", "test": DATA / "safety_secrets_test.jsonl"},
}


def recorded_checksum(path: Path) -> str:
    """The sha256 ``test_splits.md`` records for the frozen file ``path``."""
    found = re.search(rf"`{re.escape(path.name)}` `([0-9a-f]{{64}})`", RECORD.read_text())
    if not found:
        raise SystemExit(f"{RECORD} records no checksum for {path.name}")
    return found[1]


def checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def split_path(bench: str, split: str) -> Path | tuple[Path, ...]:
    """The file (or files) of ``split`` (dev or test) of ``bench``; a test split must be the frozen one."""
    path = SPLITS[bench][split]
    if split == "test" and checksum(path) != recorded_checksum(path):
        raise SystemExit(f"{path} is not the frozen test split (its checksum differs from {RECORD.name})")
    return path


def side_by_side(title: str, rows: list[tuple[str, object, object, str]]) -> str:
    """A table of (figure, dev, test, target) rows."""
    lines = [f"\n{title}: dev beside the frozen test split", f"{'':<34} {'dev':>12} {'test':>12}  target"]
    lines += [f"{name:<34} {dev!s:>12} {test!s:>12}  {target}" for name, dev, test, target in rows]
    return "\n".join(lines)
