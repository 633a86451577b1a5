"""Connect an agent (DESIGN.md §6, §7): the signed-in person mints a token of their own membership
of the current team — through the API tokens page's minting, so the same rules hold: scopes never
above the role, an optional project allow-list — and gets, per client, the commands to paste with
the server's URL and that token filled in. The token is shown once and is listed, revocable, on
the API tokens page."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from django.conf import settings
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from dashboard.permissions import member_required
from dashboard.views.common import render_page
from dashboard.views.tokens import mint, token_form

TEMPLATE = "dashboard/connect.html"
# Where the client's package sits in the repository (its own pyproject.toml).
CLIENT_SUBDIRECTORY = "clients"
MCP_PATH = "/mcp"
# The names `memlane install` and the marketplace at the repository root give the server and plugin.
MCP_SERVER_NAME = "memory-lane"
PLUGIN = "memory-lane@memory-lane"
JSON_INDENT = 2
# The check asks for the tool list: the stateless server answers it without an initialize first.
MCP_CHECK_BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, separators=(",", ":"))


@dataclass(frozen=True)
class Step:
    """One thing to paste: ``command`` into a shell, or into Claude Code when ``inside`` says so."""

    text: str
    command: str
    inside: str = ""


def server_url(request) -> str:
    """The server as agents reach it: the configured public URL, else the one this page was opened at."""
    return (settings.MEMORY_LANE["PUBLIC_URL"] or request.build_absolute_uri("/")).rstrip("/")


def guides(*, url: str, key: str) -> dict:
    """Per client, the steps that connect it to ``url`` with the token ``key``."""
    repo = settings.MEMORY_LANE["CLIENT_REPO_URL"]
    spec = f"git+{repo}#subdirectory={CLIENT_SUBDIRECTORY}"
    credentials = f"--url {shlex.quote(url)} --token {shlex.quote(key)}"
    install_client = Step(
        f'Install the client, once per machine (standard-library Python; or: uv tool install "{spec}").',
        f'pipx install "{spec}"',
    )
    doctor = Step("Check the server, the token and the MCP connection.", "memlane doctor")
    mcp_url = f"{url}{MCP_PATH}"
    header = f"Authorization: Bearer {key}"
    entry = {
        "mcpServers": {
            MCP_SERVER_NAME: {"type": "http", "url": mcp_url, "headers": {"Authorization": f"Bearer {key}"}}
        }
    }
    return {
        "claude_code": [
            install_client,
            Step(
                "In your project: the hooks, the memory tools and the team's memory file. Saves the URL "
                "and token in your memlane config (~/.config/memlane/config.json, mode 0600).",
                f"memlane install claude-code {credentials}",
            ),
            doctor,
        ],
        "claude_code_plugin": [
            Step(
                "Save the URL and token for memlane (the plugin runs memlane from your PATH).",
                f"memlane config {credentials}",
            ),
            Step("Add the marketplace.", f"/plugin marketplace add {repo}", inside="Claude Code"),
            Step("Install the plugin.", f"/plugin install {PLUGIN}", inside="Claude Code"),
        ],
        "opencode": [
            install_client,
            Step(
                "In your project: the plugin and the team's memory file (saves the URL and token as above).",
                f"memlane install opencode {credentials}",
            ),
            doctor,
        ],
        "environment": f"export MEMLANE_URL={shlex.quote(url)}\nexport MEMLANE_TOKEN={shlex.quote(key)}",
        "mcp_url": mcp_url,
        "mcp_header": header,
        "mcp_json": json.dumps(entry, indent=JSON_INDENT),
        "mcp_check": (
            f"curl -sS {shlex.quote(mcp_url)} -H {shlex.quote(header)} "
            "-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "
            f"-d {shlex.quote(MCP_CHECK_BODY)}"
        ),
    }


@never_cache  # the answer to a POST holds a token that exists nowhere else
@require_http_methods(["GET", "POST"])
@member_required
def connect(request):
    if request.method == "GET":
        return render_page(request, TEMPLATE, {"form": token_form(request)})
    form = token_form(request, request.POST)
    if (minted := mint(request, form)) is None:
        return render_page(request, TEMPLATE, {"form": form}, partial="connect", status=422)
    token, key = minted
    url = server_url(request)
    context = {
        "form": token_form(request),
        "new_token": token,
        "new_key": key,
        "server_url": url,
        **guides(url=url, key=key),
    }
    return render_page(request, TEMPLATE, context, partial="connect")
