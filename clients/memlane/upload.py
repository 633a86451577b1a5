"""The transcript uploader: register the session, send its messages in batches (idempotent by
seq), and with ``end`` close it with its outcome. Runs detached from the hook that started it."""

from __future__ import annotations

import time
from pathlib import Path

from clients.memlane import client, state
from clients.memlane.config import project_slug
from clients.memlane.transcript import parse_claude_code


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
