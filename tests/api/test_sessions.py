"""Sessions: registration, idempotent transcripts, outcomes and their implicit feedback."""

from __future__ import annotations

import pytest

from memory.models import FeedbackEvent, Session, SessionMessage
from memory.services.sessions import implicit_score
from memory.services.store import memory_store

pytestmark = pytest.mark.usefixtures("embedder")


@pytest.mark.parametrize(
    "outcome,score,label",
    [
        ({"duration_ms": 180_000, "error_count": 2, "retry_count": 0, "success": True}, 0.92, "helpful"),
        ({"duration_ms": 600_000, "error_count": 0, "retry_count": 1, "success": True}, 0.86, "helpful"),
        ({"duration_ms": 3_600_000, "error_count": 5, "retry_count": 3, "success": False}, 0.14, "harmful"),
        ({"duration_ms": 600_000, "error_count": 1, "retry_count": 1, "success": False}, 0.38, "harmful"),
        ({"duration_ms": 60_000, "error_count": 1, "retry_count": 0, "success": False}, 0.52, "neutral"),
    ],
)
def test_the_implicit_score_follows_design_4_6(db, outcome, score, label):
    result = implicit_score(**outcome)
    assert result.score == pytest.approx(score) and result.label == label


def test_registering_a_session_twice_gives_the_same_session(api):
    first = api["member"].post(
        "/api/v1/sessions",
        {"session_id": "cc-1", "agent": "claude-code", "project": "billing-api"},
        format="json",
    )
    assert first.status_code == 201
    assert first.json()["project"] == "project:billing-api" and first.json()["agent"] == "claude-code"
    again = api["member"].post("/api/v1/sessions", {"session_id": "cc-1"}, format="json")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert Session.objects.count() == 1


def test_messages_are_idempotent_by_seq_and_redacted(api):
    api["member"].post("/api/v1/sessions", {"session_id": "cc-2"}, format="json")
    batch = {
        "messages": [
            {"seq": 1, "role": "user", "content": "deploy with AKIAQ3ZJ7W2N5XK4R6PT please"},
            {"seq": 2, "role": "assistant", "content": "On it."},
        ]
    }
    first = api["member"].post("/api/v1/sessions/cc-2/messages", batch, format="json").json()
    again = api["member"].post("/api/v1/sessions/cc-2/messages", batch, format="json").json()
    assert first == {"stored": 2, "already_stored": 0} and again == {"stored": 0, "already_stored": 2}
    assert list(SessionMessage.objects.values_list("seq", flat=True)) == [1, 2]
    assert "AKIA" not in SessionMessage.objects.get(seq=1).content
    bad = api["member"].post(
        "/api/v1/sessions/cc-2/messages",
        {
            "messages": [
                {"seq": 3, "role": "user", "content": "fine"},
                {"seq": 4, "role": "narrator", "content": "bad"},
            ]
        },
        format="json",
    )
    assert bad.status_code == 400 and SessionMessage.objects.count() == 2


def test_ending_a_session_scores_it_and_rates_what_it_was_shown_once(api, team):
    memory = memory_store(
        team=team, content="Run make migrate-test before pytest.", memory_type="commitment"
    ).memory
    api["member"].get("/api/v1/search", {"q": "how do I run the tests", "session_id": "cc-3"})
    outcome = {
        "success": True,
        "duration_ms": 180_000,
        "error_count": 2,
        "retry_count": 0,
        "files_touched": ["src/auth/service.ts"],
    }
    ended = api["member"].post("/api/v1/sessions/cc-3/end", outcome, format="json")
    assert ended.status_code == 202
    assert ended.json()["implicit_score"] == 0.92 and ended.json()["implicit_label"] == "helpful"
    assert ended.json()["extraction_status"] == "pending"
    event = FeedbackEvent.objects.get(memory=memory)
    assert (event.signal, event.source, event.value) == ("helpful", "implicit", 0.92)
    memory.refresh_from_db()
    assert memory.feedback_score == pytest.approx(1.092)
    assert api["member"].post("/api/v1/sessions/cc-3/end", outcome, format="json").status_code == 202
    assert FeedbackEvent.objects.count() == 1


def test_sessions_belong_to_their_user(api):
    api["member"].post("/api/v1/sessions", {"session_id": "private"}, format="json")
    assert api["curator"].get("/api/v1/sessions/private").status_code == 404
    assert api["member"].get("/api/v1/sessions/private").json()["session_id"] == "private"
    assert api["member"].post("/api/v1/sessions/nobody/end", {}, format="json").status_code == 404


def test_a_session_is_found_by_our_id_or_the_agent_s_and_only_by_its_user(api):
    ours = api["member"].post(
        "/api/v1/sessions", {"session_id": "cc-7", "agent": "claude-code"}, format="json"
    )
    session_id = ours.json()["id"]
    for reference in (session_id, "cc-7"):
        found = api["member"].get(f"/api/v1/sessions/{reference}")
        assert found.status_code == 200 and found.json()["id"] == session_id
    # Another user naming our id gets a session of their own (an agent's id can be any text).
    theirs = api["curator"].post("/api/v1/sessions", {"session_id": session_id}, format="json")
    assert theirs.status_code == 201 and theirs.json()["id"] != session_id
    assert Session.objects.get(pk=theirs.json()["id"]).external_id == session_id
    assert api["curator"].get("/api/v1/sessions/cc-7").status_code == 404
