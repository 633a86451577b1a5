"""Claude Code transcripts (the JSONL file at a hook's ``transcript_path``) → messages and outcome.

Each line is a JSON object with a ``type``. ``user`` lines hold the person's text (``message.content``
a string or text blocks) or tool results (``tool_result`` blocks with ``is_error``); ``assistant``
lines hold text, ``thinking`` and ``tool_use`` blocks. Every other type (``summary``, ``system``,
``file-history-snapshot``, ``progress``, anything new) is skipped, as are sub-agent (``isSidechain``)
and meta lines, and any line that is not valid JSON — typically the last one, cut off while Claude
Code was still writing it.

A message's ``seq`` is its line number, so re-reading a longer transcript later gives the same
seq to the same message and uploads stay idempotent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
TOOL_INPUT_CHARS = 300  # a tool call is kept as its name and a short summary of its input


@dataclass
class Message:
    seq: int
    role: str  # user | assistant | tool
    content: str
    created_at: str | None = None

    def as_json(self) -> dict:
        data = {"seq": self.seq, "role": self.role, "content": self.content}
        if self.created_at:
            data["created_at"] = self.created_at
        return data


@dataclass
class Transcript:
    messages: list[Message] = field(default_factory=list)
    error_count: int = 0
    retry_count: int = 0
    tool_uses: int = 0
    files_touched: list[str] = field(default_factory=list)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None
    last_tool_failed: bool = False
    skipped_lines: int = 0

    @property
    def duration_ms(self) -> int | None:
        if self.first_timestamp is None or self.last_timestamp is None:
            return None
        return max(0, int((self.last_timestamp - self.first_timestamp).total_seconds() * 1000))

    @property
    def success(self) -> bool | None:
        """A guess (Claude Code does not say): the session ended well unless its last tool call
        failed. None for a transcript without an assistant turn."""
        if not any(message.role == "assistant" for message in self.messages):
            return None
        return not self.last_tool_failed

    def outcome(self, extra_files: list[str] = (), max_files: int = 500) -> dict:
        files = list(dict.fromkeys([*self.files_touched, *extra_files]))[:max_files]
        return {
            "success": self.success,
            "duration_ms": self.duration_ms,
            "error_count": self.error_count,
            "retry_count": self.retry_count,
            "files_touched": files,
        }


def parse_timestamp(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def relative_path(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def block_text(content) -> str:
    """A tool result's or message's content: a string, or a list of blocks with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return ""


def tool_key(name: str, tool_input: dict) -> str:
    """What a retry repeats: the tool and its target (file or command), not its exact input."""
    target = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("command")
    if target is None:
        target = json.dumps(tool_input, sort_keys=True)[:TOOL_INPUT_CHARS]
    return f"{name}:{target}"


def describe_tool_use(name: str, tool_input: dict, cwd: str | None) -> str:
    target = tool_input.get("file_path") or tool_input.get("notebook_path")
    if isinstance(target, str):
        summary = relative_path(target, cwd)
    elif isinstance(tool_input.get("command"), str):
        summary = tool_input["command"]
    else:
        summary = json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
    if len(summary) > TOOL_INPUT_CHARS:
        summary = summary[:TOOL_INPUT_CHARS] + "…"
    return f"[tool: {name}] {summary}"


def parse_claude_code(path: str | Path, *, cwd: str | None = None, max_chars: int = 50000) -> Transcript:
    """Read a Claude Code transcript; never raises on content (a missing file raises OSError)."""
    transcript = Transcript()
    tool_keys: dict[str, str] = {}  # tool_use id → key
    failed: set[str] = set()  # keys whose last call failed: calling them again is a retry
    files: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for seq, line in enumerate(handle):
            line = line.strip()
            if not line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                transcript.skipped_lines += 1  # a truncated (usually the last) line
                continue
            if (
                not isinstance(entry, dict)
                or entry.get("type") not in ("user", "assistant")
                or entry.get("isSidechain")
                or entry.get("isMeta")
            ):
                transcript.skipped_lines += 1
                continue
            message = entry.get("message")
            if not isinstance(message, dict):
                transcript.skipped_lines += 1
                continue
            timestamp = parse_timestamp(entry.get("timestamp"))
            if timestamp is not None:
                if transcript.first_timestamp is None or timestamp < transcript.first_timestamp:
                    transcript.first_timestamp = timestamp
                if transcript.last_timestamp is None or timestamp > transcript.last_timestamp:
                    transcript.last_timestamp = timestamp
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            texts: list[str] = []
            errors: list[str] = []
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    texts.append(block["text"])
                elif kind == "tool_use" and entry["type"] == "assistant":
                    name = str(block.get("name") or "tool")
                    tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
                    transcript.tool_uses += 1
                    key = tool_key(name, tool_input)
                    if key in failed:
                        transcript.retry_count += 1
                        failed.discard(key)
                    if isinstance(block.get("id"), str):
                        tool_keys[block["id"]] = key
                    target = tool_input.get("file_path") or tool_input.get("notebook_path")
                    if name in EDIT_TOOLS and isinstance(target, str):
                        files.append(relative_path(target, cwd))
                    texts.append(describe_tool_use(name, tool_input, cwd))
                elif kind == "tool_result":
                    key = tool_keys.get(block.get("tool_use_id"))
                    if block.get("is_error"):
                        transcript.error_count += 1
                        transcript.last_tool_failed = True
                        if key:
                            failed.add(key)
                        errors.append("[tool error] " + block_text(block.get("content")).strip())
                    else:
                        transcript.last_tool_failed = False
                        if key:
                            failed.discard(key)
            if not texts and not errors:
                continue  # thinking only, successful tool results, images
            role = "assistant" if entry["type"] == "assistant" else "user" if texts else "tool"
            text = "\n".join([*texts, *errors])
            if len(text) > max_chars:
                text = text[: max_chars - 1] + "…"
            created_at = timestamp.isoformat() if timestamp else None
            transcript.messages.append(Message(seq=seq, role=role, content=text, created_at=created_at))
    transcript.files_touched = list(dict.fromkeys(files))
    return transcript
