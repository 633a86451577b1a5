"""``memlane doctor``: is this machine ready to use Memory Lane, and if not, what to do.

One line per check, ``OK`` or ``FAIL`` (with the fix on the next line), ``--`` for what does not
apply here: the configuration (URL and token, and where each comes from), the server (reachable,
its version), the token (accepted by an authenticated call), the MCP endpoint (a real ``initialize``
with the token), ``memlane`` on ``PATH``, and the agent configuration of the project. Exit code 0
when nothing failed, 1 otherwise. Unlike the other commands it does not fail open: saying what is
wrong is its job.

The command that installs the client (printed by doctor and by ``memlane install claude-code`` when
``memlane`` is not on ``PATH``) is built here, from where this copy was installed from.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from . import MODULE, __version__
from .install import MCP_PERMISSION, OURS, SERVER_NAME

# Where the client is installed from when this copy cannot tell (installed from an index, or
# copied): the repository's clients/ folder as a pip/pipx/uv requirement. The same default as the
# server's CLIENT_REPO_URL (MEMORYLANE_REPO_URL), which the dashboard's Connect page shows.
REPOSITORY = "https://github.com/memory-lane/memory-lane"
INSTALL_SPEC = "git+{repository}#subdirectory=clients"
DISTRIBUTION = "memlane"
TIMEOUT_SECONDS = 10.0  # per request; above the hooks' budget: doctor waits to get an answer
MCP_PROTOCOL_VERSION = "2025-06-18"
CONNECT_PATH = "/connect/"  # the dashboard page that mints a token
PLUGIN_NAME = "memory-lane"  # the Claude Code plugin (.claude-plugin/marketplace.json)
TOKEN_SHOWN_CHARS = 8


# --- the install command --------------------------------------------------------------------------


def install_spec() -> str:
    """What to give ``pipx install`` / ``uv tool install`` to get this client: the repository and
    revision this copy came from (pip records it, PEP 610), this checkout's ``clients/`` folder when
    it runs from the server's repository, else the repository template."""
    here = Path(__file__).resolve().parent
    if MODULE != DISTRIBUTION:  # clients.memlane, inside the server's repository
        return str(here.parent)
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        origin = json.loads(distribution(DISTRIBUTION).read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, ValueError, OSError):
        origin = {}
    url = str(origin.get("url") or "")
    vcs = origin.get("vcs_info")
    if url and isinstance(vcs, dict):
        revision = f"@{vcs['requested_revision']}" if vcs.get("requested_revision") else ""
        subdirectory = f"#subdirectory={origin['subdirectory']}" if origin.get("subdirectory") else ""
        return f"{vcs.get('vcs', 'git')}+{url}{revision}{subdirectory}"
    if url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        path = Path(unquote(urlparse(url).path))
        if origin.get("subdirectory"):
            path = path / origin["subdirectory"]
        if path.exists():
            return str(path)
    return INSTALL_SPEC.format(repository=REPOSITORY)


def install_command() -> str:
    """The one command that puts ``memlane`` on PATH: uv when it is there and pipx is not."""
    spec = shlex.quote(install_spec())
    if shutil.which("uv") and not shutil.which("pipx"):
        return f"uv tool install {spec}"
    return f"pipx install {spec}"


def tool_bin_dirs() -> list[Path]:
    """Where pipx and uv put the commands they install."""
    found = [os.environ.get(name) for name in ("PIPX_BIN_DIR", "UV_TOOL_BIN_DIR", "XDG_BIN_HOME")]
    return [Path(p).expanduser() for p in found if p] + [Path.home() / ".local" / "bin"]


def path_problem() -> str | None:
    """None when ``memlane`` is on PATH; else what is wrong and the command that fixes it."""
    if shutil.which("memlane"):
        return None
    for directory in tool_bin_dirs():
        if (directory / "memlane").is_file() and os.access(directory / "memlane", os.X_OK):
            return (
                f"memlane is installed in {directory}, which is not on PATH. "
                "Fix: `pipx ensurepath` (or `uv tool update-shell`), then open a new terminal."
            )
    return f"memlane is not on PATH. Fix: {install_command()}"


# --- the checks ---------------------------------------------------------------------------------


