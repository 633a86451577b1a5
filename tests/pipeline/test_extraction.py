"""Extraction (§4.8) in-process: the rules, idempotence, claims and their recovery."""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory.models import ExtractionStatus, Memory, Session, Source, Status
from memory.services import extraction
from memory.services.entities import entity_get_or_create
from memory.services.extraction import (
    confidence_for,
    extraction_release,
    extraction_requeue,
    extraction_run,
    extraction_sweep,
    readable_sentences,
    rule_candidates,
)
from memory.services.sessions import implicit_score
from memory.services.store import memory_store

pytestmark = pytest.mark.usefixtures("embedder")


def messages_of(session: Session) -> list[tuple[int, str, str]]:
    return list(session.messages.order_by("seq").values_list("seq", "role", "content"))


def test_the_worked_example_scores_helpful(db):
    # Issue 5 expects 0.88; the seed's own table (3 min = "medium", 0.6) gives 0.84 and DESIGN.md §4.6
    # (< 5 min = 1.0) gives 0.92. We follow DESIGN.md; either way the session is helpful (README).
    outcome = implicit_score(duration_ms=180_000, error_count=2, retry_count=0, success=True)
    assert outcome.score == pytest.approx(0.92) and outcome.label == "helpful"


def test_a_user_correction_becomes_a_correction_memory_with_entities_and_its_source_chunk(ended_session):
    session = ended_session()
    report = extraction_run(session.pk)
    assert report.status == ExtractionStatus.DONE and report.extractor == "rules"
    session.refresh_from_db()
    assert session.extraction_status == ExtractionStatus.DONE and session.extraction_attempts == 1
    stored = {m.content: m for m in Memory.objects.filter(session=session)}
    assert set(report.added) == {str(m.pk) for m in stored.values()}
    correction = stored["Don't use requests in the auth service — always use httpx with the shared client."]
    assert correction.memory_type in ("correction", "commitment")
    assert correction.source == Source.EXTRACTION and correction.author == session.user
    assert "(user)\nNo, don't use requests" in correction.source_chunk
    assert "(assistant)\nI'll add the token refresh" in correction.source_chunk  # the turn it corrects
    # Quoting the agent's own words ("I'll add…") does not make the lesson an order to an agent.
    assert correction.status == Status.ACTIVE and correction.status_reason == ""
    slugs = set(correction.mentions.filter(resolved=True).values_list("entity__slug", flat=True))
    assert "feature:auth" in slugs  # from files_touched src/auth/…
    # The outcome itself: errors recovered in a successful session → a correction (+15).
    outcome = next(m for m in stored.values() if m.content.startswith("OAuth login flow"))
    assert outcome.memory_type == "correction" and outcome.category == "debugging"
    assert outcome.confidence == 85
    # The agent announcing its next step ("Let me make sure…") is not a lesson.
    assert not any("make sure the tests pass" in content for content in stored)


def test_running_extraction_again_creates_nothing_new(ended_session):
    session = ended_session()
    first = extraction_run(session.pk)
    assert len(first.added) >= 2
    again = extraction_run(session.pk)
    assert again.status.startswith("not claimed") and again.added == []
    extraction_requeue(session=session)
    rerun = extraction_run(session.pk)
    assert rerun.status == ExtractionStatus.DONE and rerun.added == []
    assert rerun.skipped_similar == rerun.candidates
    assert Memory.objects.filter(session=session).count() == len(first.added)


def test_a_candidate_close_to_an_existing_memory_is_skipped(ended_session, team):
    memory_store(
        team=team, content="Never use requests in the auth service; always use httpx with the shared client."
    )
    session = ended_session()
    report = extraction_run(session.pk)
    assert report.skipped_similar >= 1
    assert not Memory.objects.filter(session=session, content__icontains="httpx").exists()


def test_sessions_that_have_not_ended_are_not_extracted(member, team):
    from memory.services.sessions import session_start

    session, _ = session_start(team=team, user=member, external_id="open")
    assert extraction_run(session.pk).status == "not claimed (pending)"
    assert Session.objects.get(pk=session.pk).extraction_status == ExtractionStatus.PENDING


