"""Each Claude Code hook run as a subprocess (`memlane hook <event>`) with payloads in the shapes
of the Claude Code hooks reference (plus fields it does not know), against the live server."""

from __future__ import annotations

import contextlib
import http.server
import json
import shutil
import socket
import threading
import time

import pytest

from tests.integrations.conftest import FIXTURES, api, free_port, hook_payload, run_memlane

pytestmark = pytest.mark.slow

EVENTS = ["session-start", "user-prompt-submit", "post-tool-use", "stop", "pre-compact", "session-end"]
PAYLOADS = {
    "session-start": "session_start",
    "user-prompt-submit": "user_prompt_submit",
    "post-tool-use": "post_tool_use",
    "stop": "stop",
    "pre-compact": "pre_compact",
    "session-end": "session_end",
}


def store(base: str, token: str, content: str, **fields) -> dict:
    status, body = api(base, token, "POST", "/observations", {"content": content, **fields})
    assert status in (200, 201), body
    return body["memory"]


def wait_for_session(
    base: str, token: str, session_id: str, *, ended: bool, messages: int, seconds: float = 60
):
    deadline = time.monotonic() + seconds
    body = {}
    while time.monotonic() < deadline:
        status, body = api(base, token, "GET", f"/sessions/{session_id}")
        if status == 200 and body["messages"] == messages and (body["ended_at"] is not None) == ended:
            return body
        time.sleep(0.2)
    raise AssertionError(f"the transcript did not arrive: {body}")


def test_session_start_prints_the_hook_json_with_the_team_context(lane_server, tokens, memlane_env):
    critical = store(
        lane_server,
        tokens["member"],
        "Never run the refund backfill on Fridays.",
        priority="critical",
        type="commitment",
    )
    done, seconds = run_memlane(
        ["hook", "session-start"], memlane_env, json.dumps(hook_payload("session_start"))
    )
    assert done.returncode == 0 and done.stderr == ""
    output = json.loads(done.stdout)
    assert set(output) == {"hookSpecificOutput"}
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert critical["id"] in context and "Never run the refund backfill on Fridays." in context
    assert context.startswith('<team-memory source="memory-lane">') and context.endswith("</team-memory>")
    assert len(context) <= 9000
    # The context was recorded as shown to this Claude Code session (and the session registered).
    status, session = api(lane_server, tokens["member"], "GET", "/sessions/cc-session-start-1")
    assert status == 200 and session["recalled"] == 1


def test_session_start_caps_the_context_at_the_configured_size(lane_server, tokens, memlane_env):
    for topic in ("refunds", "invoices", "webhooks", "ledgers", "payouts", "disputes"):
        store(
            lane_server, tokens["member"], f"Critical rule about {topic}: " + topic * 40, priority="critical"
        )
    env = {**memlane_env, "MEMLANE_CONTEXT_MAX_CHARS": "700"}
    done, _ = run_memlane(["hook", "SessionStart"], env, json.dumps(hook_payload("session_start")))
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 700 and context.endswith("</team-memory>")


def test_user_prompt_submit_adds_recalls_for_the_prompt_once(lane_server, tokens, memlane_env):
    memory = store(
        lane_server, tokens["member"], "Refunds must go through the stripe gateway wrapper in payments/."
    )
    payload = json.dumps(hook_payload("user_prompt_submit"))
    done, _ = run_memlane(["hook", "user-prompt-submit"], memlane_env, payload)
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit" and memory["id"] in output["additionalContext"]
    again, _ = run_memlane(["hook", "user-prompt-submit"], memlane_env, payload)
    assert again.returncode == 0 and again.stdout == ""  # already shown in this session
    short, _ = run_memlane(
        ["hook", "user-prompt-submit"], memlane_env, json.dumps({**json.loads(payload), "prompt": "yes"})
    )
    assert short.stdout == ""


def test_stop_and_post_tool_use_print_nothing(lane_server, memlane_env, tmp_path):
    for event in ("stop", "post-tool-use"):
        done, _ = run_memlane(["hook", event], memlane_env, json.dumps(hook_payload(PAYLOADS[event])))
        assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    recorded = list((tmp_path / "state" / "sessions").glob("*.files"))
    assert [path.read_text() for path in recorded] == ["src/refunds/api.py\n"]


