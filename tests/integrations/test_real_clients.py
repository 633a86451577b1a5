"""The real Claude Code and OpenCode (pinned in clients/agents, installed by `make test`), installed
into a scratch repository as the README says, against a live server and a scripted model API
(tests/integrations/fake_model.py): what a user of each client would notice.

Claude Code: the memory tools are allowed after a plain install; the SessionStart context reaches the
model; store and find through MCP belong to the agent's session; after /compact the team memory is in
the model's view again; a resumed session that ends again is learnt from.
OpenCode: the plugin's tools and context; a session continued in a new process gets its context
again, and is learnt from when it ends again.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memory.models import ExtractionStatus, Memory, Recall, Session
from memory.services.extraction import extraction_run
from tests.integrations.conftest import MEMLANE, api, run_memlane
from tests.integrations.fake_model import fake_model
from tests.workers import ROOT, wait_for

pytestmark = pytest.mark.slow

BIN = ROOT / "clients" / "agents" / "node_modules" / ".bin"
CRITICAL = "Never run database migrations against production from a laptop; use the deploy pipeline."
WAIT = 240  # seconds for what the clients do in the background (uploads, ends) on a busy machine
LESSON = "Careful: always rotate the refresh token on every use, or a stolen token lives forever."


def client_binary(name: str) -> str:
    path = BIN / name
    assert path.exists(), f"{path} is missing: `make agent-clients` installs the pinned clients"
    return str(path)


@pytest.fixture
def agent_env(memlane_env, tmp_path) -> dict[str, str]:
    """A user's machine: memlane on PATH (as `pip install` puts it), their own HOME."""
    home = Path(memlane_env["HOME"])
    home.mkdir(parents=True, exist_ok=True)
    return {
        **memlane_env,
        "PATH": f"{Path(MEMLANE).parent}{os.pathsep}{os.environ['PATH']}",
        # The hooks' budget is 3 s by default; a busy test machine must not turn a slow answer into
        # a missing context (the budget itself is tested in test_hooks.py).
        "MEMLANE_TIMEOUT": "30",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
    }


@pytest.fixture
def critical_memory(lane_server, tokens) -> dict:
    # Also warms the web process's embedding model before a hook's short timeout meets it.
    status, body = api(
        lane_server,
        tokens["member"],
        "POST",
        "/observations",
        {"content": CRITICAL, "type": "correction", "priority": "critical", "category": "gotcha"},
        timeout=600,  # a cold web process loads the model first; slow on a busy machine
    )
    assert status == 201, body
    return body["memory"]


def repository(tmp_path: Path, name: str) -> Path:
    project = tmp_path / name
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def claude(env: dict, project: Path, prompt: str, *, resume: str | None = None) -> dict:
    command = [client_binary("claude"), "-p", prompt, "--output-format", "json"]
    if resume:
        command[2:2] = ["--resume", resume]
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def extract_when_ended_again(external_id: str, through_before: int | None) -> Session:
    """Wait for the session-end upload of a resumed session, then run its extraction (no worker runs
    beside the test server; the queued task would do the same)."""

    def ended_again():
        session = Session.objects.filter(external_id=external_id).first()
        if session and session.ended_through_seq is not None and session.ended_through_seq != through_before:
            return session
        return None

    session = wait_for(ended_again, timeout=WAIT, what=f"session {external_id} to end again")

    def extracted():
        current = Session.objects.get(pk=session.pk)
        if current.extraction_status == ExtractionStatus.PENDING:
            extraction_run(current.pk)  # a worker of another test may have taken it: either is fine
            current.refresh_from_db()
        return current if current.extraction_status == ExtractionStatus.DONE else None

    return wait_for(extracted, timeout=WAIT, what="its extraction")


