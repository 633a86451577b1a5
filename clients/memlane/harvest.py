"""``memlane harvest`` and ``memlane import-rules``: what the user's agent already knows, uploaded
to the team as candidates through the normal store API (``POST /api/v1/observations``), so
redaction, the injection screen and the upsert apply: the same note from three teammates
reinforces one memory, a secret is stored redacted, an injection is quarantined.

Each item goes up with ``source: "import"`` and its file as ``provenance`` (``origin``, the path
relative to the folder it was read from, the file's SHA-256), about the project (``entities``:
the project's slug, as the hooks use it), with ``agent_name`` ``claude-code``.

Auto Memory note types (clients/memlane/automemory.py says where they come from) map to:

============  =================  ============  ==================================================
note type     memory type        category      why
============  =================  ============  ==================================================
feedback      correction         convention    the user's guidance on how to work: what to avoid
                                               and what to keep doing
project       decision           workflow      who does what, why and by when; the motivation
                                               behind the work
reference     workflow_note      workflow      where to look in external systems
user          insight            workflow      the user's own role and preferences: personal,
                                               uploaded only with ``--include-personal``
(none)        (server default)   (default)     no readable type (none given, an unknown one, or
                                               front matter that does not parse): it might be
                                               personal, so only with ``--include-personal``
============  =================  ============  ==================================================

Written rules (``CLAUDE.md``, ``.claude/rules/*.md``; clients/memlane/rules.py) go up as
``decision`` / ``convention``, one item per bullet or paragraph, for a curator to review.

Idempotent: the client keeps, per server, token and folder, the hashes of what it uploaded
(``state_dir/imports/``); an unchanged file (a rule item) is not sent again, a changed one is
(and the upsert decides: reinforce, update or add). A refused item is remembered too (the same
bytes would be refused again); one the server could not take (down, throttled) is not.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import client
from .automemory import Note, memory_folder, notes
from .config import project_slug

ORIGIN_AUTO_MEMORY = "claude-code-auto-memory"
STATE_RULES = "rules"  # the state of import-rules, beside each origin's own
AGENT_NAME = "claude-code"
SOURCE = "import"
NOTE_MAPPING = {
    "feedback": {"type": "correction", "category": "convention"},
    "project": {"type": "decision", "category": "workflow"},
    "reference": {"type": "workflow_note", "category": "workflow"},
    "user": {"type": "insight", "category": "workflow"},
}
PERSONAL_TYPES = ("user",)
RULE_MAPPING = {"type": "decision", "category": "convention"}
TAG_AUTO_MEMORY = "auto-memory"
PREVIEW_CHARS = 80
STOP_STATUSES = (401, 403, 429)  # the token or the rate is the problem: stop, keep nothing


@dataclass
class Summary:
    folder: str
    found: int = 0
    uploaded: int = 0
    added: int = 0
    reinforced: int = 0
    updated: int = 0
    proposed: int = 0
    quarantined: int = 0
    refused: int = 0
    skipped_personal: int = 0
    skipped_untyped: int = 0
    skipped_unchanged: int = 0
    skipped_empty: int = 0
    dry_run: bool = False
    details: list[str] = field(default_factory=list)

    def count(self, operation: str, status: str) -> None:
        self.uploaded += 1
        key = {"ADD": "added", "NOOP": "reinforced", "UPDATE": "updated", "PROPOSED": "proposed"}.get(
            operation
        )
        if key:
            setattr(self, key, getattr(self, key) + 1)
        if status == "quarantined":
            self.quarantined += 1

    def as_json(self) -> dict:
        return dict(self.__dict__)

    def lines(self, what: str) -> list[str]:
        verb = "would upload" if self.dry_run else "uploaded"
        head = f"{what} in {self.folder}: found {self.found}, {verb} {self.uploaded}"
        if not self.dry_run:
            head += (
                f" (added {self.added}, reinforced {self.reinforced}, updated {self.updated},"
                f" proposed {self.proposed}; {self.quarantined} held for review), refused {self.refused}"
            )
        skipped = [
            f"{n} {label}"
            for n, label in (
                (self.skipped_personal, "personal"),
                (self.skipped_untyped, "without a type"),
                (self.skipped_unchanged, "unchanged"),
                (self.skipped_empty, "empty"),
            )
            if n
        ]
        return [head + (f"; skipped {', '.join(skipped)}" if skipped else "") + ".", *self.details]


# --- client-side state: what was uploaded ------------------------------------------------------


class Uploaded:
    """The hashes uploaded from one folder to one server with one token: ``{path: [sha256, ...]}``."""

    def __init__(self, config: dict, origin: str, folder: Path) -> None:
        key = "\0".join([config["url"], config.get("token") or "", origin, str(folder)])
        name = hashlib.sha256(key.encode()).hexdigest()[:32]
        self.path = Path(config["state_dir"]) / "imports" / f"{name}.json"
        self.folder = str(folder)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            files = data.get("files") if isinstance(data, dict) else None
        except (OSError, ValueError):
            files = None
        self.before: dict[str, list[str]] = files if isinstance(files, dict) else {}
        self.after: dict[str, list[str]] = {}

    def seen(self, relative: str, digest: str) -> bool:
        return digest in (self.before.get(relative) or [])

    def keep(self, relative: str, digest: str) -> None:
        self.after.setdefault(relative, [])
        if digest not in self.after[relative]:
            self.after[relative].append(digest)

    def save(self, *, complete: bool) -> None:
        """Write what this run uploaded or saw unchanged; after a ``complete`` run, files gone
        since are forgotten, after an interrupted one the earlier record is kept beside it."""
        files = self.after if complete else {**self.before, **self.after}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"folder": self.folder, "files": files}, out, indent=1, sort_keys=True)
            os.replace(temporary, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


# --- uploading ---------------------------------------------------------------------------------


def _store(config: dict, body: dict, summary: Summary, label: str) -> None:
    """POST one candidate and count the answer, stored or refused. An unreachable server, a
    refused token or throttling raises (client.Unavailable, client.ApiError)."""
    try:
        result = client.request(
            config, "POST", "/api/v1/observations", body=body, timeout=config["upload_timeout"]
        )
    except client.ApiError as error:
        if error.status in STOP_STATUSES:
            raise
        summary.refused += 1
        summary.details.append(f"  refused {label}: {error.describe().splitlines()[0]}")
        return
    memory = result.get("memory") or {}
    summary.count(str(result.get("operation")), str(memory.get("status")))


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def harvest(
    config: dict, cwd: str | None, *, include_personal: bool = False, dry_run: bool = False
) -> Summary:
    """Upload the Auto Memory notes of the project at ``cwd``. Raises client.Unavailable (what was
    uploaded before is remembered) and client.ApiError for a refused token."""
    folder = memory_folder(cwd)
    summary = Summary(folder=str(folder.path), dry_run=dry_run)
    found = notes(folder.path)
    summary.found = len(found)
    state = Uploaded(config, ORIGIN_AUTO_MEMORY, folder.path)
    project = project_slug(config, str(folder.project))
    complete = False
    try:
        for note in found:
            seen = state.seen(note.relative, note.sha256)
            if seen:  # uploaded before (maybe by a run with --include-personal): still uploaded
                state.keep(note.relative, note.sha256)
            if note.type in PERSONAL_TYPES and not include_personal:
                summary.skipped_personal += 1
            elif note.type is None and not include_personal:
                summary.skipped_untyped += 1
            elif not note.text:
                summary.skipped_empty += 1
            elif seen:
                summary.skipped_unchanged += 1
            else:
                _upload_note(config, note, project, summary, state, dry_run=dry_run)
        complete = True
    finally:
        if not dry_run:
            state.save(complete=complete)
    return summary


def _upload_note(
    config: dict, note: Note, project: str, summary: Summary, state: Uploaded, *, dry_run: bool
) -> None:
    """One note as a candidate (or, with ``dry_run``, a line saying what would go up)."""
    mapping = NOTE_MAPPING.get(note.type or "", {})
    if dry_run:
        summary.uploaded += 1
        shown = f"{note.type} → {mapping['type']}/{mapping['category']}" if mapping else "no type"
        summary.details.append(f"  {note.relative} ({shown}): {_preview(note.text)}")
        return
    body = {
        "content": note.text,
        **mapping,
        "entities": [project] if project else [],
        "tags": [TAG_AUTO_MEMORY, *([f"{TAG_AUTO_MEMORY}-{note.type}"] if note.type else [])],
        "source": SOURCE,
        "provenance": {"origin": ORIGIN_AUTO_MEMORY, "path": note.relative, "sha256": note.sha256},
        "agent_name": AGENT_NAME,
    }
    _store(config, body, summary, note.relative)
    state.keep(note.relative, note.sha256)


def import_rules(config: dict, cwd: str | None, *, dry_run: bool = False) -> Summary:
    """Upload the rule items of the repository at ``cwd`` (its git root, else ``cwd``)."""
    from .automemory import git_root
    from .rules import read_rules
    from .writeback import MARKER_PREFIX

    here = Path(cwd or os.getcwd()).resolve()
    root = git_root(here) or here
    summary = Summary(folder=str(root), dry_run=dry_run)
    items, ours = read_rules(root, marker_prefix=MARKER_PREFIX)
    summary.found = len(items)
    if ours:
        summary.details.append(f"  left out Memory Lane's own {', '.join(ours)}")
    state = Uploaded(config, STATE_RULES, root)
    project = project_slug(config, str(root))
    complete = False
    try:
        for item in items:
            if state.seen(item.relative, item.sha256):
                state.keep(item.relative, item.sha256)
                summary.skipped_unchanged += 1
                continue
            if dry_run:
                summary.uploaded += 1
                summary.details.append(f"  {item.relative}: {_preview(item.content)}")
                continue
            body = {
                "content": item.content,
                **RULE_MAPPING,
                "entities": [project] if project else [],
                "tags": [item.origin],
                "source": SOURCE,
                "provenance": {"origin": item.origin, "path": item.relative, "sha256": item.file_sha256},
                "agent_name": AGENT_NAME,
            }
            _store(config, body, summary, f"{item.relative}: {_preview(item.content)}")
            state.keep(item.relative, item.sha256)
        complete = True
    finally:
        if not dry_run:
            state.save(complete=complete)
    return summary
