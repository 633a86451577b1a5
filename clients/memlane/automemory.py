"""Claude Code's Auto Memory, read the way the pinned Claude Code reads it (standard library only).

Where the folder is — as the bundled JavaScript of ``@anthropic-ai/claude-code`` 2.1.330 resolves
it (the package ships a Bun-compiled ``bin/claude.exe`` rather than a ``cli.js``; the code below
was read from the JavaScript embedded in it; minified names in brackets):

1. ``CLAUDE_COWORK_MEMORY_PATH_OVERRIDE``, when set, is the folder (no ``~`` expansion) [``ga``].
2. Else the first ``autoMemoryDirectory`` found in the settings sources, in the order
   ``policySettings``, ``flagSettings``, then — when the workspace is trusted —
   ``localSettings`` and ``projectSettings``, then ``userSettings`` [``Qh``]. A value starting
   with ``~/`` is taken under the home directory; a relative path, one shorter than 3 characters
   or one holding NUL is ignored [``vc``]. (The setting's own description says a checked-in
   ``.claude/settings.json`` is ignored; the code reads it once the folder is trusted, and warns
   about it in the trust dialog. Hooks, and so our SessionEnd harvest, run only in trusted
   folders, so we read it too.) Here: managed ``managed-settings.json`` (and its
   ``managed-settings.d/*.json`` drop-ins), ``.claude/settings.local.json`` (at the repository
   root when it has one, else the working directory), ``.claude/settings.json`` of the working
   directory, and ``<config dir>/settings.json``; ``--settings`` flags cannot be seen from here.
3. Else ``<base>/projects/<slug>/memory/`` [``resolveEntry``], where ``<base>`` is
   ``CLAUDE_CODE_REMOTE_MEMORY_DIR`` or the config directory (``CLAUDE_CONFIG_DIR``, else
   ``~/.claude``) [``DAt``, ``et``], and ``<slug>`` sanitizes the project's key [``defaultKey``]:
   the *canonical* git root of the working directory — the nearest ancestor holding ``.git``
   [``ae``], and for a linked worktree (``.git`` a file: ``gitdir: …/.git/worktrees/<name>``
   with ``commondir``) the main checkout [``ce``] — else the working directory itself.
4. The slug [``KN``]: every character outside ``[A-Za-z0-9]`` becomes ``-`` (per UTF-16 code
   unit); longer than 200, it is cut to 200 and ``-<hash>`` appended, the hash being
   ``Math.abs`` of the Java-style 32-bit string hash in base 36 [``rse``, ``ge``]. With
   ``CLAUDE_CONFIG_DIR`` set, a valid ``CLAUDE_CODE_PROJECT_DIR_NAME`` (``[A-Za-z0-9_-]{1,64}``,
   no device name) replaces the slug [``nO``, ``m5n``].

What counts as a note [``Ngt``, ``Fgt``, ``_3``]: every ``*.md`` under the folder, subfolders
included, except ``MEMORY.md`` (the index, which Claude Code loads into every session: its first
200 lines / 25,000 bytes), any path with a part starting with ``.``, and the first-level folders
``team``, ``logs``, ``sessions`` and ``proposals``; the newest 200 by modification time. Front
matter is YAML between ``---`` lines at the top: ``name``, ``description`` and the ``type`` —
``user``, ``feedback``, ``project`` or ``reference``, anything else is no type [``fys``, ``kkr``]
— either at the top level or under ``metadata:`` (the current template writes ``metadata:
type: …``; ``metadata`` wins) [``fu``]. Front matter that does not parse counts as none at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

NOTE_TYPES = ("user", "feedback", "project", "reference")
INDEX_NAME = "MEMORY.md"
EXCLUDED_TOP_FOLDERS = ("team", "logs", "sessions", "proposals")
MAX_NOTES = 200  # Claude Code's memory scan keeps the newest 200
SLUG_MAX_LENGTH = 200
MIN_DIRECTORY_LENGTH = 3
PROJECT_DIR_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEVICE_NAMES = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9])", re.IGNORECASE)
MANAGED_DIRECTORIES = {
    "darwin": "/Library/Application Support/ClaudeCode",
    "win32": "C:\\Program Files\\ClaudeCode",
}
MANAGED_DIRECTORY_DEFAULT = "/etc/claude-code"
MAX_FRONT_MATTER_CHARS = 65536  # what Claude Code reads of a note's head (64 KiB)


# --- where the folder is -----------------------------------------------------------------------


def git_root(start: Path) -> Path | None:
    """The nearest directory from ``start`` upwards that holds a ``.git`` (folder or file)."""
    current = start.resolve()
    for directory in (current, *current.parents):
        if (directory / ".git").is_dir() or (directory / ".git").is_file():
            return directory
    return None


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8").strip()


def canonical_root(root: Path) -> Path:
    """The main checkout of a linked worktree (``.git`` a ``gitdir:`` file), else ``root``."""
    try:
        pointer = _read(root / ".git")
    except (OSError, UnicodeDecodeError):
        return root  # a .git folder: the checkout itself
    if not pointer.startswith("gitdir:"):
        return root
    try:
        gitdir = (root / pointer[len("gitdir:") :].strip()).resolve()
        common = (gitdir / _read(gitdir / "commondir")).resolve()
        if gitdir.parent != common / "worktrees":
            return root
        if (gitdir / _read(gitdir / "gitdir")).resolve() != (root / ".git").resolve():
            return root
    except (OSError, UnicodeDecodeError):
        return root
    if common.name != ".git":  # a bare repository's worktree
        return root if (common / ".git").exists() else common
    return common.parent


def project_key(cwd: Path) -> Path:
    """What Claude Code keys a project's memory by: the canonical git root, else the directory."""
    root = git_root(cwd)
    return canonical_root(root) if root is not None else cwd.resolve()