@pytest.mark.parametrize(
    "text,kind",
    [
        ("we decided to keep the monolith and split only the billing worker.", "decision"),
        ("Turns out the flaky test was caused by a shared temp directory.", "insight"),
        ("The root cause was a missing index on the orders table.", "insight"),
        ("From now on run the migrations before seeding the database.", "commitment"),
        ("Streaming uploads are not supported by the storage backend yet.", "gap"),
    ],
)
def test_transcript_cues_give_their_types(ended_session, text, kind):
    session = ended_session(
        external_id=f"cue-{kind}-{len(text)}",
        messages=[{"seq": 0, "role": "assistant", "content": text}],
        error_count=0,
        files_touched=[],
        summary="",
        evaluation="",
    )
    (candidate,) = rule_candidates(session, messages_of(session))
    assert candidate.memory_type == kind


def test_questions_code_and_tool_output_are_not_lessons(ended_session):
    session = ended_session(
        external_id="noise",
        messages=[
            {"seq": 0, "role": "user", "content": "Should we always use httpx for outbound calls?"},
            {"seq": 1, "role": "assistant", "content": "```python\nnever = {'x': [1, 2, 3]}  # never\n```"},
            {"seq": 2, "role": "tool", "content": "The module is missing and never loaded."},
        ],
        error_count=0,
        files_touched=[],
        summary="",
        evaluation="",
    )
    assert rule_candidates(session, messages_of(session)) == []


def test_a_config_file_touched_makes_the_outcome_a_decision(ended_session):
    session = ended_session(
        external_id="config",
        messages=[],
        error_count=0,
        files_touched=["pyproject.toml"],
        summary="Switched the test runner to pytest-xdist with four workers by default",
        evaluation="",
    )
    (candidate,) = rule_candidates(session, [])
    assert candidate.memory_type == "decision" and candidate.confidence == 80


def test_confidence_follows_design_4_8():
    assert confidence_for("correction", evidence=0, duration_ms=180_000) == 85
    assert confidence_for("correction", evidence=3, duration_ms=10_000) == 100  # 70+15+10+15 → clamped
    assert confidence_for("insight", evidence=3, duration_ms=None) == 90
    assert confidence_for("learning", evidence=0, duration_ms=None) == 70


def test_sentences_drop_code_paths_and_fences():
    text = "Use uv add for dependencies.\n```\nrm -rf /\n```\n/usr/lib/x/y/z.so.1.2.3\nOk."
    assert readable_sentences(text) == ["Use uv add for dependencies."]


def test_a_transient_failure_releases_the_session_for_a_retry_then_fails_when_attempts_are_spent(
    ended_session, settings
):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "EXTRACTION_MAX_ATTEMPTS": 2}
    session = ended_session()
    extraction.extraction_claim(session.pk)
    assert extraction_release(session.pk, OSError("disk hiccup")) is True
    session.refresh_from_db()
    assert session.extraction_status == ExtractionStatus.PENDING and "disk hiccup" in session.extraction_error
    extraction.extraction_claim(session.pk)
    assert extraction_release(session.pk, OSError("disk hiccup again")) is False
    session.refresh_from_db()
    assert session.extraction_status == ExtractionStatus.FAILED
    assert session.extraction_error == "OSError: disk hiccup again" and session.extraction_attempts == 2


def test_the_sweep_hands_out_claims_whose_worker_died_or_whose_lease_expired(ended_session):
    dead, expired, alive = (ended_session(external_id=name) for name in ("dead", "expired", "alive"))
    for session in (dead, expired, alive):
        extraction.extraction_claim(session.pk)
    host = socket.gethostname()
    Session.objects.filter(pk=dead.pk).update(extraction_claimed_by=f"{host}:{2**22 + 7}")  # no such pid
    Session.objects.filter(pk=expired.pk).update(
        extraction_claimed_at=timezone.now() - timedelta(hours=1), extraction_claimed_by="other-host:1"
    )
    Session.objects.filter(pk=alive.pk).update(extraction_claimed_by=f"{host}:{os.getpid()}")
    queued = extraction_sweep()
    assert set(queued) == {str(dead.pk), str(expired.pk)}
    statuses = dict(Session.objects.values_list("external_id", "extraction_status"))
    assert statuses == {"dead": "pending", "expired": "pending", "alive": "running"}
    # The recovered session then completes once.
    assert extraction_run(dead.pk).status == ExtractionStatus.DONE
    assert Session.objects.get(pk=dead.pk).extraction_attempts == 2


