"""Hook latency and CLI start time: ``python -m bench.hooks [--runs 50] [--url URL --token TOKEN]``.

Against a running server (``make run``; MEMLANE_URL / MEMLANE_TOKEN or the memlane config file
when --url/--token are not given), runs the installed ``memlane`` console script the way Claude
Code does — a new process per hook, the payload on stdin — and reports wall-clock p50/p95/max of
``hook session-start`` (a new session each run, so the full context is fetched every time),
``hook user-prompt-submit``, ``hook session-end`` (the detached upload not included, by design)
and ``memlane --version`` (interpreter start-up plus imports). Prints a table, then one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.stats import summary

MEMLANE = str(Path(sys.executable).parent / "memlane")
TRANSCRIPT = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "integrations"
    / "fixtures"
    / "claude_code"
    / "transcript.jsonl"
)


def timed(args: list[str], env: dict, stdin: str = "") -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run([MEMLANE, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    return (time.perf_counter() - started) * 1000, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--version-runs", type=int, default=20)
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()

    env = dict(os.environ)
    if args.url:
        env["MEMLANE_URL"] = args.url
    if args.token:
        env["MEMLANE_TOKEN"] = args.token
    state = tempfile.mkdtemp(prefix="memlane-bench-")
    env["MEMLANE_STATE_DIR"] = state
    cwd = "/home/dev/billing-api"

    results: dict[str, dict] = {}
    _, warm = timed(["hook", "session-start"], env, json.dumps({"session_id": "bench-warmup", "cwd": cwd}))
    if not warm.stdout:
        print(
            "memlane hook session-start printed nothing: is the server up, the token valid, and is there "
            "a memory to show (store a few first)?",
            file=sys.stderr,
        )
        return 1
    context_chars = len(json.loads(warm.stdout)["hookSpecificOutput"]["additionalContext"])

    # First, while no detached uploader competes for the CPU.
    version = [timed(["--version"], env)[0] for _ in range(args.version_runs)]
    results["memlane --version (start time)"] = summary(version)

    start = []
    for _ in range(args.runs):
        payload = {
            "session_id": f"bench-{uuid.uuid4()}",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": cwd,
        }
        ms, done = timed(["hook", "session-start"], env, json.dumps(payload))
        assert done.returncode == 0 and done.stdout, done
        start.append(ms)
    results["hook session-start"] = summary(start)

    prompt = []
    for _ in range(args.runs):
        payload = {
            "session_id": f"bench-{uuid.uuid4()}",
            "prompt": "how do we retry failed payments?",
            "cwd": cwd,
        }
        ms, done = timed(["hook", "user-prompt-submit"], env, json.dumps(payload))
        assert done.returncode == 0, done
        prompt.append(ms)
    results["hook user-prompt-submit"] = summary(prompt)

    end = []
    for _ in range(min(args.runs, 20)):
        payload = {
            "session_id": f"bench-{uuid.uuid4()}",
            "transcript_path": str(TRANSCRIPT),
            "cwd": cwd,
            "reason": "other",
        }
        ms, done = timed(["hook", "session-end"], env, json.dumps(payload))
        assert done.returncode == 0 and not done.stdout, done
        end.append(ms)
    results["hook session-end (returns; upload detached)"] = summary(end)

    width = max(map(len, results))
    print(f"{'command'.ljust(width)}  runs     p50      p95      max")
    for name, row in results.items():
        print(
            f"{name.ljust(width)}  {row['n']:>4}  {row['p50_ms']:>6.1f}  {row['p95_ms']:>7.1f}  {row['max_ms']:>7.1f}  ms"
        )
    print(f"(session-start context: {context_chars} characters)")
    print(json.dumps({"context_chars": context_chars, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
