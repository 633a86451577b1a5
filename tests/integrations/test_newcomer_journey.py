"""A newcomer's first hour, end to end, as issue 44 tells it: on a laptop without the server, the
client installs alone into a fresh virtual environment (tests/integrations/standalone.py), `memlane
doctor` passes, `memlane harvest` uploads what their Claude Code already noted about the repository
(and a second run uploads nothing), and the pinned real Claude Code, with that client on PATH, gets
the harvested lesson back in its session context and can call the memory tools."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from memory.models import Memory, Session, Source
from tests.integrations.fake_model import fake_model
from tests.integrations.standalone import SYSTEM_PATH, clean_env, memlane
from tests.workers import ROOT, wait_for

pytestmark = pytest.mark.slow

CLAUDE = ROOT / "clients" / "agents" / "node_modules" / ".bin" / "claude"
LESSON = "Run the payments test suite with make test-payments; bare pytest skips the ledger fixtures."
PERSONAL = "This user prefers answers in short bullet points."
NOTES = {
    "feedback_payments_tests.md": ("feedback", "payments-tests", LESSON),
    "user_style.md": ("user", "style", PERSONAL),
}


def auto_memory_folder(home: Path, project: Path) -> Path:
    """Where Claude Code keeps its notes for this repository: every character of the git root's path
    but [A-Za-z0-9] becomes '-' (restated here, not imported from the client)."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve())) / "memory"


def write_auto_memory(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("".join(f"- [{name}]({name})\n" for name in NOTES))
    for name, (kind, title, body) in NOTES.items():
        (folder / name).write_text(f"---\nname: {title}\ndescription: {title}\ntype: {kind}\n---\n\n{body}\n")


def test_a_newcomer_installs_the_client_harvests_and_gets_the_lesson_back_in_claude_code(
    standalone, lane_server, tokens, tmp_path
):
    assert CLAUDE.exists(), f"{CLAUDE} is missing: `make agent-clients` installs the pinned clients"
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "payments-service"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    laptop = clean_env(
        PATH=f"{standalone / 'bin'}{os.pathsep}{SYSTEM_PATH}",  # the standalone client, not the server's venv
        HOME=str(home),
        MEMLANE_CONFIG=str(tmp_path / "config.json"),
        MEMLANE_STATE_DIR=str(tmp_path / "state"),
        MEMLANE_TIMEOUT="60",  # a busy test machine; the hooks' own budget is tested in test_hooks.py
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )

    # The commands the Connect page shows: install into the project with the URL and token.
    done = memlane(
        standalone,
        [
            "install",
            "claude-code",
            "--project",
            str(project),
            "--url",
            lane_server,
            "--token",
            tokens["member"],
        ],
        laptop,
        project,
    )
    assert done.returncode == 0 and "not on PATH" not in done.stderr, done.stderr
    doctor = memlane(standalone, ["doctor"], laptop, project)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "FAIL" not in doctor.stdout

    # What their agent already knows comes in: the team note, not the personal one; once.
    write_auto_memory(auto_memory_folder(home, project))
    first = memlane(standalone, ["harvest", "--json"], laptop, project, timeout=300)
    assert first.returncode == 0, first.stderr
    counts = json.loads(first.stdout)
    assert (counts["found"], counts["uploaded"], counts["added"], counts["skipped_personal"]) == (2, 1, 1, 1)
    harvested = Memory.objects.get(content=LESSON)
    assert harvested.source == Source.IMPORT and harvested.maturity == "candidate"
    assert not Memory.objects.filter(content__icontains="bullet points").exists()
    second = json.loads(memlane(standalone, ["harvest", "--json"], laptop, project, timeout=300).stdout)
    assert second["uploaded"] == 0 and Memory.objects.count() == 1

    # The real Claude Code, with only that client on PATH: the lesson is in its session context, and
    # the memory find tool answers with it.
    with fake_model() as model:
        env = {**laptop, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test-key"}
        command = [str(CLAUDE), "-p", "RECALL: how do I run the payments tests?", "--output-format", "json"]
        ran = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=240)
    assert ran.returncode == 0, ran.stderr[-3000:]
    answer = json.loads(ran.stdout)
    assert not answer["is_error"] and answer["permission_denials"] == []
    assert LESSON in model.texts()[0], "the harvested lesson is not in the session context"
    assert "TOOL RESULT" in answer["result"] and "make test-payments" in answer["result"]

    # The session ends after the process exits (the SessionEnd hook uploads and ends it in the
    # background): it reaches the server, and nothing is still writing when the test's data goes.
    wait_for(
        lambda: Session.objects.filter(external_id=answer["session_id"], ended_at__isnull=False).first(),
        timeout=240,
        what="the session's end",
    )
