"""The team's curated block (the server's MEMORY.md export), written where Claude Code loads it.

The pinned Claude Code (2.1.330) loads every ``*.md`` under ``.claude/rules/`` of the working
directory and its parents, subfolders included, at session start, with no import line and no
setting; a rule file without ``paths:`` front matter applies to every session (in its bundled
code: the project entries carry ``rulesDir: <dir>/.claude/rules`` beside ``CLAUDE.md`` and
``.claude/CLAUDE.md``, read by ``LBe``; conditional rules are those with globs). So the block goes
to ``.claude/rules/memory-lane-team.md`` of the repository (the git working tree's root).

Its size stays within Claude Code's own budget for an instruction file: above
``max(40,000, 5% of the context window × 3–4 chars a token)`` characters it warns "Large … will
impact performance" (``b_t``: ``c8r=40000``, ``u8r=0.05``), and all of them together above
120,000 (``f8r``). ``write_back_max_chars`` (default 40,000, the floor) caps it, cut on a line.

A file there is rewritten only when its first line is ``MARKER``: a file of the user's at that
path is never touched (one line on stderr says so). Only a change is written, atomically.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from .automemory import git_root

RULES_FILE = ".claude/rules/memory-lane-team.md"
MARKER_PREFIX = "<!-- memory-lane:team-memory"
MARKER = (
    f"{MARKER_PREFIX} · written by memlane from the team's Memory Lane at each session start; edits"
    " here are replaced. Delete this line to keep the file as your own. -->"
)
PLACEHOLDER = "# Team memory\n\n(Not exported yet: the next Claude Code session start writes it.)\n"


def target(cwd: str | os.PathLike | None) -> Path | None:
    """Where the block goes for a session in ``cwd``: the git root's rules folder, or None
    outside a repository (nothing is written into a home directory or a random folder)."""
    here = Path(cwd or os.getcwd())
    if not here.is_dir():
        return None
    root = git_root(here)
    return root / RULES_FILE if root is not None else None


def is_ours(path: Path) -> bool:
    """True when ``path`` is missing or carries our marker on its first line (and is no link)."""
    if path.is_symlink():
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return first.lstrip("\ufeff").startswith(MARKER_PREFIX)


def render(markdown: str, max_chars: int) -> str:
    """The file: the marker (always: it is what lets the next run rewrite the file), then the
    export, cut on a line boundary to ``max_chars`` in all."""
    kept, size = [MARKER], len(MARKER) + 1
    for line in markdown.rstrip("\n").splitlines():
        if size + len(line) + 1 > max_chars:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept) + "\n"


def _left_alone(path: Path) -> str:
    return f"{path} is not Memory Lane's (no marker on its first line); left it alone."


def write(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it is a user's file or already says that; True if written."""
    if not is_ours(path):
        print(f"memlane: {_left_alone(path)}", file=sys.stderr)
        return False
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return False
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".memory-lane-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        if not is_ours(path):  # a user wrote their own file meanwhile: theirs wins
            return False
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return True


def write_team_block(config: dict, root: Path, *, timeout: float | None = None) -> str:
    """Fetch the team's block for the project at ``root`` and write it to ``root``'s rules folder;
    returns what happened, in words. Raises client.Unavailable / client.ApiError (the file is then
    left as it was)."""
    from . import client
    from .config import project_slug

    path = root / RULES_FILE
    if not is_ours(path):  # before asking the server anything
        return _left_alone(path)
    project = project_slug(config, str(root))
    markdown = client.request(
        config, "GET", "/api/v1/export", query={"project": project or None}, raw=True, timeout=timeout
    )
    written = write(path, render(markdown, int(config["write_back_max_chars"])))
    return f"{'wrote' if written else 'unchanged'} {path}"


def write_back(config: dict, cwd: str | os.PathLike | None, *, timeout: float | None = None) -> str:
    """The team block for a session in ``cwd``, written at its repository's root (see
    ``write_team_block``); nothing outside a git repository."""
    path = target(cwd)
    if path is None:
        return "not in a git repository: nothing written"
    return write_team_block(config, path.parents[2], timeout=timeout)


def ensure_placeholder(path: Path) -> bool:
    """Write the placeholder where nothing is yet (e.g. ``memlane install`` with the server down)."""
    if path.exists() or path.is_symlink():
        return False
    return write(path, f"{MARKER}\n{PLACEHOLDER}")