class Report:
    def __init__(self) -> None:
        self.failed = False

    def ok(self, name: str, message: str) -> None:
        print(f"OK    {name}: {message}")

    def fail(self, name: str, message: str, fix: str = "") -> None:
        self.failed = True
        print(f"FAIL  {name}: {message}")
        if fix:
            print(f"      fix: {fix}")

    def skip(self, name: str, message: str) -> None:
        print(f"--    {name}: {message}")


def source_of(key: str) -> str:
    from . import config as configuration

    if os.environ.get(f"MEMLANE_{key.upper()}") is not None:
        return f"MEMLANE_{key.upper()}"
    if key in configuration.read_file():
        return str(configuration.config_path())
    return "built-in default"


def check_config(report: Report, config: dict) -> bool:
    url, token = config["url"], config["token"]
    where = f"url {url} (from {source_of('url')})"
    if not token:
        report.fail(
            "config",
            f"{where}; no token (neither MEMLANE_TOKEN nor the config file)",
            f"mint one at {url}{CONNECT_PATH} (or ask an owner), then `memlane config --token <token>`",
        )
        return False
    shown = token[:TOKEN_SHOWN_CHARS] + "…"
    report.ok("config", f"{where}, token {shown} (from {source_of('token')})")
    return True


def check_server(report: Report, config: dict) -> bool:
    """True when a Memory Lane server answers at the URL (even one reporting a broken part)."""
    import urllib.error
    import urllib.request

    url = config["url"]
    try:
        with urllib.request.urlopen(f"{url}/api/v1/health", timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            body = response.read()
    except urllib.error.HTTPError as error:  # 503: the server answers, but a part is down
        body = error.read()
    except (OSError, ValueError) as error:
        report.fail(
            "server",
            f"cannot reach {url} ({getattr(error, 'reason', error)})",
            "start the server, or point memlane at it: `memlane config --url <server URL>`",
        )
        return False
    try:
        health = json.loads(body)
    except ValueError:
        health = None
    if not isinstance(health, dict) or "version" not in health:
        report.fail(
            "server",
            f"{url}/api/v1/health is not a Memory Lane server's answer",
            "check the URL: `memlane config --url <server URL>`",
        )
        return False
    status = health.get("status")
    described = f"{url} answers: Memory Lane {health['version']}, status {status} (client {__version__})"
    if status == "error":
        broken = [part for part in ("database", "broker", "embedder") if health.get(part) != "ok"]
        report.fail("server", f"{described}; broken: {', '.join(broken)}", "ask the server's operator")
        return True  # it answers: the token and MCP checks still say what they can
    report.ok("server", described)
    return True


def check_token(report: Report, config: dict) -> None:
    from . import client

    url = config["url"]
    try:
        client.request(config, "GET", "/api/v1/entities", query={"page_size": 1}, timeout=TIMEOUT_SECONDS)
    except client.ApiError as error:
        if error.status == 401:
            report.fail(
                "token",
                "token refused (HTTP 401)",
                f"mint one at {url}{CONNECT_PATH} or ask an owner, then `memlane config --token <token>`",
            )
        elif error.status == 403:
            report.fail(
                "token",
                f"token accepted but not allowed to read ({error})",
                f"mint one with the read and write scopes at {url}{CONNECT_PATH}",
            )
        else:
            report.fail("token", f"HTTP {error.status}: {error}")
        return
    except client.Unavailable as error:
        report.fail(
            "token", f"the authenticated call failed: {error}", "try again; ask the server's operator"
        )
        return
    report.ok("token", "accepted (an authenticated API call answered)")


def check_mcp(report: Report, config: dict) -> None:
    import urllib.error
    import urllib.request

    from .mcp import headers

    endpoint = f"{config['url']}/mcp"
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "memlane-doctor", "version": __version__},
        },
    }
    request = urllib.request.Request(
        endpoint,
        data=json.dumps(message).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers(config),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            body = response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        if error.code == 401:
            report.fail(
                "mcp",
                f"{endpoint} refused the token (HTTP 401)",
                f"mint one at {config['url']}{CONNECT_PATH} or ask an owner",
            )
        else:
            report.fail("mcp", f"{endpoint} answered HTTP {error.code}", "ask the server's operator")
        return
    except (OSError, ValueError) as error:
        report.fail("mcp", f"cannot reach {endpoint} ({getattr(error, 'reason', error)})")
        return
    # JSON, or one server-sent event whose data line is the JSON-RPC answer.
    data = next((line[5:] for line in body.splitlines() if line.startswith("data:")), body)
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict) or "serverInfo" not in result:
        report.fail("mcp", f"{endpoint} did not answer an MCP initialize: {data[:200]!r}")
        return
    info = result["serverInfo"]
    report.ok(
        "mcp",
        f"{endpoint} initialized: {info.get('name')} {info.get('version')}, "
        f"protocol {result.get('protocolVersion')}",
    )


