"""Local state (no network involved): files the PostToolUse hook saw being edited, and the agent
session running in each project directory (for the MCP bridge)."""

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


def _current_path(config: dict, cwd: str) -> Path:
    name = hashlib.sha256(str(Path(cwd).resolve()).encode()).hexdigest()[:32]
    return Path(config["state_dir"]) / "current" / name


def set_current_session(config: dict, cwd: str, session_id: str) -> None:
    """Remember the agent session now running in ``cwd`` (SessionStart), for the MCP bridge to tie
    its calls to it."""
    target = _current_path(config, cwd)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(session_id, encoding="utf-8")


def current_session(config: dict, cwd: str) -> str:
    """The session last started in ``cwd`` (empty when none)."""
    try:
        return _current_path(config, cwd).read_text(encoding="utf-8").strip()
    except OSError:
        return ""
