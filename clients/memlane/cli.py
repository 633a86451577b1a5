"""Entry point of the ``memlane`` console script.

Commands that talk to the server fail open: when the server is down, slow or failing they print
one line on stderr and exit 0 (hooks print nothing at all). A request the server refuses (4xx,
e.g. an ambiguous entity name) is the caller's to fix: its message goes to stderr, exit 1.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__

CHOICES_TYPE = [
    "correction", "decision", "commitment", "insight", "learning",
    "confidence", "pattern_seed", "cross_agent", "workflow_note", "gap",
]  # fmt: skip
CHOICES_CATEGORY = ["convention", "gotcha", "debugging", "architecture", "workflow"]
CHOICES_PRIORITY = ["critical", "moderate", "ephemeral"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memlane", description="Memory Lane client: team memory for coding agents."
    )
    p.add_argument("--version", action="version", version=f"memlane {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("remember", help="store a memory")
    s.add_argument("text", nargs="+")
    s.add_argument("--type", choices=CHOICES_TYPE)
    s.add_argument("--category", choices=CHOICES_CATEGORY)
    s.add_argument("--priority", choices=CHOICES_PRIORITY)
    s.add_argument("--entity", action="append", default=[], help="slug or name (repeatable)")
    s.add_argument("--tag", action="append", default=[])
    s.add_argument("--json", action="store_true", help="print the server's JSON answer")

    s = sub.add_parser("recall", help="search the team's memory")
    s.add_argument("query", nargs="+")
    s.add_argument("--limit", type=int)
    s.add_argument("--entity", action="append", default=[])
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("feedback", help="rate a memory helpful, harmful or irrelevant")
    s.add_argument("id")
    s.add_argument("signal", choices=["helpful", "harmful", "irrelevant"])
    s.add_argument("--note", default="")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("context", help="print the session-start context block")
    s.add_argument("--project")
    s.add_argument("--query")
    s.add_argument("--budget", type=int)
    s.add_argument("--session")

    s = sub.add_parser("export", help="print MEMORY.md, or write it to a file")
    s.add_argument("--write", metavar="PATH")
    s.add_argument("--project")

    s = sub.add_parser(
        "harvest", help="upload this repository's Claude Code Auto Memory notes as team candidates"
    )
    s.add_argument("--dry-run", action="store_true", help="print what would be uploaded; change nothing")
    s.add_argument("--include-personal", action="store_true", help="also user-type and untyped notes")
    s.add_argument("--cwd", metavar="DIR", help="the project directory (default: here)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")

    s = sub.add_parser(
        "import-rules", help="upload CLAUDE.md and .claude/rules/*.md, item by item, as candidates"
    )
    s.add_argument("--dry-run", action="store_true", help="print what would be uploaded; change nothing")
    s.add_argument("--cwd", metavar="DIR", help="the project directory (default: here)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")

    s = sub.add_parser(
        "write-back",
        help="write the team's block to .claude/rules/memory-lane-team.md (what SessionStart starts)",
    )
    s.add_argument("--cwd", metavar="DIR", help="the project directory (default: here)")

    s = sub.add_parser("install", help="wire a project to Memory Lane")
    s.add_argument("target", choices=["claude-code", "opencode"])
    s.add_argument("--project", metavar="DIR", help="the project directory (default: here)")
    s.add_argument("--url", help="also save the server URL in the config file")
    s.add_argument("--token", help="also save the API token in the config file")

    s = sub.add_parser("config", help="show the configuration, or save --url/--token to the config file")
    s.add_argument("--url")
    s.add_argument("--token")

    s = sub.add_parser("hook", help="run a Claude Code hook (payload on stdin)")
    s.add_argument(
        "event", help="session-start, user-prompt-submit, post-tool-use, stop, pre-compact, session-end"
    )

    s = sub.add_parser("upload-transcript", help="upload a Claude Code transcript (what SessionEnd starts)")
    s.add_argument("--session-id", required=True)
    s.add_argument("--transcript", required=True)
    s.add_argument("--cwd")
    s.add_argument("--agent", default="claude-code")
    s.add_argument("--end", action="store_true", help="also end the session with its outcome")
    s.add_argument("--reason", default="")

    sub.add_parser("upload-pending", help="try again the uploads that found the server down")

    sub.add_parser(
        "mcp-headers",
        help="print the MCP headers as JSON: token, agent, current session (Claude Code headersHelper)",
    )
    sub.add_parser("mcp", help="the Memory Lane MCP server over stdio, relayed to the configured server")

    s = sub.add_parser("doctor", help="check config, server, token, MCP, PATH and project; say what to fix")
    s.add_argument("--project", metavar="DIR", help="the project to check (default: here)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from . import config as configuration

    config = configuration.load()
    if args.command == "hook":
        from . import hooks

        return hooks.run(args.event, config)
    from . import client

    try:
        return COMMANDS[args.command](args, config)
    except client.Unavailable as error:
        print(
            f"memlane: the server at {config['url']} is unavailable ({error}); nothing done.", file=sys.stderr
        )
        return 0
    except client.ApiError as error:
        print(f"memlane: {error.describe()}", file=sys.stderr)
        return 1


def _print_json(data) -> None:
    import json

    print(json.dumps(data, indent=2, ensure_ascii=False))


def remember(args, config) -> int:
    from . import client

    body = {"content": " ".join(args.text), "entities": args.entity, "tags": args.tag}
    body.update(
        {
            k: v
            for k, v in (("type", args.type), ("category", args.category), ("priority", args.priority))
            if v
        }
    )
    result = client.request(config, "POST", "/api/v1/observations", body=body)
    if args.json:
        _print_json(result)
    else:
        memory = result["memory"]
        print(
            f"{result['operation']} {memory['id']} ({memory['type']}, {memory['status']}): {memory['content']}"
        )
    return 0


def recall(args, config) -> int:
    from . import client

    query = {"q": " ".join(args.query), "limit": args.limit or config["recall_limit"]}
    if args.entity:
        query["entities"] = ",".join(args.entity)
    result = client.request(config, "GET", "/api/v1/search", query=query)
    if args.json:
        _print_json(result)
        return 0
    for hit in result["results"]:
        memory = hit["memory"]
        print(
            f"- [{memory['id']}] ({memory['type']}, {memory['maturity']}, {hit['score']:.3f}) {memory['content']}"
        )
    if not result["results"]:
        print("No memories match.", file=sys.stderr)
    return 0


def feedback(args, config) -> int:
    from . import client

    body = {"memory_id": args.id, "signal": args.signal, "note": args.note}
    result = client.request(config, "POST", "/api/v1/feedback", body=body)
    if args.json:
        _print_json(result)
    else:
        memory = result["memory"]
        print(
            f"{args.signal}: {memory['id']} now scores {memory['feedback_score']:.2f} ({memory['maturity']})"
        )
    return 0


def context(args, config) -> int:
    from . import client
    from .config import project_slug

    query = {
        "project": args.project or project_slug(config, None),
        "q": args.query,
        "budget_tokens": args.budget or config["context_budget_tokens"],
        "session_id": args.session,
        "format": "markdown",
    }
    print(client.request(config, "GET", "/api/v1/context", query=query, raw=True))
    return 0


def export(args, config) -> int:
    from pathlib import Path

    from . import client

    markdown = client.request(config, "GET", "/api/v1/export", query={"project": args.project}, raw=True)
    if args.write:
        path = Path(args.write)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown)
        print(f"wrote {path}", file=sys.stderr)
    else:
        sys.stdout.write(markdown)
    return 0


def install(args, config) -> int:
    from . import config as configuration
    from .install import install as run_install

    updates = {k: v for k, v in (("url", args.url), ("token", args.token)) if v}
    if updates:
        path = configuration.write(updates)
        print(f"saved {', '.join(updates)} in {path}")
        config = configuration.load()
    for line in run_install(args.target, config, args.project):
        print(f"memlane: {line}")
    return 0


def show_config(args, config) -> int:
    from . import config as configuration

    updates = {k: v for k, v in (("url", args.url), ("token", args.token)) if v}
    if updates:
        print(f"saved {', '.join(updates)} in {configuration.write(updates)}")
        config = configuration.load()
    shown = {**config, "token": (config["token"][:8] + "…") if config["token"] else ""}
    _print_json({"config_file": str(configuration.config_path()), **shown})
    return 0


def upload_transcript(args, config) -> int:
    from . import client, upload

    request = {
        "session_id": args.session_id,
        "transcript_path": args.transcript,
        "cwd": args.cwd,
        "agent": args.agent,
        "end": args.end,
        "reason": args.reason,
    }
    try:
        summary = upload.upload_transcript(config, **request)
    except client.Unavailable as error:  # the server is down: keep it for the next SessionStart
        upload.keep_for_later(config, request)
        upload.log_line(config, f"{args.session_id}: kept for later: {error!r}")
        raise
    except Exception as error:  # noqa: BLE001 - detached: log it, never raise into nowhere
        upload.log_line(config, f"{args.session_id}: failed: {error!r}")
        raise
    upload.done_with(config, args.session_id)
    upload.log_line(config, f"{args.session_id}: {summary}")
    _print_json(summary)
    return 0


def upload_pending(args, config) -> int:
    from . import upload

    _print_json(upload.upload_pending(config))
    return 0


def _harvested(args, config, name: str, run) -> int:
    import os

    from . import client, upload

    detached = bool(os.environ.get("MEMLANE_DETACHED"))
    try:
        summary = run()
    except client.Unavailable as error:
        if detached:
            upload.log_line(config, f"{name}: server unavailable ({error}); the next run tries again")
        raise
    lines = summary.lines(f"memlane {name}")
    if detached:
        upload.log_line(config, lines[0])
    if args.json:
        _print_json(summary.as_json())
    else:
        print("\n".join(lines))
    return 0


def harvest(args, config) -> int:
    from .harvest import harvest as run

    return _harvested(
        args,
        config,
        "harvest",
        lambda: run(config, args.cwd, include_personal=args.include_personal, dry_run=args.dry_run),
    )


def import_rules(args, config) -> int:
    from .harvest import import_rules as run

    return _harvested(args, config, "import-rules", lambda: run(config, args.cwd, dry_run=args.dry_run))


def write_back(args, config) -> int:
    import os

    from . import upload
    from .writeback import write_back as run

    outcome = run(config, args.cwd, timeout=config["upload_timeout"])
    if os.environ.get("MEMLANE_DETACHED"):
        upload.log_line(config, f"write-back: {outcome}")
    print(f"memlane: {outcome}", file=sys.stderr)
    return 0


def mcp_headers(args, config) -> int:
    import json

    from .mcp import headers

    print(json.dumps(headers(config)))
    return 0


def mcp(args, config) -> int:
    from .mcp import serve

    return serve(config)


def doctor(args, config) -> int:
    from .doctor import run

    return run(config, args.project)


COMMANDS = {
    "remember": remember,
    "recall": recall,
    "feedback": feedback,
    "context": context,
    "export": export,
    "install": install,
    "config": show_config,
    "upload-transcript": upload_transcript,
    "upload-pending": upload_pending,
    "harvest": harvest,
    "import-rules": import_rules,
    "write-back": write_back,
    "mcp-headers": mcp_headers,
    "mcp": mcp,
    "doctor": doctor,
}
