"""The memlane client installed on its own, as a teammate without the server gets it: its wheel
built from clients/, installed into a fresh virtual environment (no Django, no torch), `memlane
doctor` against the live server; `memlane install claude-code` without memlane on PATH; and the
Claude Code marketplace at the repository root, added and installed by the pinned Claude Code."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.integrations.conftest import free_port
from tests.integrations.standalone import SYSTEM_PATH, clean_env, memlane
from tests.workers import ROOT

pytestmark = pytest.mark.slow

CLAUDE = ROOT / "clients" / "agents" / "node_modules" / ".bin" / "claude"
SERVER_PACKAGES = ("django", "rest_framework", "torch", "sentence_transformers", "mcp", "httpx", "clients")
VERSION = re.search(r'__version__ = "([^"]+)"', (ROOT / "clients/memlane/__init__.py").read_text())[1]


@pytest.fixture
def teammate(standalone, tmp_path, lane_server, tokens) -> dict[str, str]:
    """A teammate's shell: the standalone client on PATH, their own HOME, config and state."""
    home = tmp_path / "home"
    home.mkdir()
    return clean_env(
        PATH=f"{standalone / 'bin'}{os.pathsep}{SYSTEM_PATH}",
        HOME=str(home),
        MEMLANE_URL=lane_server,
        MEMLANE_TOKEN=tokens["member"],
        MEMLANE_CONFIG=str(tmp_path / "config.json"),
        MEMLANE_STATE_DIR=str(tmp_path / "state"),
    )


def checks(stdout: str) -> dict[str, str]:
    """``{check name: "OK" | "FAIL" | "--"}`` from doctor's output."""
    found = re.findall(r"^(OK|FAIL|--)\s+([a-z -]+):", stdout, re.M)
    return {name: mark for mark, name in found}


def test_the_fresh_venv_holds_the_client_and_nothing_of_the_server(standalone, tmp_path):
    python = str(standalone / "bin" / "python")
    code = f"import importlib.util as u; print([m for m in {SERVER_PACKAGES!r} if u.find_spec(m)])"
    found = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=clean_env(), cwd=tmp_path
    )
    assert found.returncode == 0 and found.stdout.strip() == "[]", found.stderr
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=json"], capture_output=True, text=True, env=clean_env()
    )
    assert {p["name"] for p in json.loads(listed.stdout)} <= {"memlane", "pip", "setuptools"}
    version = memlane(standalone, ["--version"], clean_env(), tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"memlane {VERSION}"
    # It runs itself as `python -m memlane` (the detached uploader), not as clients.memlane.
    module = subprocess.run(
        [python, "-m", "memlane", "--version"], capture_output=True, text=True, env=clean_env(), cwd=tmp_path
    )
    assert module.stdout.strip() == f"memlane {VERSION}"


def test_doctor_passes_every_check_for_an_installed_project(standalone, teammate, tmp_path):
    project = tmp_path / "project"
    installed = memlane(standalone, ["install", "claude-code", "--project", str(project)], teammate, tmp_path)
    assert installed.returncode == 0 and "not on PATH" not in installed.stderr, installed.stderr
    done = memlane(standalone, ["doctor"], teammate, project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"memlane {VERSION} ")
    assert checks(done.stdout) == {
        "config": "OK",
        "server": "OK",
        "token": "OK",
        "mcp": "OK",
        "path": "OK",
        "claude-code mcp": "OK",
        "claude-code hooks": "OK",
    }, done.stdout
    assert "(from MEMLANE_TOKEN)" in done.stdout and f"Memory Lane {VERSION}" in done.stdout
    assert "initialized: " in done.stdout and str(standalone / "bin" / "memlane") in done.stdout


def test_doctor_names_a_refused_token_and_exits_1(standalone, teammate, tmp_path):
    done = memlane(standalone, ["doctor"], {**teammate, "MEMLANE_TOKEN": "ml_nope_nope"}, tmp_path)
    assert done.returncode == 1
    assert checks(done.stdout) == {
        "config": "OK",
        "server": "OK",
        "token": "FAIL",
        "mcp": "FAIL",
        "path": "OK",
        "project": "--",
    }, done.stdout
    assert "token refused (HTTP 401)" in done.stdout
    assert f"mint one at {teammate['MEMLANE_URL']}/connect/ or ask an owner" in done.stdout


def test_doctor_says_the_server_is_down_and_exits_1(standalone, teammate, tmp_path):
    down = f"http://127.0.0.1:{free_port()}"
    done = memlane(standalone, ["doctor"], {**teammate, "MEMLANE_URL": down}, tmp_path)
    assert done.returncode == 1
    assert checks(done.stdout)["server"] == "FAIL" and f"cannot reach {down}" in done.stdout
    assert "not checked (the server is unreachable)" in done.stdout


def test_doctor_says_where_a_missing_token_comes_from(standalone, teammate, tmp_path):
    env = {k: v for k, v in teammate.items() if k != "MEMLANE_TOKEN"}
    done = memlane(standalone, ["doctor"], env, tmp_path)
    assert done.returncode == 1 and checks(done.stdout)["config"] == "FAIL"
    assert "no token" in done.stdout and "memlane config --token" in done.stdout


def test_install_claude_code_warns_when_memlane_is_not_on_path(standalone, tmp_path):
    home = tmp_path / "home"
    env = clean_env(HOME=str(home), MEMLANE_URL=f"http://127.0.0.1:{free_port()}")
    done = memlane(standalone, ["install", "claude-code", "--project", str(tmp_path / "p")], env, tmp_path)
    assert done.returncode == 0 and (tmp_path / "p" / ".mcp.json").exists()
    # Installed from a wheel file: the fix installs that same file.
    wheel = next(standalone.parent.joinpath("dist").glob("memlane-*.whl"))
    assert "memlane is not on PATH" in done.stderr
    assert f"Fix: pipx install {wheel}" in done.stderr, done.stderr
    # Installed by pipx or uv in ~/.local/bin, which is not on PATH: ensurepath is the fix.
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "memlane").symlink_to(standalone / "bin" / "memlane")
    done = memlane(standalone, ["install", "claude-code", "--project", str(tmp_path / "p")], env, tmp_path)
    assert f"installed in {home / '.local' / 'bin'}, which is not on PATH" in done.stderr
    assert "pipx ensurepath" in done.stderr
    doctor = memlane(standalone, ["doctor", "--project", str(tmp_path / "p")], env, tmp_path)
    assert checks(doctor.stdout)["path"] == "FAIL" and "pipx ensurepath" in doctor.stdout


