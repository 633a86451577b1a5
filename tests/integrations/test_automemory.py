"""The client's readers, without a server: Claude Code's project slug and Auto Memory folder
(clients/memlane/automemory.py), note front matter, and the rule splitter (clients/memlane/rules.py).
test_harvest.py checks the same against the pinned Claude Code itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients.memlane import automemory
from clients.memlane.rules import split_rules
from clients.memlane.writeback import MARKER, render

LONG = "/tmp/hvc/ü-" + "very-long-directory-name-" * 9 + "/repo"


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("/home/dev/billing-api", "-home-dev-billing-api"),
        ("/Users/ada/src/Billing API_x", "-Users-ada-src-Billing-API-x"),
        ("/tmp/a😀b", "-tmp-a--b"),  # one character outside the BMP is two UTF-16 units
        # Observed: the folder the pinned Claude Code 2.1.330 read for this path (cut at 200, hashed).
        (
            LONG,
            "-tmp-hvc---very-long-directory-name-very-long-directory-name-very-long-directory-name-"
            "very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-"
            "directory-name-very-long-dire-g16oph",
        ),
    ],
)
def test_the_slug_is_claude_code_s(path, slug):
    assert automemory.sanitize(path) == slug


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CLAUDE_CODE_REMOTE_MEMORY_DIR",
        "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
        "CLAUDE_CODE_PROJECT_DIR_NAME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_folder_is_keyed_by_the_git_root_and_the_config_dir(home, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    folder = automemory.memory_folder(repo / "src" / "deep")
    assert folder.path == home / ".claude" / "projects" / automemory.sanitize(str(repo)) / "memory"
    plain = tmp_path / "no-repo"
    plain.mkdir()
    assert automemory.memory_folder(plain).path.parent.name == automemory.sanitize(str(plain))

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    assert automemory.memory_folder(repo).path.parents[2] == tmp_path / "config"
    monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "billing")
    assert automemory.memory_folder(repo).path.parent.name == "billing"
    monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "../escape")  # not a valid name: ignored
    assert automemory.memory_folder(repo).path.parent.name == automemory.sanitize(str(repo))


def test_auto_memory_directory_follows_claude_code_s_order_and_rules(home, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".git").mkdir()
    user = home / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"autoMemoryDirectory": "~/notes"}))
    assert automemory.memory_folder(repo).path == home / "notes"
    (repo / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "/srv/project-notes"}))
    assert automemory.memory_folder(repo).path == Path("/srv/project-notes")
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": "/srv/mine/"}))
    assert automemory.memory_folder(repo).path == Path("/srv/mine")
    # Values Claude Code refuses fall through to the next source.
    for refused in ("relative/notes", "~/../outside", "/a", "", 42):
        (repo / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": refused}))
        assert automemory.memory_folder(repo).path == Path("/srv/project-notes")


@pytest.mark.parametrize(
    ("text", "kind", "description"),
    [
        ("---\nname: a\ndescription: plain words\ntype: feedback\n---\nbody\n", "feedback", "plain words"),
        (
            "---\nname: a\ndescription: 'it''s: quoted'\nmetadata:\n  type: project\n---\nbody\n",
            "project",
            "it's: quoted",
        ),
        ('---\ndescription: "say \\"hi\\""\ntype: reference # comment\n---\nb\n', "reference", 'say "hi"'),
        ("---\ndescription: >-\n  folded\n  lines\ntype: user\n---\nb\n", "user", "folded lines"),
        ("---\ntype: Feedback\n---\nb\n", None, ""),  # not one of the CLI's types
        ('---\ntype: feedback\ndescription: "never closed\n---\nb\n', None, ""),  # YAML refuses it
        ("---\ntype: [feedback\n---\nb\n", None, ""),
        ("---\ntype: feedback\nno closing fence\n", None, ""),
        ("plain markdown, no front matter\n", None, ""),
    ],
)
def test_front_matter_is_read_as_claude_code_reads_it(tmp_path, text, kind, description):
    path = tmp_path / "note.md"
    path.write_text(text)
    note = automemory.read_note(path, tmp_path)
    assert (note.type, note.description) == (kind, description)
    assert note.text


def test_the_scan_takes_what_claude_code_s_memory_scan_takes(tmp_path):
    for name in [
        "a.md",
        "sub/b.md",
        "MEMORY.md",
        "notes.txt",
        "team/t.md",
        "Logs/l.md",
        ".x/h.md",
        "sub/.h.md",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("---\ntype: project\n---\nx\n")
    assert sorted(note.relative for note in automemory.notes(tmp_path)) == ["a.md", "sub/b.md"]
    assert automemory.notes(tmp_path / "missing") == []


def test_rules_split_into_items_under_their_headings():
    text = (
        "---\npaths: src/**\n---\n# Billing\n\n@docs/setup.md\n<!-- a comment\nover lines -->\n\n"
        "## Testing\n\n- Run `make test`, never bare pytest.\n  - it starts the database\n"
        "* Factories, not JSON fixtures.\n\n1. Numbered rules count too, one by one.\n\n"
        "A paragraph rule that\nwraps over lines.\n\n```sh\nmake test\n```\n\nTODO\n"
    )
    assert split_rules(text) == [
        ("Testing", "Run `make test`, never bare pytest.\n- it starts the database"),
        ("Testing", "Factories, not JSON fixtures."),
        ("Testing", "Numbered rules count too, one by one."),
        ("Testing", "A paragraph rule that\nwraps over lines.\n```sh\nmake test\n```"),
    ]


def test_the_written_block_keeps_its_marker_and_fits_the_size():
    markdown = "# Team memory\n\n" + "".join(f"- rule number {i} of the team\n" for i in range(100))
    text = render(markdown, 300)
    assert text.startswith(MARKER + "\n") and len(text) <= 300 and text.endswith("\n")
    assert render(markdown, 10).startswith(MARKER)  # never without its marker
