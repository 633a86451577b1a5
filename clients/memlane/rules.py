"""A repository's written rules — ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``.claude/rules/**/*.md``,
the instruction files Claude Code loads for a project directory — split into rule-sized items.

An item is a top-level bullet (with its nested bullets and continuation lines) or a paragraph,
with the fenced code that follows it, prefixed with the heading it sits under ("Testing: run make
test, not bare pytest"). Left out: front matter (a rule's ``paths:``), headings on their own, HTML
comments, Claude Code's ``@path`` import lines, items shorter than RULE_MIN_CHARS, and Memory
Lane's own written-back block (a file whose first line is its marker, and the
``@.claude/team-memory.md`` import block).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from .automemory import split_front_matter

RULE_MIN_CHARS = 12  # shorter items ("TODO", "See below.") say nothing on their own
TOP_LEVEL_INDENT = 2  # a bullet indented less than this starts an item; deeper ones belong to it
ORIGIN_CLAUDE_MD = "claude-md"
ORIGIN_RULES = "claude-rules"

IMPORT_LINE = re.compile(r"\s*@[^\s@]\S*\s*")
HEADING = re.compile(r"(#{1,6})\s+(.*?)(?:\s+#+)?\s*")
BULLET = re.compile(r"([ \t]*)(?:[-*+]|\d{1,3}[.)])\s+(.*)")
CODE_FENCE = re.compile(r"\s*(```|~~~)")


@dataclass
class RuleItem:
    relative: str  # the file, relative to the repository root
    origin: str  # ORIGIN_CLAUDE_MD or ORIGIN_RULES
    file_sha256: str
    heading: str
    text: str

    @property
    def content(self) -> str:
        return f"{self.heading}: {self.text}" if self.heading else self.text

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content.encode()).hexdigest()


def rule_files(root: Path) -> list[tuple[Path, str]]:
    """The instruction files of ``root`` Claude Code loads, with their origin label."""
    found = [
        (path, ORIGIN_CLAUDE_MD)
        for path in (root / "CLAUDE.md", root / ".claude" / "CLAUDE.md")
        if path.is_file() and not path.is_symlink()
    ]
    rules = root / ".claude" / "rules"
    if rules.is_dir():
        for path in sorted(rules.rglob("*.md")):
            relative = path.relative_to(rules)
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                found.append((path, ORIGIN_RULES))
    return found


def _indent(line: str) -> int:
    leading = line[: len(line) - len(line.lstrip(" \t"))]
    return len(leading.expandtabs(4))


def split_rules(text: str) -> list[tuple[str, str]]:
    """(heading, text) items of a markdown file, in order."""
    _, body = split_front_matter(text)
    items: list[tuple[str, str]] = []
    heading = ""
    current: list[str] = []
    blank = in_comment = in_fence = False

    def flush() -> None:
        nonlocal current
        joined = "\n".join(current).strip()
        if len(joined) >= RULE_MIN_CHARS:
            items.append((heading, joined))
        current = []

    for line in body.splitlines():
        stripped = line.strip()
        if in_fence:
            current.append(line.rstrip())
            in_fence = CODE_FENCE.match(line) is None
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            continue
        if IMPORT_LINE.fullmatch(line):
            flush()
            continue
        if not stripped:
            blank = True
            continue
        if (match := HEADING.fullmatch(stripped)) and _indent(line) == 0:
            flush()
            heading, blank = match.group(2).strip(), False
            continue
        bullet = BULLET.fullmatch(line)
        if CODE_FENCE.match(line):  # code illustrates the item before it, even after a blank line
            current.append(line.rstrip())
            in_fence, blank = True, False
            continue
        if bullet and len(bullet.group(1).expandtabs(4)) < TOP_LEVEL_INDENT:
            flush()
            current, blank = [bullet.group(2).strip()], False
            continue
        if blank and (_indent(line) < TOP_LEVEL_INDENT or not current):
            flush()  # a new paragraph
        current.append(stripped)
        blank = False
    flush()
    return items


def read_rules(root: Path, *, marker_prefix: str) -> tuple[list[RuleItem], list[str]]:
    """The rule items of ``root``'s instruction files, and the files left out as Memory Lane's
    own (their first line is ``marker_prefix``...)."""
    items, ours = [], []
    for path, origin in rule_files(root):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        text = data.decode("utf-8", "replace")
        relative = path.relative_to(root).as_posix()
        if text.lstrip("\ufeff").startswith(marker_prefix):
            ours.append(relative)
            continue
        digest = hashlib.sha256(data).hexdigest()
        items += [RuleItem(relative, origin, digest, heading, body) for heading, body in split_rules(text)]
    return items, ours
