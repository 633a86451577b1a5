"""Connect an agent in a real browser (Debian's Chromium driven by Playwright) against the real web
process — uvicorn with memorylane.asgi, Django and /mcp together, as `make run` starts it — so that
the commands the page shows can be run as shown: a member signs in, opens the page from the
navigation, mints a token without a page load, and then the MCP check lists the memory tools,
`memlane install claude-code` and `memlane doctor` connect a project, the API answers the token,
and once it is revoked on API tokens the same check is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

from tests.dashboard.test_browser import SCREENSHOTS, Visit
from tests.integrations.conftest import api, uvicorn_server

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # as in test_browser.py: ORM calls beside Playwright

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REPO = "https://git.example.com/acme/memory-lane.git"
COMMAND_SECONDS = 60
MEMORY_TOOLS = {"memory_lane_find", "memory_lane_store", "memory_lane_feedback", "memory_lane_context"}


@pytest.fixture
def server(test_database_url, tmp_path):
    extra = {"MEMORYLANE_REPO_URL": REPO}
    with uvicorn_server(test_database_url, tmp_path / "uvicorn.log", extra_env=extra) as base:
        yield base


def shell(command: str, *, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run a command exactly as the page shows it, as a person pasting it into bash would."""
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_SECONDS
    )


def mcp_tools(answer: str) -> set[str]:
    data = next((line[5:] for line in answer.splitlines() if line.startswith("data:")), answer)
    return {tool["name"] for tool in json.loads(data)["result"]["tools"]}


def test_a_member_mints_a_token_and_the_commands_shown_connect_an_agent(
    browser,  # noqa: F811 - the imported fixture
    server,
    member,
    active_memory,
    tmp_path,
):
    visit = Visit(browser, SimpleNamespace(url=server), "mia", "pw-mia-12345")
    page = visit.page
    visit.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("link", name="Connect an agent").click()
    expect(page.get_by_role("heading", name="Connect an agent", level=1)).to_be_visible()
    expect(page.locator("#new-key")).to_have_count(0)
    visit.mark()
    page.get_by_label("Name").fill("laptop claude-code")
    expect(page.get_by_label("write")).to_be_checked()
    page.get_by_role("button", name="Create token and show the commands").click()
    key_field = page.locator("#new-key")
    expect(key_field).to_be_visible()
    visit.assert_not_reloaded()  # htmx swapped the block in
    key = key_field.input_value()
    assert key.startswith("ml_")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "connect-laptop.png"), full_page=True)

    claude_code = page.locator("#steps-claude-code code").all_text_contents()
    assert claude_code == [
        f'pipx install "git+{REPO}#subdirectory=clients"',
        f"memlane install claude-code --url {server} --token {key}",
        "memlane doctor",
    ]
    plugin = page.locator("#steps-claude-code-plugin code").all_text_contents()
    assert plugin == [
        f"memlane config --url {server} --token {key}",
        f"/plugin marketplace add {REPO}",
        "/plugin install memory-lane@memory-lane",
    ]
    assert f"memlane install opencode --url {server} --token {key}" in (
        page.locator("#steps-opencode code").all_text_contents()
    )
    expect(page.locator("#mcp-url")).to_have_value(f"{server}/mcp")
    expect(page.locator("#mcp-header")).to_have_value(f"Authorization: Bearer {key}")
    entry = json.loads(page.locator("#mcp-json").text_content())["mcpServers"]["memory-lane"]
    assert entry["url"] == f"{server}/mcp" and entry["headers"] == {"Authorization": f"Bearer {key}"}

    # A Copy button copies its command as shown.
    row = page.locator("#steps-claude-code li").nth(1)
    row.get_by_role("button", name="Copy").click()
    expect(row.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == claude_code[1]

    # The commands, run as shown, on a machine with memlane on PATH and nothing configured.
    project = tmp_path / "billing-api"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        MEMLANE_STATE_DIR=str(tmp_path / "state"),
    )
    check = page.locator("#mcp-check").text_content()
    listed = shell(check, cwd=project, env=env)
    assert listed.returncode == 0 and mcp_tools(listed.stdout) >= MEMORY_TOOLS, listed
    installed = shell(claude_code[1], cwd=project, env=env)
    assert installed.returncode == 0, installed
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["memory-lane"]["args"] == ["mcp"]
    saved = json.loads((tmp_path / "home" / ".config" / "memlane" / "config.json").read_text())
    assert saved == {"url": server, "token": key}
    doctor = shell(claude_code[2], cwd=project, env=env)
    for line in ("OK    config", "OK    token", "OK    mcp"):
        assert line in doctor.stdout, doctor.stdout + doctor.stderr
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    status, found = api(server, key, "GET", f"/observations/{active_memory.pk}")
    assert status == 200 and found["id"] == str(active_memory.pk)

    # Listed on API tokens, where revoking it stops it at once.
    visit.go("/tokens/")
    token_row = page.locator("tr", has_text="laptop claude-code")
    expect(token_row).to_contain_text(key[: key.index("_", len("ml_"))])
    page.once("dialog", lambda dialog: dialog.accept())
    token_row.get_by_role("button", name="Revoke").click()
    expect(token_row).to_contain_text("revoked")
    refused = shell(check, cwd=project, env=env)
    assert "401" in refused.stdout + refused.stderr or "invalid_token" in refused.stdout, refused
    assert api(server, key, "GET", f"/observations/{active_memory.pk}")[0] == 401
    visit.close()

    # On a phone the commands wrap: the page scrolls down, never sideways.
    phone = Visit(browser, SimpleNamespace(url=server), "mia", "pw-mia-12345", size="phone")
    phone.go("/connect/")
    phone.page.get_by_role("button", name="Create token and show the commands").click()
    expect(phone.page.locator("#new-key")).to_be_visible()
    overflow = phone.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"Connect an agent is {overflow}px wider than the phone screen"
    phone.page.screenshot(path=str(SCREENSHOTS / "connect-phone.png"), full_page=True)
    phone.close()