def test_the_standalone_client_installs_the_opencode_plugin_it_ships(standalone, tmp_path):
    env = clean_env(HOME=str(tmp_path), MEMLANE_URL=f"http://127.0.0.1:{free_port()}")
    done = memlane(standalone, ["install", "opencode", "--project", str(tmp_path / "p")], env, tmp_path)
    assert done.returncode == 0, done.stderr
    copied = tmp_path / "p" / ".opencode" / "plugins" / "memory-lane.ts"
    assert copied.read_text() == (ROOT / "clients" / "opencode" / "src" / "memory-lane.ts").read_text()


def test_the_root_marketplace_lists_the_plugin_folder():
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert marketplace["name"] == "memory-lane" and marketplace["owner"]["name"]
    (plugin,) = marketplace["plugins"]
    assert plugin["name"] == "memory-lane" and plugin["source"].startswith("./")
    folder = ROOT / plugin["source"]
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == plugin["name"] and manifest["version"] == plugin["version"]
    # The plugin runs the installed client, found on PATH.
    server = json.loads((folder / ".mcp.json").read_text())["mcpServers"]["memory-lane"]
    assert server["command"] == "memlane"
    hooks = json.loads((folder / "hooks" / "hooks.json").read_text())["hooks"]
    assert all(
        h["command"].startswith("memlane hook ") for g in hooks.values() for e in g for h in e["hooks"]
    )


def test_the_pinned_claude_code_adds_the_marketplace_and_installs_the_plugin(standalone, teammate, tmp_path):
    assert CLAUDE.exists(), f"{CLAUDE} is missing: `make agent-clients` installs the pinned clients"
    env = {
        **teammate,
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }

    def claude(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(CLAUDE), "plugin", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    claude("validate", str(ROOT))
    claude("marketplace", "add", str(ROOT))
    claude("install", "memory-lane@memory-lane")
    listed = claude("list")
    assert "memory-lane@memory-lane" in listed.stdout and "enabled" in listed.stdout
    # Doctor sees the plugin in an otherwise unconfigured project, and everything passes.
    project = tmp_path / "fresh"
    project.mkdir()
    done = memlane(standalone, ["doctor"], env, project)
    assert done.returncode == 0, done.stdout
    assert checks(done.stdout)["claude-code plugin"] == "OK"