def _java_hash(text: str) -> int:
    """JavaScript's ``(h << 5) - h + charCodeAt(i) | 0`` over UTF-16 code units."""
    value = 0
    units = text.encode("utf-16-le")
    for index in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[index : index + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def sanitize(path: str) -> str:
    """Claude Code's project slug: ``/home/dev/billing-api`` → ``-home-dev-billing-api``."""
    slug = "".join(
        ch if ch.isascii() and ch.isalnum() else "-" * (2 if ord(ch) > 0xFFFF else 1) for ch in path
    )
    if len(slug) <= SLUG_MAX_LENGTH:
        return slug
    return f"{slug[:SLUG_MAX_LENGTH]}-{_base36(abs(_java_hash(path)))}"


def config_dir() -> Path:
    return Path(
        unicodedata.normalize("NFC", os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude"))
    )


def _directory_setting(value, *, expand_home: bool) -> Path | None:
    """An ``autoMemoryDirectory`` value as Claude Code accepts it, or None."""
    if not isinstance(value, str) or not value:
        return None
    if expand_home and (value.startswith("~/") or value.startswith("~\\")):
        rest = os.path.normpath(value[2:] or ".")
        if rest in (".", "..") or rest.startswith(".." + os.sep):
            return None
        value = str(Path.home() / rest)
    value = os.path.normpath(value).rstrip("/\\")
    if not os.path.isabs(value) or len(value) < MIN_DIRECTORY_LENGTH or "\x00" in value:
        return None
    return Path(unicodedata.normalize("NFC", value))


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _managed_settings() -> dict:
    directory = Path(MANAGED_DIRECTORIES.get(sys.platform, MANAGED_DIRECTORY_DEFAULT))
    merged = _json(directory / "managed-settings.json")
    try:
        drop_ins = sorted((directory / "managed-settings.d").glob("*.json"))
    except OSError:
        drop_ins = []
    for path in drop_ins:
        merged.update(_json(path))
    return merged


def settings_sources(cwd: Path) -> list[tuple[str, Path | None, dict]]:
    """The settings Claude Code looks for ``autoMemoryDirectory`` in, in its order."""
    root = git_root(cwd)
    local = cwd / ".claude" / "settings.local.json"
    if root is not None and (canonical_root(root) / ".claude" / "settings.local.json").is_file():
        local = canonical_root(root) / ".claude" / "settings.local.json"
    project = cwd / ".claude" / "settings.json"
    user = config_dir() / "settings.json"
    return [
        ("policySettings", None, _managed_settings()),
        ("localSettings", local, _json(local)),
        ("projectSettings", project, _json(project)),
        ("userSettings", user, _json(user)),
    ]


@dataclass
class MemoryFolder:
    path: Path
    how: str  # in words: which rule chose it
    project: Path  # the directory Claude Code keys the project by


def memory_folder(cwd: str | os.PathLike | None = None) -> MemoryFolder:
    """The Auto Memory folder of the project at ``cwd`` (it may not exist)."""
    here = Path(cwd or os.getcwd()).resolve()
    key = project_key(here)
    override = _directory_setting(os.environ.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"), expand_home=False)
    if override is not None:
        return MemoryFolder(override, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", key)
    for source, path, settings in settings_sources(here):
        chosen = _directory_setting(settings.get("autoMemoryDirectory"), expand_home=True)
        if chosen is not None:
            return MemoryFolder(chosen, f"autoMemoryDirectory in {path or source}", key)
    base = config_dir()
    remote = os.environ.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    slug = sanitize(str(key))
    if remote:
        base = Path(remote)
    elif os.environ.get("CLAUDE_CONFIG_DIR"):
        name = os.environ.get("CLAUDE_CODE_PROJECT_DIR_NAME") or ""
        if PROJECT_DIR_NAME.fullmatch(name) and not DEVICE_NAMES.fullmatch(name):
            slug = name
    return MemoryFolder(base / "projects" / slug / "memory", f"{base}/projects/<slug of {key}>/memory", key)


# --- front matter ------------------------------------------------------------------------------

FENCE = re.compile(r"---[ \t]*")
KEY_VALUE = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?")


class BadFrontMatter(ValueError):
    pass


def _scalar(raw: str) -> str:
    """A plain, single- or double-quoted YAML scalar on one line; raises BadFrontMatter."""
    raw = raw.strip()
    if not raw:
        return ""
    if raw[0] == '"':
        end = re.match(r'"((?:[^"\\]|\\.)*)"[ \t]*(#.*)?$', raw)
        if end is None:
            raise BadFrontMatter(f"unterminated or trailing text after a quoted value: {raw[:40]}")
        try:
            return json.loads(f'"{end.group(1)}"')
        except ValueError:
            return end.group(1)
    if raw[0] == "'":
        end = re.match(r"'((?:[^']|'')*)'[ \t]*(#.*)?$", raw)
        if end is None:
            raise BadFrontMatter(f"unterminated quoted value: {raw[:40]}")
        return end.group(1).replace("''", "'")
    if raw[0] in "[{":
        closing = "]" if raw[0] == "[" else "}"
        if not raw.rstrip().endswith(closing):
            raise BadFrontMatter(f"unclosed flow collection: {raw[:40]}")
        return raw
    if raw[0] in "&*!%@`":
        raise BadFrontMatter(f"a YAML feature this reader does not take: {raw[:40]}")
    return re.split(r"[ \t]#", raw, maxsplit=1)[0].strip()


def parse_front_matter(block: str) -> dict[str, str]:
    """A small YAML subset: ``key: scalar`` lines, ``|``/``>`` block scalars, and one level of
    ``key:`` mappings (``metadata:``, flattened as ``metadata.key``). Raises BadFrontMatter on
    anything else, so a note whose front matter YAML would reject reads as having none."""
    fields: dict[str, str] = {}
    lines = block.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise BadFrontMatter(f"an indented line outside a mapping: {line.strip()[:40]}")
        match = KEY_VALUE.fullmatch(line.rstrip())
        if match is None:
            raise BadFrontMatter(f"not a key: value line: {line[:40]}")
        key, value = match.group(1), (match.group(2) or "").strip()
        if value and value[0] in "|>":  # a block scalar: the indented lines that follow
            body = []
            while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
                body.append(lines[index].strip())
                index += 1
            joiner = "\n" if value[0] == "|" else " "
            fields[key] = joiner.join(body).strip()
            continue
        if value:
            fields[key] = _scalar(value)
            continue
        # ``key:`` alone: a nested mapping (or a list, kept as no value) of indented lines.
        while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
            inner = lines[index].strip()
            index += 1
            if not inner or inner.startswith("#") or inner.startswith("- "):
                continue
            nested = KEY_VALUE.fullmatch(inner)
            if nested is None:
                raise BadFrontMatter(f"not a key: value line under {key}: {inner[:40]}")
            fields[f"{key}.{nested.group(1)}"] = _scalar(nested.group(2) or "")
        fields.setdefault(key, "")
    return fields


def split_front_matter(text: str) -> tuple[str | None, str]:
    """(the front matter block or None, the body). Only a block closed by a ``---`` line counts."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or not FENCE.fullmatch(lines[0].rstrip("\r\n")):
        return None, text
    for index in range(1, len(lines)):
        if FENCE.fullmatch(lines[index].rstrip("\r\n")):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    return None, text


# --- notes -------------------------------------------------------------------------------------


@dataclass
class Note:
    path: Path
    relative: str  # to the memory folder, with "/"
    sha256: str  # of the file's bytes
    name: str = ""
    description: str = ""
    type: str | None = None  # one of NOTE_TYPES, or None (absent, unknown, or front matter unreadable)
    body: str = ""
    problem: str = ""  # why the front matter was not read, if it was not
    mtime: float = 0.0
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """What the note says: its body, else its description."""
        return self.body.strip() or self.description.strip()


def read_note(path: Path, folder: Path) -> Note:
    data = path.read_bytes()
    text = data.decode("utf-8", "replace")
    note = Note(
        path=path,
        relative=path.relative_to(folder).as_posix(),
        sha256=hashlib.sha256(data).hexdigest(),
        mtime=path.stat().st_mtime,
    )
    block, body = split_front_matter(text)
    note.body = body
    if block is None:
        return note
    try:
        if len(block) > MAX_FRONT_MATTER_CHARS:
            raise BadFrontMatter("front matter too long")
        fields = parse_front_matter(block)
    except BadFrontMatter as error:
        note.problem = str(error)
        return note
    note.fields = fields
    note.name = fields.get("name", "")
    note.description = fields.get("description", "")
    kind = fields.get("metadata.type") or fields.get("type")
    note.type = kind if kind in NOTE_TYPES else None
    return note


def _is_note(relative: Path) -> bool:
    parts = relative.parts
    if relative.suffix != ".md" or relative.name == INDEX_NAME:
        return False
    if any(part.startswith(".") for part in parts):
        return False
    return unicodedata.normalize("NFC", parts[0]).rstrip(". ").lower() not in EXCLUDED_TOP_FOLDERS


def notes(folder: Path) -> list[Note]:
    """The notes of an Auto Memory folder, newest first (at most MAX_NOTES); unreadable files are
    left out. No folder, no notes."""
    if not folder.is_dir():
        return []
    found = []
    for directory, subdirectories, files in os.walk(folder):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(files):
            path = Path(directory) / name
            if path.is_symlink() or not path.is_file() or not _is_note(path.relative_to(folder)):
                continue
            try:
                found.append(read_note(path, folder))
            except OSError:
                continue
    found.sort(key=lambda note: (-note.mtime, note.relative))
    return found[:MAX_NOTES]