def test_the_sweep_queues_ended_sessions_whose_task_was_lost(ended_session):
    session = ended_session(external_id="lost")
    long_ago = timezone.now() - timedelta(hours=2)
    Session.objects.filter(pk=session.pk).update(ended_at=long_ago, updated_at=long_ago)
    fresh = ended_session(external_id="fresh")
    assert extraction_sweep() == [str(session.pk)]
    assert fresh.extraction_status == ExtractionStatus.PENDING


def test_the_extract_command_runs_pending_sessions_and_summarizes(ended_session, capsys):
    ended_session(external_id="a")
    ended_session(external_id="b", messages=[], summary="", evaluation="")
    call_command("extract")
    out = capsys.readouterr().out
    assert "Extracted 2 sessions (6 messages)" in out and "0 failed" in out
    assert set(Session.objects.values_list("extraction_status", flat=True)) == {"done"}


def test_retry_delays_grow_exponentially_with_jitter_up_to_the_cap():
    import random

    rng = random.Random(1)
    delays = [[extraction.retry_delay(attempt, rng) for _ in range(50)] for attempt in range(8)]
    assert all(2.5 <= d <= 5 for d in delays[0]) and all(10 <= d <= 20 for d in delays[2])
    assert all(150 <= d <= 300 for d in delays[7])  # 5 × 2^7 = 640 is capped at 300
    assert len({round(d, 6) for d in delays[3]}) > 40  # jittered, not a fixed schedule


def extract(ended_session, external_id: str, project: str, *turns: tuple[str, str]):
    session = ended_session(
        external_id=external_id,
        messages=[{"seq": i, "role": role, "content": text} for i, (role, text) in enumerate(turns)],
        error_count=0,
        files_touched=[],
        summary="",
        evaluation="",
    )
    if project:
        Session.objects.filter(pk=session.pk).update(
            project=entity_get_or_create(f"project:{project}", team=session.team)
        )
    report = extraction_run(session.pk)
    return report, list(Memory.objects.filter(session_id=session.pk).order_by("created_at"))


def test_a_lesson_repeated_in_a_later_session_reinforces_instead_of_storing_again(ended_session):
    _, first = extract(
        ended_session,
        "rep-1",
        "billing-api",
        ("user", "No, don't run bare pytest, use make test. It sets up the test database and the env vars."),
    )
    report, second = extract(
        ended_session,
        "rep-2",
        "billing-api",
        ("user", "Reminder for next time: don't run pytest directly here, always go through make test."),
    )
    assert len(first) == 1 and second == [] and report.skipped_similar == 1
    first[0].refresh_from_db()
    assert first[0].reinforcement_count == 1


def test_the_same_fact_in_another_project_is_its_own_memory(ended_session):
    _, orders = extract(
        ended_session,
        "port-1",
        "orders-service",
        ("user", "The staging database listens on 5433, not the default port."),
    )
    _, search = extract(
        ended_session,
        "port-2",
        "search-api",
        ("user", "The staging database listens on 6432, not the default port."),
    )
    assert len(orders) == 1 and len(search) == 1


def test_never_mind_is_not_critical_and_a_real_danger_is(ended_session):
    _, stored = extract(
        ended_session,
        "crit",
        "platform",
        ("user", "Never mind, actually do update the story too, it's just one file."),
        (
            "user",
            "Never apply a Terraform plan that destroys a stateful resource like a production database.",
        ),
    )
    assert [m.priority for m in stored] == ["critical"]


