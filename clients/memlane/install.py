"""``memlane install claude-code|opencode``: wire a project to Memory Lane. Idempotent: running it
again replaces its own entries and never duplicates them; other settings are kept."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

from . import MODULE

TEAM_MEMORY = ".claude/team-memory.md"
IMPORT_LINE = f"@{TEAM_MEMORY}"
IMPORT_BLOCK = (
    f"\n<!-- Memory Lane: the team's MEMORY.md (memlane export --write {TEAM_MEMORY}) -->\n{IMPORT_LINE}\n"
)
OURS = re.compile(r"memlane['\"]?\s+hook\s")
SERVER_NAME = "memory-lane"
MCP_PERMISSION = f"mcp__{SERVER_NAME}"
OPENCODE_PLUGIN_VERSION = "1.18.33"
# The OpenCode plugin: in the repository (clients/opencode/src), or shipped inside the installed client.
OPENCODE_SOURCES = [
    Path(__file__).resolve().parent.parent / "opencode" / "src" / "memory-lane.ts",
    Path(__file__).resolve().parent / "opencode" / "memory-lane.ts",
]

# Claude Code hook events → (matcher, memlane event, extra fields). Timeouts are Claude Code's, in
# seconds, above memlane's own timeout (it gives up first and exits 0).
CLAUDE_HOOKS = [
    ("SessionStart", "startup|resume|clear|compact", "session-start", {}),
    ("UserPromptSubmit", None, "user-prompt-submit", {}),
    ("PostToolUse", "Edit|Write|MultiEdit|NotebookEdit", "post-tool-use", {"async": True}),
    ("Stop", None, "stop", {}),
    ("PreCompact", None, "pre-compact", {}),
    ("SessionEnd", None, "session-end", {}),
]
HOOK_TIMEOUT_SECONDS = 10


def memlane_command() -> str:
    """How hooks call this CLI: the absolute path of the installed script when there is one."""
    found = shutil.which("memlane")
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "memlane" and script.exists():
        return shlex.quote(str(script))
    if found:
        return shlex.quote(str(Path(found).resolve()))
    return f"{shlex.quote(sys.executable)} -m {MODULE}"


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def ensure_line(path: Path, line: str, block: str) -> bool:
    """Append ``block`` to ``path`` unless a line equal to ``line`` is there; True if appended."""
    text = path.read_text() if path.exists() else ""
    if any(existing.strip() == line for existing in text.splitlines()):
        return False
    path.write_text((text.rstrip("\n") + "\n\n" if text.strip() else "") + block.lstrip("\n"))
    return True


def claude_hooks(settings: dict, command: str) -> dict:
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    for event, groups in list(hooks.items()):  # drop our previous entries, keep everyone else's
        kept = []
        for group in groups if isinstance(groups, list) else []:
            entries = [
                h
                for h in group.get("hooks", [])
                if not (isinstance(h, dict) and OURS.search(str(h.get("command"))))
            ]
            if entries:
                kept.append({**group, "hooks": entries})
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    for event, matcher, name, extra in CLAUDE_HOOKS:
        group: dict = {
            "hooks": [
                {
                    "type": "command",
                    "command": f"{command} hook {name}",
                    "timeout": HOOK_TIMEOUT_SECONDS,
                    **extra,
                }
            ]
        }
        if matcher:
            group = {"matcher": matcher, **group}
        hooks.setdefault(event, []).append(group)
    return {**settings, "hooks": hooks}


def refresh_team_memory(config: dict, project: Path) -> str:
    from . import client

    target = project / TEAM_MEMORY
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        markdown = client.request(config, "GET", "/api/v1/export", raw=True)
    except (client.Unavailable, client.ApiError) as error:
        if not target.exists():
            target.write_text(
                f"# Team memory\n\n(Not exported yet: run `memlane export --write {TEAM_MEMORY}`.)\n"
            )
        return f"kept {TEAM_MEMORY} (export failed: {error})"
    target.write_text(markdown)
    return f"exported {TEAM_MEMORY}"


def remove_block(path: Path, block: str) -> bool:
    """Remove ``block`` (exactly as we appended it) from ``path``; True if it was there."""
    try:
        text = path.read_text()
    except OSError:
        return False
    stripped = block.strip("\n")
    if stripped not in text:
        return False
    path.write_text(text.replace(stripped, "").rstrip("\n") + "\n")
    return True


def write_team_rules(config: dict, project: Path) -> str:
    """The team block in ``project``'s ``.claude/rules/`` (never over a user's file there); a
    placeholder when the server cannot be asked — the next SessionStart fills it."""
    from . import client
    from .writeback import RULES_FILE, ensure_placeholder, write_team_block

    try:
        return write_team_block(config, project)
    except (client.Unavailable, client.ApiError) as error:
        ensure_placeholder(project / RULES_FILE)
        return f"kept {RULES_FILE} (export failed: {error})"


def allow_memory_tools(settings: dict) -> dict:
    """The permission rule that lets the agent call every Memory Lane MCP tool without a prompt
    (headless ``claude -p`` included): ``mcp__memory-lane`` allows all tools of that server."""
    permissions = settings.get("permissions") if isinstance(settings.get("permissions"), dict) else {}
    allow = permissions.get("allow") if isinstance(permissions.get("allow"), list) else []
    if MCP_PERMISSION not in allow:
        allow = [*allow, MCP_PERMISSION]
    return {**settings, "permissions": {**permissions, "allow": allow}}


def install_claude_code(config: dict, project: Path) -> list[str]:
    command = memlane_command()
    done = []
    settings_path = project / ".claude" / "settings.local.json"
    settings = allow_memory_tools(claude_hooks(read_json(settings_path), command))
    write_json(settings_path, settings)
    done.append(f"hooks and the {MCP_PERMISSION} permission in {settings_path.relative_to(project)}")
    mcp_path = project / ".mcp.json"
    mcp = read_json(mcp_path)
    servers = mcp.get("mcpServers") if isinstance(mcp.get("mcpServers"), dict) else {}
    # A file teams commit: the bare command (found on each teammate's PATH), no machine's path, and
    # the server URL and token from each teammate's own memlane configuration.
    servers[SERVER_NAME] = {"type": "stdio", "command": "memlane", "args": ["mcp"]}
    write_json(mcp_path, {**mcp, "mcpServers": servers})
    done.append(f"MCP server '{SERVER_NAME}' in .mcp.json (memlane mcp)")
    # Claude Code loads .claude/rules/*.md by itself: the team block goes there (writeback.py), and
    # the @-import an earlier install put in CLAUDE.md would load an older copy of it beside it.
    if remove_block(project / "CLAUDE.md", IMPORT_BLOCK):
        done.append(f"removed the {IMPORT_LINE} import from CLAUDE.md (the block is in .claude/rules/ now)")
    done.append(write_team_rules(config, project))
    from .doctor import path_problem

    if problem := path_problem():  # .mcp.json names the bare command: it must be on PATH
        print(f"memlane: warning: Claude Code will not start the memory tools: {problem}", file=sys.stderr)
    return done


def install_opencode(config: dict, project: Path) -> list[str]:
    done = []
    plugins = project / ".opencode" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    source = next(path for path in OPENCODE_SOURCES if path.is_file())
    shutil.copyfile(source, plugins / "memory-lane.ts")
    done.append(".opencode/plugins/memory-lane.ts")
    package_path = project / ".opencode" / "package.json"
    package = read_json(package_path)
    dependencies = package.get("dependencies") if isinstance(package.get("dependencies"), dict) else {}
    dependencies["@opencode-ai/plugin"] = dependencies.get("@opencode-ai/plugin") or OPENCODE_PLUGIN_VERSION
    write_json(package_path, {**package, "dependencies": dependencies})
    done.append("@opencode-ai/plugin in .opencode/package.json")
    opencode_path = project / "opencode.json"
    opencode = read_json(opencode_path) or {"$schema": "https://opencode.ai/config.json"}
    instructions = opencode.get("instructions") if isinstance(opencode.get("instructions"), list) else []
    if TEAM_MEMORY not in instructions:
        instructions.append(TEAM_MEMORY)
    write_json(opencode_path, {**opencode, "instructions": instructions})
    done.append(f"{TEAM_MEMORY} in opencode.json instructions")
    if ensure_line(project / "AGENTS.md", IMPORT_LINE, IMPORT_BLOCK):
        done.append(f"{IMPORT_LINE} in AGENTS.md")
    done.append(refresh_team_memory(config, project))
    return done


def install(target: str, config: dict, project: str | None) -> list[str]:
    root = Path(project or os.getcwd()).resolve()
    root.mkdir(parents=True, exist_ok=True)
    return install_claude_code(config, root) if target == "claude-code" else install_opencode(config, root)