def check_path(report: Report) -> None:
    problem = path_problem()
    if problem:
        message, _, fix = problem.partition(" Fix: ")
        report.fail("path", message, fix)
        return
    report.ok("path", f"memlane on PATH: {shutil.which('memlane')}")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _runnable(command: str) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return bool(shutil.which(program)) or (os.path.isabs(program) and os.access(program, os.X_OK))


def check_project(report: Report, project: Path) -> None:
    """What ``memlane install claude-code|opencode`` wrote in the project (or the plugin)."""
    found = False
    mcp = _read_json(project / ".mcp.json").get("mcpServers")
    server = mcp.get(SERVER_NAME) if isinstance(mcp, dict) else None
    if isinstance(server, dict):
        found = True
        command = " ".join([str(server.get("command", "")), *map(str, server.get("args") or [])])
        if server.get("command") and not _runnable(str(server["command"])):
            report.fail(
                "claude-code mcp",
                f".mcp.json starts `{command}`, which is not on PATH",
                (path_problem() or "").partition(" Fix: ")[2] or install_command(),
            )
        else:
            report.ok("claude-code mcp", f"'{SERVER_NAME}' in .mcp.json ({command or server.get('url')})")
    settings_path = project / ".claude" / "settings.local.json"
    settings = _read_json(settings_path)
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    commands = [
        str(entry.get("command"))
        for groups in hooks.values()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict)
        for entry in group.get("hooks", [])
        if isinstance(entry, dict) and OURS.search(str(entry.get("command")))
    ]
    if commands:
        found = True
        broken = sorted({c.split(" hook ")[0] for c in commands if not _runnable(c)})
        allowed = MCP_PERMISSION in ((settings.get("permissions") or {}).get("allow") or [])
        if broken:
            report.fail(
                "claude-code hooks",
                f"{settings_path.relative_to(project)} runs {', '.join(broken)}, which is missing",
                "run `memlane install claude-code` again in this project",
            )
        elif server and not allowed:
            report.fail(
                "claude-code hooks",
                f"{len(commands)} hooks, but no {MCP_PERMISSION} permission (the memory tools will prompt)",
                "run `memlane install claude-code` again in this project",
            )
        else:
            report.ok("claude-code hooks", f"{len(commands)} hooks in {settings_path.relative_to(project)}")
    if (project / ".opencode" / "plugins" / "memory-lane.ts").is_file():
        found = True
        report.ok("opencode", ".opencode/plugins/memory-lane.ts")
    user_settings = _read_json(Path.home() / ".claude" / "settings.json")
    enabled = user_settings.get("enabledPlugins")
    enabled = enabled if isinstance(enabled, dict) else {}
    plugin = [name for name, on in enabled.items() if on and name.startswith(f"{PLUGIN_NAME}@")]
    if plugin:
        found = True
        report.ok("claude-code plugin", f"{plugin[0]} enabled in ~/.claude/settings.json")
        if commands:
            report.skip("claude-code plugin", "the plugin and this project's hooks both run: context twice")
    if not found:
        report.skip(
            "project",
            f"no Claude Code or OpenCode configuration in {project}: run `memlane install claude-code` "
            "(or opencode) there, or install the Claude Code plugin",
        )


def run(config: dict, project: str | None = None) -> int:
    print(f"memlane {__version__} ({sys.executable})")
    report = Report()
    has_token = check_config(report, config)
    if check_server(report, config):
        if has_token:
            check_token(report, config)
            check_mcp(report, config)
        else:
            report.skip("token", "not checked (no token)")
            report.skip("mcp", "not checked (no token)")
    else:
        report.skip("token", "not checked (the server is unreachable)")
        report.skip("mcp", "not checked (the server is unreachable)")
    check_path(report)
    check_project(report, Path(project or os.getcwd()).resolve())
    return 1 if report.failed else 0
