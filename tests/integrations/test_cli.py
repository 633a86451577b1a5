"""The memlane CLI as a subprocess: install (idempotent), the memory commands against the live
server, failing open, staying standard-library-only; and the Claude Code plugin's files."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.integrations.conftest import MEMLANE, free_port, run_memlane
from tests.workers import ROOT

pytestmark = pytest.mark.slow

PLUGIN = ROOT / "clients" / "claude-code"


def test_install_claude_code_writes_hooks_mcp_and_the_team_block_once(lane_server, memlane_env, tmp_path):
    project = tmp_path / "billing-api"
    project.mkdir()
    # What an earlier install appended: the @-import of the team block, which moves to .claude/rules/.
    (project / "CLAUDE.md").write_text(
        "# Billing API\n\nUse pytest.\n\n<!-- Memory Lane: the team's MEMORY.md (memlane export --write"
        " .claude/team-memory.md) -->\n@.claude/team-memory.md\n"
    )
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(ls)"]},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
            }
        )
    )
    for _ in range(2):
        done, _ = run_memlane(["install", "claude-code", "--project", str(project)], memlane_env)
        assert done.returncode == 0, done.stderr

    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"]["allow"][0] == "Bash(ls)"  # other settings kept
    commands = {
        event: [hook["command"] for group in groups for hook in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }
    assert commands["Stop"][0] == "say done"  # someone else's hook kept
    for event, name in [
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("PostToolUse", "post-tool-use"),
        ("Stop", "stop"),
        ("PreCompact", "pre-compact"),
        ("SessionEnd", "session-end"),
    ]:
        ours = [c for c in commands[event] if c.endswith(f"hook {name}")]
        assert ours == [f"{MEMLANE} hook {name}"], commands[event]
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"

    # The memory tools are allowed (no prompt, and `claude -p` may call them), once.
    assert settings["permissions"]["allow"].count("mcp__memory-lane") == 1
    # .mcp.json is committed by teams: no machine's path in it, no server URL or token either.
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memory-lane"]
    assert server == {"type": "stdio", "command": "memlane", "args": ["mcp"]}
    assert lane_server not in (project / ".mcp.json").read_text()
    # The team block is where Claude Code loads it by itself; CLAUDE.md no longer imports it.
    assert (project / "CLAUDE.md").read_text() == "# Billing API\n\nUse pytest.\n"
    block = (project / ".claude" / "rules" / "memory-lane-team.md").read_text()
    assert block.startswith("<!-- memory-lane:team-memory") and "\n# Team memory\n" in block

    headers, _ = run_memlane(["mcp-headers"], memlane_env)
    assert json.loads(headers.stdout) == {
        "Authorization": f"Bearer {memlane_env['MEMLANE_TOKEN']}",
        "X-Memlane-Agent": "claude-code",
    }


def test_install_opencode_copies_the_plugin_and_writes_the_import_line_once(memlane_env, tmp_path):
    project = tmp_path / "shop"
    for _ in range(2):
        done, _ = run_memlane(["install", "opencode", "--project", str(project)], memlane_env)
        assert done.returncode == 0, done.stderr
    plugin = (project / ".opencode" / "plugins" / "memory-lane.ts").read_text()
    assert plugin == (ROOT / "clients" / "opencode" / "src" / "memory-lane.ts").read_text()
    package = json.loads((project / ".opencode" / "package.json").read_text())
    assert package["dependencies"]["@opencode-ai/plugin"]
    assert json.loads((project / "opencode.json").read_text())["instructions"] == [".claude/team-memory.md"]
    assert (project / "AGENTS.md").read_text().count("@.claude/team-memory.md") == 1


def test_install_saves_url_and_token_in_a_private_config_file(memlane_env, tmp_path):
    env = {k: v for k, v in memlane_env.items() if k not in {"MEMLANE_URL", "MEMLANE_TOKEN"}}
    done, _ = run_memlane(
        [
            "install",
            "claude-code",
            "--project",
            str(tmp_path / "p"),
            "--url",
            memlane_env["MEMLANE_URL"],
            "--token",
            memlane_env["MEMLANE_TOKEN"],
        ],
        env,
    )
    assert done.returncode == 0, done.stderr
    config = tmp_path / "config.json"
    assert json.loads(config.read_text()) == {
        "url": memlane_env["MEMLANE_URL"],
        "token": memlane_env["MEMLANE_TOKEN"],
    }
    assert config.stat().st_mode & 0o777 == 0o600
    shown, _ = run_memlane(["config"], env)
    assert json.loads(shown.stdout)["token"].endswith("…")  # never printed whole


def test_remember_recall_feedback_context_and_export(lane_server, memlane_env, tmp_path):
    memlane_env = {**memlane_env, "MEMLANE_TIMEOUT": "60"}  # the server's first store loads the model
    done, _ = run_memlane(
        [
            "remember",
            "Use",
            "payments/gateway.py",
            "for",
            "every",
            "charge;",
            "never",
            "call",
            "stripe",
            "directly.",
            "--type",
            "correction",
            "--category",
            "gotcha",
            "--priority",
            "critical",
            "--entity",
            "project:billing-api",
            "--json",
        ],
        memlane_env,
    )
    assert done.returncode == 0, done.stderr
    stored = json.loads(done.stdout)
    memory_id = stored["memory"]["id"]
    assert stored["operation"] == "ADD" and stored["memory"]["entities"] == ["project:billing-api"]

    recalled, _ = run_memlane(["recall", "how", "do", "we", "charge", "cards?"], memlane_env)
    assert recalled.returncode == 0 and recalled.stdout.startswith(f"- [{memory_id}] (correction, candidate,")

    rated, _ = run_memlane(["feedback", memory_id, "helpful", "--note", "right on"], memlane_env)
    assert rated.returncode == 0 and rated.stdout.startswith(f"helpful: {memory_id} now scores 1.10")

    context, _ = run_memlane(["context", "--project", "billing-api"], memlane_env)
    assert memory_id in context.stdout and context.stdout.startswith("<team-memory")

    target = tmp_path / "project" / ".claude" / "team-memory.md"
    exported, _ = run_memlane(["export", "--write", str(target)], memlane_env)
    assert exported.returncode == 0 and target.read_text().startswith("# Team memory")


def test_a_refused_request_explains_itself_and_exits_1(lane_server, memlane_env):
    memlane_env = {**memlane_env, "MEMLANE_TIMEOUT": "60"}
    for slug, text in (
        ("person:mark-robinson", "Mark Robinson owns the ledger."),
        ("person:mark-smith", "Mark Smith runs CI images."),
    ):
        assert run_memlane(["remember", text, "--entity", slug], memlane_env)[0].returncode == 0
    done, _ = run_memlane(["recall", "who owns it", "--entity", "Mark"], memlane_env)
    assert done.returncode == 1 and done.stdout == ""
    assert (
        "CLARIFICATION_REQUIRED" in done.stderr and "person:mark-robinson, person:mark-smith" in done.stderr
    )


@pytest.mark.parametrize(
    "args",
    [
        ["remember", "x y z"],
        ["recall", "anything"],
        ["feedback", "00000000-0000-0000-0000-000000000000", "helpful"],
        ["context"],
        ["export"],
        ["export", "--write", "out.md"],
    ],
)
def test_commands_fail_open_when_the_server_is_down(args, memlane_env, tmp_path):
    env = {**memlane_env, "MEMLANE_URL": f"http://127.0.0.1:{free_port()}", "MEMLANE_TIMEOUT": "1"}
    done, seconds = run_memlane(args, env, cwd=str(tmp_path))
    assert done.returncode == 0 and done.stdout == "" and seconds < 2.0
    assert "unavailable" in done.stderr and not (tmp_path / "out.md").exists()


def test_the_client_imports_only_the_standard_library_and_starts_fast(tmp_path):
    modules = "clients.memlane." + ", clients.memlane.".join(
        ["cli", "config", "client", "doctor", "hooks", "install", "state", "transcript", "upload"]
        + ["automemory", "harvest", "rules", "writeback"]
    )
    code = f"import sys, {modules}; print(sorted(m.split('.')[0] for m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    loaded = set(eval(done.stdout))  # noqa: S307 - our own output
    assert not loaded & {"django", "rest_framework", "memory", "api", "memorylane", "mcp", "httpx"}
    source = "\n".join(path.read_text() for path in (ROOT / "clients" / "memlane").glob("*.py"))
    assert not re.search(
        r"^\s*(import|from)\s+(django|rest_framework|memory|api|memorylane|requests|httpx)\b", source, re.M
    )
    version = subprocess.run([MEMLANE, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == "memlane 0.1.0"


def test_the_claude_code_plugin_declares_its_hooks_skills_mcp_server_and_marketplace():
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", manifest["name"])
    # The marketplace sits at the repository root (tests/integrations/test_client_package.py).
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert marketplace["owner"]["name"] and marketplace["plugins"][0] == {
        **marketplace["plugins"][0],
        "name": manifest["name"],
        "source": "./clients/claude-code",
    }
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in hooks.items()} == {
        "SessionStart": ["memlane hook session-start"],
        "UserPromptSubmit": ["memlane hook user-prompt-submit"],
        "PostToolUse": ["memlane hook post-tool-use"],
        "Stop": ["memlane hook stop"],
        "PreCompact": ["memlane hook pre-compact"],
        "SessionEnd": ["memlane hook session-end"],
    }
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert hooks["PostToolUse"][0]["matcher"] == "Edit|Write|MultiEdit|NotebookEdit"
    assert hooks["PostToolUse"][0]["hooks"][0]["async"] is True
    # The plugin's MCP server is `memlane mcp`: it reads the same configuration as the hooks.
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["memory-lane"]
    assert server == {"type": "stdio", "command": "memlane", "args": ["mcp"]}
    for skill in ("remember", "recall", "feedback"):
        text = (PLUGIN / "skills" / skill / "SKILL.md").read_text()
        front = text.split("---")[1]
        assert re.search(rf"^name: {skill}$", front, re.M) and re.search(r"^description: .{40,}", front, re.M)
        assert "$ARGUMENTS" in text and f"memlane {skill}" in text
        # Claude Code names a plugin's MCP tools mcp__plugin_<plugin>_<server>__<tool>.
        tools = re.search(r"^allowed-tools: (.*)$", front, re.M).group(1)
        assert f"mcp__plugin_{manifest['name']}_memory-lane__memory_lane_" in tools


def test_kept_uploads_are_given_up_when_their_transcript_is_gone_or_they_are_too_old(tmp_path):
    import json as _json
    import time as _time

    from clients.memlane import config as configuration
    from clients.memlane import upload
    from tests.integrations.conftest import free_port

    config = {
        **configuration.DEFAULTS,
        "url": f"http://127.0.0.1:{free_port()}",  # down
        "state_dir": str(tmp_path),
        "timeout": 1.0,
        "upload_timeout": 1.0,
    }
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    base = {"cwd": None, "agent": "claude-code", "end": True, "reason": ""}
    upload.keep_for_later(
        config, {**base, "session_id": "gone", "transcript_path": str(tmp_path / "missing")}
    )
    upload.keep_for_later(config, {**base, "session_id": "waiting", "transcript_path": str(transcript)})
    upload.keep_for_later(config, {**base, "session_id": "old", "transcript_path": str(transcript)})
    old = next(
        p for p in (tmp_path / "pending").glob("*.json") if _json.loads(p.read_text())["session_id"] == "old"
    )
    old.write_text(_json.dumps({**_json.loads(old.read_text()), "kept_at": _time.time() - 8 * 86400}))
    # A partial (PreCompact) upload never replaces a kept ending one.
    upload.keep_for_later(
        config, {**base, "session_id": "waiting", "transcript_path": str(transcript), "end": False}
    )

    assert upload.upload_pending(config) == {"uploaded": 0, "kept": 1, "given_up": 2}
    (kept,) = (tmp_path / "pending").glob("*.json")
    assert _json.loads(kept.read_text())["session_id"] == "waiting" and _json.loads(kept.read_text())["end"]
    assert "given up" in (tmp_path / "upload.log").read_text()
