"""The Claude Code transcript parser on a fixture transcript (no server needed)."""

from __future__ import annotations

import json

from clients.memlane.transcript import parse_claude_code
from tests.integrations.conftest import FIXTURES

TRANSCRIPT = FIXTURES / "claude_code" / "transcript.jsonl"
CWD = "/home/dev/billing-api"


def test_it_keeps_user_and_assistant_text_tool_uses_and_tool_errors_by_line_number():
    transcript = parse_claude_code(TRANSCRIPT, cwd=CWD)
    assert [(m.seq, m.role) for m in transcript.messages] == [
        (2, "user"),
        (3, "assistant"),
        (5, "assistant"),
        (6, "tool"),
        (7, "assistant"),
        (10, "assistant"),
        (16, "user"),
        (17, "assistant"),
        (19, "assistant"),
    ]
    by_seq = {m.seq: m.content for m in transcript.messages}
    assert "never call stripe directly" in by_seq[2]
    assert by_seq[3] == "I'll read the gateway first.\n[tool: Read] payments/gateway.py"  # no thinking
    assert by_seq[5] == "[tool: Bash] pytest tests/test_refunds.py"
    assert by_seq[6] == "[tool error] ImportError: cannot import name 'refund'"
    assert by_seq[16] == "No, don't name it refund_v2; actually call it refund."
    assert transcript.messages[0].created_at == "2026-03-02T10:00:00+00:00"


def test_it_skips_unknown_types_sidechains_meta_lines_and_a_truncated_last_line():
    transcript = parse_claude_code(TRANSCRIPT, cwd=CWD)
    contents = " ".join(m.content for m in transcript.messages)
    assert "sub-agent" not in contents and "Caveat" not in contents and "one more th" not in contents
    # summary, file-history-snapshot, sidechain, system, progress, an unknown type, meta, truncated
    assert transcript.skipped_lines == 8


def test_it_counts_tool_errors_and_the_retry_that_followed_one():
    transcript = parse_claude_code(TRANSCRIPT, cwd=CWD)
    assert transcript.error_count == 1
    assert transcript.retry_count == 1  # the failed pytest command ran again
    assert transcript.tool_uses == 7


def test_files_written_or_edited_become_files_touched_relative_to_the_project():
    transcript = parse_claude_code(TRANSCRIPT, cwd=CWD)
    assert transcript.files_touched == [
        "src/refunds/service.py",
        "src/refunds/views.py",
        "notebooks/refunds.ipynb",
        "src/refunds/api.py",
    ]  # Read and Bash touch nothing


def test_the_outcome_has_duration_from_timestamps_and_success_from_the_last_tool_result():
    outcome = parse_claude_code(TRANSCRIPT, cwd=CWD).outcome(["src/refunds/api.py", "README.md"])
    assert outcome == {
        "success": True,
        "duration_ms": 6 * 60 * 1000,
        "error_count": 1,
        "retry_count": 1,
        "files_touched": [
            "src/refunds/service.py",
            "src/refunds/views.py",
            "notebooks/refunds.ipynb",
            "src/refunds/api.py",
            "README.md",
        ],
    }


def test_a_session_whose_last_tool_call_failed_is_not_a_success(tmp_path):
    lines = [
        {"type": "user", "message": {"content": "run it"}, "timestamp": "2026-03-02T10:00:00Z"},
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]
            },
            "timestamp": "2026-03-02T10:00:01Z",
        },
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "boom"}]
            },
            "timestamp": "2026-03-02T10:00:02Z",
        },
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    transcript = parse_claude_code(path)
    assert transcript.success is False and transcript.error_count == 1 and transcript.duration_ms == 2000


def test_long_messages_are_cut_and_garbage_lines_are_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(
            [
                "not json at all",
                json.dumps([1, 2, 3]),
                json.dumps({"type": "user", "message": "not an object"}),
                json.dumps({"type": "user", "message": {"content": "x" * 100}}),
            ]
        )
    )
    transcript = parse_claude_code(path, max_chars=10)
    assert [(m.seq, len(m.content)) for m in transcript.messages] == [(3, 10)]
    assert transcript.skipped_lines == 3 and transcript.success is None and transcript.duration_ms is None
