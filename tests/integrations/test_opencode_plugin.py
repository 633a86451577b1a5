"""The OpenCode plugin's own tests (node --test, after tsc type-checks the plugin against the real
@opencode-ai/plugin types), run against the live server so `make test` stays one command."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.workers import ROOT

pytestmark = pytest.mark.slow

PLUGIN = ROOT / "clients" / "opencode"


def ensure_node_modules() -> None:
    """`make test` installs them (make node-deps); this covers a bare pytest run."""
    installed = PLUGIN / "node_modules" / ".package-lock.json"
    lock = PLUGIN / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"],
            cwd=PLUGIN,
            check=True,
            capture_output=True,
            timeout=600,
        )


def test_the_opencode_plugin_passes_its_node_tests(lane_server, tokens):
    assert shutil.which("node") and shutil.which("npm"), (
        "node and npm are needed for the OpenCode plugin tests"
    )
    ensure_node_modules()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(
        MEMLANE_URL=lane_server, MEMLANE_TOKEN=tokens["member"], MEMLANE_CONFIG=str(PLUGIN / "no-config.json")
    )
    done = subprocess.run(["npm", "test"], cwd=PLUGIN, env=env, capture_output=True, text=True, timeout=600)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "# pass 4" in report and "# fail 0" in report, report