def test_claude_code_tools_context_compaction_and_a_resumed_session(
    lane_server, agent_env, critical_memory, tmp_path
):
    project = repository(tmp_path, "billing-api")
    installed, _ = run_memlane(["install", "claude-code", "--project", str(project)], agent_env)
    assert installed.returncode == 0, installed.stderr

    with fake_model() as model:
        env = {**agent_env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test-key"}

        # A plain install: the store tool runs without a permission prompt, inside the session.
        stored = claude(env, project, "REMEMBER: The billing API pins Node 20 in CI.")
        sid = stored["session_id"]
        assert stored["permission_denials"] == [] and not stored["is_error"]
        assert '"operation": "ADD"' in stored["result"] or '"operation":"ADD"' in stored["result"]
        memory = Memory.objects.get(content="The billing API pins Node 20 in CI.")
        assert memory.session.external_id == sid and memory.agent_name == "claude-code"
        # The SessionStart context reached the model, critical rule included.
        assert CRITICAL in model.texts()[0]

        # The session ended when the process exited (SessionEnd hook: upload, end, extraction).
        first_end = wait_for(
            lambda: Session.objects.filter(external_id=sid, ended_at__isnull=False).first(),
            timeout=WAIT,
            what="the first session end",
        )

        # Resumed: find through MCP reaches the model and is recorded as shown to this session.
        found = claude(env, project, "RECALL: which Node does the billing API pin?", resume=sid)
        assert "Node 20" in found["result"] and found["session_id"] == sid
        assert Recall.objects.filter(session__external_id=sid, memory=memory).exists()

        # /compact throws the history away; the team memory is back in the model's view after it.
        compacted = claude(env, project, "/compact", resume=sid)
        assert not compacted.get("is_error")
        assert Session.objects.get(external_id=sid).context_reset_at is not None
        seen = len(model.texts())
        claude(env, project, "Carry on with the deploy.", resume=sid)
        assert any(CRITICAL in text for text in model.texts()[seen:])

        # Resumed again with a lesson: the second end is learnt from.
        before = Session.objects.get(external_id=sid).ended_through_seq
        claude(env, project, LESSON, resume=sid)
    session = extract_when_ended_again(sid, before)
    assert session.ended_through_seq > (first_end.ended_through_seq or 0)
    learnt = Memory.objects.filter(session=session, content__icontains="refresh token")
    assert learnt.exists(), list(Memory.objects.filter(session=session).values_list("content", flat=True))


def test_opencode_tools_context_in_a_new_process_and_a_continued_session(
    lane_server, agent_env, critical_memory, tmp_path
):
    project = repository(tmp_path, "shop")
    installed, _ = run_memlane(["install", "opencode", "--project", str(project)], agent_env)
    assert installed.returncode == 0, installed.stderr

    with fake_model() as model:
        config_path = project / "opencode.json"
        config = json.loads(config_path.read_text())
        config.update(
            model="anthropic/claude-sonnet-4-5",
            provider={"anthropic": {"options": {"baseURL": f"{model.url}/v1", "apiKey": "sk-ant-test-key"}}},
            autoupdate=False,
            share="disabled",
        )
        config_path.write_text(json.dumps(config))

        def opencode(prompt: str, session: str | None = None) -> None:
            command = [client_binary("opencode"), "run", prompt]
            if session:
                command += ["--session", session]
            # A user's shell: the memlane settings, PATH and HOME (the test runner's own variables
            # would reach OpenCode's provider selection otherwise).
            env = {
                k: v
                for k, v in agent_env.items()
                if k.startswith(("MEMLANE_", "OPENCODE_")) or k in {"PATH", "HOME"}
            }
            done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=240)
            assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])

        opencode("REMEMBER: The shop frontend uses pnpm workspaces.")
        memory = wait_for(
            lambda: Memory.objects.filter(content="The shop frontend uses pnpm workspaces.").first(),
            timeout=WAIT,
            what="the stored memory",
        )
        sid = memory.session.external_id
        assert memory.agent_name == "opencode" and sid.startswith("ses_")
        assert any(CRITICAL in text for text in model.texts())
        wait_for(
            lambda: Session.objects.filter(external_id=sid, ended_at__isnull=False).first(),
            timeout=WAIT,
            what="the first session end",
        )

        # Continued in a new process: the context (what the session was shown before included) is
        # in the model's view again, and the new messages are learnt from when it ends again.
        seen = len(model.texts())
        before = Session.objects.get(external_id=sid).ended_through_seq
        opencode(LESSON, session=sid)
        assert any(CRITICAL in text for text in model.texts()[seen:])
    session = extract_when_ended_again(sid, before)
    learnt = Memory.objects.filter(session=session, content__icontains="refresh token")
    assert learnt.exists(), list(Memory.objects.filter(session=session).values_list("content", flat=True))
