"""Local per-session state: files the PostToolUse hook saw being edited (no network involved)."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path


def _path(config: dict, session_id: str) -> Path:
    name = hashlib.sha256(session_id.encode()).hexdigest()[:32]
    return Path(config["state_dir"]) / "sessions" / f"{name}.files"


def record_file(config: dict, session_id: str, path: str) -> None:
    target = _path(config, session_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as handle:
        handle.write(path.replace("\n", " ") + "\n")


def touched_files(config: dict, session_id: str) -> list[str]:
    try:
        lines = _path(config, session_id).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return list(dict.fromkeys(line for line in lines if line))


def forget(config: dict, session_id: str) -> None:
    with contextlib.suppress(OSError):
        _path(config, session_id).unlink()
