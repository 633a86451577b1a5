"""The transcript uploader: register the session, send its messages in batches (idempotent by
seq), and with ``end`` close it with its outcome. Runs detached from the hook that started it.

An upload that finds the server unreachable is kept in ``state_dir/pending/`` and tried again
later (every SessionStart starts a detached ``memlane upload-pending`` when something waits), so a
transcript is not lost to a server that was down when the session ended. Uploads are idempotent,
so trying one again is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from pathlib import Path

from . import client, state
from .config import project_slug
from .transcript import parse_claude_code


def call(config: dict, method: str, path: str, body: dict):
    """One request with the uploader's timeout, retried while the server is unreachable."""
    attempts = int(config["upload_retries"]) + 1
    for attempt in range(attempts):
        try:
            return client.request(config, method, path, body=body, timeout=config["upload_timeout"])
        except client.Unavailable:
            if attempt == attempts - 1:
                raise
            time.sleep(2**attempt)


def upload_transcript(
    config: dict,
    *,
    session_id: str,
    transcript_path: str,
    cwd: str | None,
    agent: str = "claude-code",
    end: bool = False,
    reason: str = "",
) -> dict:
    """Upload one Claude Code transcript; returns a summary. Raises client errors."""
    from urllib.parse import quote

    transcript = parse_claude_code(transcript_path, cwd=cwd, max_chars=int(config["max_message_chars"]))
    messages = [message.as_json() for message in transcript.messages][: int(config["max_messages"])]
    metadata = {"cwd": cwd or "", "transcript_path": str(transcript_path)}
    if reason:
        metadata["end_reason"] = reason
    session = {"session_id": session_id, "agent": agent, "metadata": metadata}
    if project := project_slug(config, cwd):
        session["project"] = project
    call(config, "POST", "/api/v1/sessions", session)
    base = f"/api/v1/sessions/{quote(session_id, safe='')}"
    stored = already = 0
    size = max(1, int(config["batch_size"]))
    for start in range(0, len(messages), size):
        result = call(config, "POST", f"{base}/messages", {"messages": messages[start : start + size]})
        stored += int(result.get("stored", 0))
        already += int(result.get("already_stored", 0))
    summary = {
        "session_id": session_id,
        "messages": len(messages),
        "stored": stored,
        "already_stored": already,
    }
    if end:
        recorded = state.touched_files(config, session_id)
        outcome = transcript.outcome(recorded, max_files=int(config["max_files"]))
        ended = call(config, "POST", f"{base}/end", outcome)
        state.forget(config, session_id)
        summary.update(outcome=outcome, implicit_label=ended.get("implicit_label"))
    return summary


def log_line(config: dict, text: str) -> None:
    try:
        path = Path(config["state_dir"]) / "upload.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {text}\n")
    except OSError:
        pass


def _pending_dir(config: dict) -> Path:
    return Path(config["state_dir"]) / "pending"


def _pending_path(config: dict, session_id: str) -> Path:
    return _pending_dir(config) / f"{hashlib.sha256(session_id.encode()).hexdigest()[:32]}.json"


def keep_for_later(config: dict, request: dict) -> None:
    """Remember an upload that could not reach the server (an ending upload wins over a partial one)."""
    path = _pending_path(config, request["session_id"])
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("end") and not request.get("end"):
            return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**request, "kept_at": time.time()}))


def done_with(config: dict, session_id: str) -> None:
    with contextlib.suppress(OSError):
        _pending_path(config, session_id).unlink()


def has_pending(config: dict) -> bool:
    try:
        return any(_pending_dir(config).glob("*.json"))
    except OSError:
        return False


def upload_pending(config: dict) -> dict:
    """Try every kept upload once: uploaded ones are forgotten, unreachable ones kept, the rest
    (the transcript gone, the server refusing it, older than pending_max_age_days) given up."""
    counts = {"uploaded": 0, "kept": 0, "given_up": 0}
    max_age = float(config["pending_max_age_days"]) * 86400
    for path in sorted(_pending_dir(config).glob("*.json")):
        try:
            request = json.loads(path.read_text())
            kept_at = float(request.pop("kept_at", 0))
            session_id = request["session_id"]
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if time.time() - kept_at > max_age or not Path(request.get("transcript_path", "")).is_file():
            log_line(config, f"{session_id}: given up (too old or transcript gone)")
            path.unlink(missing_ok=True)
            counts["given_up"] += 1
            continue
        try:
            summary = upload_transcript({**config, "upload_retries": 0}, **request)
        except client.Unavailable:
            counts["kept"] += 1
            continue
        except Exception as error:  # noqa: BLE001 - refused by the server: retrying will not help
            log_line(config, f"{session_id}: given up: {error!r}")
            path.unlink(missing_ok=True)
            counts["given_up"] += 1
            continue
        log_line(config, f"{session_id}: uploaded later: {summary}")
        path.unlink(missing_ok=True)
        counts["uploaded"] += 1
    return counts