def test_an_extracted_memory_links_to_the_messages_it_came_from(ended_session, api_client_for):
    _, stored = extract(
        ended_session,
        "evidence",
        "web-dashboard",
        ("user", "Split the date picker please."),
        ("assistant", "Done, it is split."),
        ("user", "We use sentence case for all headings and button labels in this repo."),
    )
    (memory,) = stored
    assert (memory.evidence_seq_start, memory.evidence_seq_end) == (2, 2)
    assert memory.content == "We use sentence case for all headings and button labels in web-dashboard."
    client = api_client_for(memory.session.user)
    evidence = client.get(f"/api/v1/observations/{memory.pk}").json()["evidence"]
    assert evidence["session_id"] == "evidence" and evidence["seq_start"] == 2
    messages = client.get(evidence["messages"]).json()
    assert [m["seq"] for m in messages] == [2] and "sentence case" in messages[0]["content"]


def test_a_resumed_session_ended_again_learns_from_its_new_messages_only(ended_session, member):
    from memory.services.sessions import messages_append, session_end

    session = ended_session(external_id="cc-resumed")
    first = extraction_run(session.pk)
    assert first.status == ExtractionStatus.DONE and first.added
    before = set(Memory.objects.values_list("pk", flat=True))
    # The agent resumes the session (same id) and works on: new messages, then a second end.
    messages_append(
        session=session,
        messages=[
            {"seq": 10, "role": "user", "content": "Let's add the refresh endpoint now."},
            {
                "seq": 11,
                "role": "user",
                "content": "Careful: always rotate the refresh token on every use, or a stolen token lives forever.",
            },
        ],
    )
    session, ended_again = session_end(session=session, success=False, duration_ms=3_600_000, error_count=5)
    assert ended_again and session.implicit_label == "harmful"  # the new outcome is recorded
    assert session.extraction_status == ExtractionStatus.PENDING
    second = extraction_run(session.pk)
    new = Memory.objects.exclude(pk__in=before)
    assert second.status == ExtractionStatus.DONE
    assert [m.content for m in new] and all("refresh token" in m.content for m in new)
    assert Session.objects.get(pk=session.pk).extracted_through_seq == 11
    # An end with nothing new changes nothing.
    _, again = session_end(session=session, success=True)
    assert not again and Session.objects.get(pk=session.pk).implicit_label == "harmful"


def test_a_session_that_changes_a_settled_fact_only_proposes_the_change(ended_session, curator):
    from memory.models import FactChange
    from memory.services.curation import memory_approve

    _, orders = extract(
        ended_session,
        "settled-1",
        "orders-service",
        ("user", "The staging database listens on 5433, not the default port."),
    )
    settled = memory_approve(memory=orders[0], actor=curator)
    report, proposed = extract(
        ended_session,
        "settled-2",
        "orders-service",
        ("user", "The staging database listens on 6432, not the default port."),
    )
    assert [m.status for m in proposed] == ["pending_review"] and report.added == [str(proposed[0].pk)]
    change = FactChange.objects.get()
    assert (change.kind, change.old, change.new) == ("proposal", settled, proposed[0])
    settled.refresh_from_db()
    assert settled.superseded_by is None and settled.status == "active"


def test_a_rule_and_the_agents_report_of_applying_it_are_one_lesson_and_two_rules_stay_two():
    from memory import embeddings
    from memory.services.extraction import covered_findings

    items = [
        {
            "memory_type": "commitment",
            "content": "In kelpie, every Spark job that overwrites partitioned output runs with partitionOverwriteMode=dynamic.",
        },
        {
            "memory_type": "commitment",
            "content": "In kelpie, the job now always runs with partitionOverwriteMode=dynamic when it overwrites partitioned output.",
        },
        {
            "memory_type": "commitment",
            "content": "In kelpie, dbt models are never run with --full-refresh on fct_events.",
        },
    ]
    vectors = embeddings.encode([item["content"] for item in items])
    kept = covered_findings(items, vectors)
    assert len(kept) == 2 and 2 in kept