def test_session_end_returns_at_once_and_the_transcript_arrives(lane_server, tokens, memlane_env, tmp_path):
    transcript = tmp_path / "cc-session-end-1.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "transcript.jsonl", transcript)
    # PostToolUse saw a file the transcript does not show as edited.
    run_memlane(
        ["hook", "post-tool-use"],
        memlane_env,
        json.dumps(
            hook_payload("post_tool_use", tool_input={"file_path": "/home/dev/billing-api/setup.cfg"})
        ),
    )
    payload = hook_payload("session_end", transcript_path=str(transcript))
    done, seconds = run_memlane(["hook", "session-end"], memlane_env, json.dumps(payload))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert seconds < 1.0, f"SessionEnd took {seconds:.2f} s"

    session = wait_for_session(lane_server, tokens["member"], "cc-session-end-1", ended=True, messages=9)
    assert session["agent"] == "claude-code" and session["project"] == "project:billing-api"
    assert session["error_count"] == 1 and session["retry_count"] == 1 and session["success"] is True
    assert session["duration_ms"] == 6 * 60 * 1000
    assert session["files_touched"] == [
        "src/refunds/service.py",
        "src/refunds/views.py",
        "notebooks/refunds.ipynb",
        "src/refunds/api.py",
        "setup.cfg",
    ]
    assert session["implicit_label"] in {"helpful", "neutral", "harmful"}

    # Ending again (e.g. a second SessionEnd) uploads nothing new and changes nothing.
    run_memlane(["hook", "session-end"], memlane_env, json.dumps(payload))
    time.sleep(2)
    assert (
        wait_for_session(lane_server, tokens["member"], "cc-session-end-1", ended=True, messages=9) == session
    )


def test_a_transcript_that_found_the_server_down_goes_up_at_the_next_session_start(
    lane_server, tokens, memlane_env, tmp_path
):
    transcript = tmp_path / "cc-while-down.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "transcript.jsonl", transcript)
    down = {**memlane_env, "MEMLANE_URL": f"http://127.0.0.1:{free_port()}", "MEMLANE_UPLOAD_RETRIES": "0"}
    payload = hook_payload("session_end", session_id="cc-while-down", transcript_path=str(transcript))
    done, _ = run_memlane(["hook", "session-end"], down, json.dumps(payload))
    assert done.returncode == 0 and done.stdout == ""
    pending = tmp_path / "state" / "pending"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(pending.glob("*.json")):
        time.sleep(0.2)
    assert len(list(pending.glob("*.json"))) == 1, "the failed upload was not kept"

    # The server is back: the next session's start hands the kept upload to a detached uploader.
    start = hook_payload("session_start", session_id="cc-next")
    done, _ = run_memlane(["hook", "session-start"], memlane_env, json.dumps(start))
    assert done.returncode == 0
    session = wait_for_session(lane_server, tokens["member"], "cc-while-down", ended=True, messages=9)
    assert session["agent"] == "claude-code"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(pending.glob("*.json")):
        time.sleep(0.2)
    assert not any(pending.glob("*.json"))


def test_pre_compact_uploads_the_transcript_without_ending_the_session(
    lane_server, tokens, memlane_env, tmp_path
):
    transcript = tmp_path / "cc-compact-1.jsonl"
    lines = (FIXTURES / "claude_code" / "transcript.jsonl").read_text().splitlines()
    transcript.write_text("\n".join(lines[:8]) + "\n")  # the session so far
    payload = hook_payload("pre_compact", transcript_path=str(transcript))
    done, seconds = run_memlane(["hook", "pre-compact"], memlane_env, json.dumps(payload))
    assert done.returncode == 0 and done.stdout == "" and seconds < 1.0
    wait_for_session(lane_server, tokens["member"], "cc-compact-1", ended=False, messages=5)

    transcript.write_text("\n".join(lines) + "\n")  # later, the whole session: same seqs, new ones added
    run_memlane(
        ["hook", "session-end"], memlane_env, json.dumps({**payload, "hook_event_name": "SessionEnd"})
    )
    wait_for_session(lane_server, tokens["member"], "cc-compact-1", ended=True, messages=9)


@contextlib.contextmanager
def silent_server():
    """Accepts connections and never answers: a hung server."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@contextlib.contextmanager
def failing_server():
    """Answers every request with a 500."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"<h1>Server Error</h1>")

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.mark.parametrize("event", EVENTS)
def test_every_hook_fails_open_when_the_server_is_down_slow_or_failing(event, memlane_env, tmp_path):
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "transcript.jsonl", transcript)
    payload = json.dumps(hook_payload(PAYLOADS[event], transcript_path=str(transcript)))
    closed = f"http://127.0.0.1:{free_port()}"
    with silent_server() as hung, failing_server() as failing:
        for url in (closed, hung, failing):
            env = {**memlane_env, "MEMLANE_URL": url, "MEMLANE_TIMEOUT": "1"}
            done, seconds = run_memlane(["hook", event], env, payload)
            assert done.returncode == 0, done.stderr
            assert done.stdout == "" and done.stderr == ""
            assert seconds < 2.0, f"{event} against {url} took {seconds:.2f} s"


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"hook_event_name": "SessionStart"}'])
def test_a_payload_it_cannot_use_is_ignored(stdin, memlane_env):
    done, _ = run_memlane(["hook", "session-start"], memlane_env, stdin)
    assert done.returncode == 0 and done.stderr == ""
