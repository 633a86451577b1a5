"""``memlane hook <event>``: Claude Code hooks, reading the hook's JSON payload on stdin.

Every hook fails open: whatever goes wrong (server down, slow or erroring, a payload it does not
understand) it exits 0 and prints nothing, within ``timeout`` seconds, so a session is never
blocked or broken. Output follows the Claude Code hooks reference: SessionStart and
UserPromptSubmit print ``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``;
the others print nothing. SessionEnd and PreCompact hand the transcript to a detached uploader
and return at once (SessionEnd hooks get 1.5 s in all). Detached the same way, SessionEnd starts
``memlane harvest`` (the Auto Memory notes) and SessionStart ``memlane write-back`` (the team
block in ``.claude/rules/``), so neither costs the session any time.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from . import MODULE
from .config import project_slug
from .transcript import EDIT_TOOLS, relative_path

EVENTS = {
    "sessionstart": "SessionStart",
    "userpromptsubmit": "UserPromptSubmit",
    "posttooluse": "PostToolUse",
    "stop": "Stop",
    "precompact": "PreCompact",
    "sessionend": "SessionEnd",
}


class OutOfTime(Exception):
    pass


def normalize(event: str) -> str | None:
    return EVENTS.get(event.replace("-", "").replace("_", "").lower())


def run(event: str, config: dict, stdin=None) -> int:
    """Handle one hook event; always returns 0."""
    output = None
    previous = None
    try:
        if hasattr(signal, "setitimer"):  # a hard deadline, DNS and slow bodies included
            previous = signal.signal(signal.SIGALRM, _out_of_time)
            signal.setitimer(signal.ITIMER_REAL, max(0.05, float(config["timeout"])))
        raw = (stdin or sys.stdin).read()
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            payload = {}
        name = normalize(event) or normalize(str(payload.get("hook_event_name", ""))) or ""
        handler = HANDLERS.get(name)
        if handler is not None:
            output = handler(payload, config)
    except BaseException:  # noqa: BLE001 - fail open: the agent's session matters more than ours
        output = None
    finally:
        if previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if output:
        sys.stdout.write(json.dumps(output))
        sys.stdout.flush()
    return 0


def _out_of_time(signum, frame):
    raise OutOfTime()


def _context(config: dict, payload: dict, *, query: str | None, budget: int, fresh: bool = False) -> str:
    from . import client

    return client.request(
        config,
        "GET",
        "/api/v1/context",
        query={
            "session_id": payload.get("session_id"),
            "project": project_slug(config, payload.get("cwd")),
            "q": query,
            "budget_tokens": budget,
            "format": "markdown",
            "fresh": "true" if fresh else None,
        },
        raw=True,
    )


def cap(markdown: str, limit: int) -> str:
    """Cut a context block to ``limit`` characters on a line boundary, keeping its closing tag."""
    if len(markdown) <= limit:
        return markdown
    lines = markdown.splitlines()
    closing = lines.pop() if lines and lines[-1].startswith("</") else ""
    kept, size = [], len(closing) + 1
    for line in lines:
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join([*kept, closing]) if closing else "\n".join(kept)


def additional_context(event: str, text: str) -> dict | None:
    if not text.strip():
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


RESET_SOURCES = ("compact", "clear")


def session_start(payload: dict, config: dict) -> dict | None:
    from . import state, upload

    if upload.has_pending(config):  # transcripts that found the server down: try them again
        with contextlib.suppress(OSError):  # the context matters more than this retry
            _spawn(["upload-pending"], config)
    if isinstance(payload.get("session_id"), str) and payload["session_id"]:
        with contextlib.suppress(OSError):  # for the MCP bridge: tool calls belong to this session
            state.set_current_session(config, str(payload.get("cwd") or os.getcwd()), payload["session_id"])
    with contextlib.suppress(OSError):  # the team block, refreshed beside the session, never in its way
        spawn_write_back(payload, config)
    # After /compact or /clear the history that held the earlier context is gone: all of it again.
    fresh = payload.get("source") in RESET_SOURCES
    markdown = _context(config, payload, query=None, budget=int(config["context_budget_tokens"]), fresh=fresh)
    return additional_context("SessionStart", cap(markdown, int(config["context_max_chars"])))


def user_prompt_submit(payload: dict, config: dict) -> dict | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or len(prompt.strip()) < int(config["prompt_min_chars"]):
        return None
    # The context endpoint leaves out what this session was already shown, so only new recalls come.
    markdown = _context(config, payload, query=prompt[:2000], budget=int(config["prompt_budget_tokens"]))
    return additional_context("UserPromptSubmit", cap(markdown, int(config["context_max_chars"])))


def post_tool_use(payload: dict, config: dict) -> None:
    from . import state

    tool_input = payload.get("tool_input")
    session_id = payload.get("session_id")
    if payload.get("tool_name") not in EDIT_TOOLS or not isinstance(tool_input, dict) or not session_id:
        return None
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    if isinstance(path, str) and path:
        state.record_file(config, str(session_id), relative_path(path, payload.get("cwd")))
    return None


def stop(payload: dict, config: dict) -> None:
    return None  # nothing to add at the end of a turn; the transcript goes up at SessionEnd


def spawn_uploader(payload: dict, config: dict, *, end: bool) -> None:
    session_id, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session_id, str) or not isinstance(transcript, str) or not session_id or not transcript:
        return None
    arguments = ["upload-transcript", "--session-id", session_id, "--transcript", transcript]
    arguments += ["--agent", "claude-code"]
    if isinstance(payload.get("cwd"), str):
        arguments += ["--cwd", payload["cwd"]]
    if end:
        arguments += ["--end", "--reason", str(payload.get("reason") or "")]
    _spawn(arguments, config)
    return None


def _spawn(arguments: list[str], config: dict) -> None:
    """Start ``memlane <arguments>`` detached and return at once."""
    command = [sys.executable, "-m", MODULE, *arguments]
    workdir = Path(config["state_dir"])
    workdir.mkdir(parents=True, exist_ok=True)
    # Detached: its own session (a closing terminal or Claude Code's exit does not stop it), no
    # inherited pipes (Claude Code waits for our stdout to close), and our state directory as its
    # working directory (so a project's own `clients/` folder cannot shadow this package).
    subprocess.Popen(
        command,
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env={**os.environ, "MEMLANE_DETACHED": "1"},
    )


def spawn_write_back(payload: dict, config: dict) -> None:
    """``memlane write-back`` detached, for a session in a git repository (clients/memlane/writeback.py)."""
    from .writeback import target

    cwd = payload.get("cwd")
    if int(config["write_back"]) and isinstance(cwd, str) and cwd and target(cwd) is not None:
        _spawn(["write-back", "--cwd", cwd], config)


def spawn_harvest(payload: dict, config: dict) -> None:
    """``memlane harvest`` detached, when the project has an Auto Memory folder (clients/memlane/harvest.py)."""
    from .automemory import memory_folder

    cwd = payload.get("cwd")
    if not int(config["harvest_on_session_end"]) or not isinstance(cwd, str) or not cwd:
        return
    if Path(cwd).is_dir() and memory_folder(cwd).path.is_dir():
        _spawn(["harvest", "--cwd", cwd], config)


def pre_compact(payload: dict, config: dict) -> None:
    return spawn_uploader(payload, config, end=False)


def session_end(payload: dict, config: dict) -> None:
    spawn_uploader(payload, config, end=True)
    spawn_harvest(payload, config)
    return None


HANDLERS = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PostToolUse": post_tool_use,
    "Stop": stop,
    "PreCompact": pre_compact,
    "SessionEnd": session_end,
}
