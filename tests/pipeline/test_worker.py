"""The learning loop with a real Celery worker process: /end queues extraction on commit, a worker
killed mid-task is made good by the next one exactly once, and a session that keeps failing ends
``failed`` with its error instead of retrying forever."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from memory.models import ExtractionStatus, Memory, Session
from memory.services.tokens import token_create
from tests.conftest import join
from tests.llm_server import fake_llm
from tests.pipeline.conftest import CORRECTION_TRANSCRIPT, WORKED_OUTCOME
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("embedder")]


@pytest.fixture
def agent(team) -> APIClient:
    user = join(get_user_model().objects.create_user(username="agent-owner"), team, "member")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user, scopes=['read', 'write'])[1]}")
    return client


def post_session(agent: APIClient, external_id: str) -> dict:
    assert (
        agent.post(
            "/api/v1/sessions", {"session_id": external_id, "agent": "claude-code"}, format="json"
        ).status_code
        == 201
    )
    batch = {"messages": CORRECTION_TRANSCRIPT}
    assert agent.post(f"/api/v1/sessions/{external_id}/messages", batch, format="json").json()["stored"] == 6
    ended = agent.post(f"/api/v1/sessions/{external_id}/end", WORKED_OUTCOME, format="json")
    assert ended.status_code == 202
    return ended.json()


def status_of(external_id: str) -> str:
    return Session.objects.get(external_id=external_id).extraction_status


def test_a_transcript_posted_over_the_api_becomes_memories_once(agent, test_database_url, tmp_path):
    log = tmp_path / "worker.log"
    with celery_worker(env={"DATABASE_URL": test_database_url}, log_path=log):
        ended = post_session(agent, "cc-e2e")
        assert ended["implicit_label"] == "helpful" and ended["extraction_status"] == "pending"
        wait_for(lambda: status_of("cc-e2e") == ExtractionStatus.DONE, what="extraction", log=log)
        detail = agent.get("/api/v1/sessions/cc-e2e").json()
        assert detail["extraction_status"] == "done" and detail["extraction_error"] == ""
        memories = Memory.objects.filter(pk__in=detail["memories"])
        assert len(detail["memories"]) == memories.count() >= 2
        correction = memories.get(content__startswith="Don't use requests")
        assert correction.memory_type in ("correction", "commitment")
        assert "(user)\nNo, don't use requests" in correction.source_chunk
        assert "feature:auth" in set(correction.mentions.values_list("entity__slug", flat=True))
        # The agent's turn it quotes ("I'll add the token refresh…") is the transcript, not an order to
        # an agent: the lesson is served.
        assert correction.status == "active", correction.status_reason
        found = agent.get("/api/v1/search", {"q": "which HTTP library in the auth service"}).json()
        assert str(correction.pk) in [result["memory"]["id"] for result in found["results"]]

        # Re-sending the transcript and ending again change nothing; a re-run adds nothing.
        again = agent.post(
            "/api/v1/sessions/cc-e2e/messages", {"messages": CORRECTION_TRANSCRIPT}, format="json"
        )
        assert again.json() == {"stored": 0, "already_stored": 6}
        assert agent.post("/api/v1/sessions/cc-e2e/end", WORKED_OUTCOME, format="json").status_code == 202
        from memory.services.extraction import extraction_requeue

        extraction_requeue(session=Session.objects.get(external_id="cc-e2e"))
        wait_for(lambda: status_of("cc-e2e") == ExtractionStatus.DONE, what="the re-run", log=log)
        assert Session.objects.get(external_id="cc-e2e").extraction_report["skipped_similar"] >= 2
        # The worker loaded the model, screens and lexicons as it started, not at its first task.
        warmed = wait_for(
            lambda: [line for line in log.read_text().splitlines() if "worker warmed up in" in line],
            what="the warm-up",
            log=log,
        )
        assert all(part in warmed[0] for part in ("model", "screens", "secret detection", "lexicons"))
    assert Memory.objects.count() == memories.count()


def test_a_worker_killed_mid_task_is_made_good_by_the_next_worker_exactly_once(
    agent, test_database_url, tmp_path
):
    proposal = {
        "memories": [
            {
                "content": "Use httpx with the shared client in the auth service; requests is not allowed there.",
                "type": "correction",
                "category": "convention",
                "priority": "moderate",
                "evidence": "always use httpx with the shared client",
            }
        ]
    }
    with fake_llm([proposal]) as llm:
        llm.hold = threading.Event()  # the first worker's request hangs: it is mid-task
        env = {"DATABASE_URL": test_database_url, "MEMORYLANE_LLM_URL": llm.url}
        first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
        with celery_worker(env=env, log_path=first_log) as first:
            post_session(agent, "cc-killed")
            wait_for(llm.received.is_set, what="the first worker to reach the LLM", log=first_log)
            session = Session.objects.get(external_id="cc-killed")
            assert session.extraction_status == ExtractionStatus.RUNNING
            assert session.extraction_claimed_by.endswith(f":{first.pid}")
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
        assert status_of("cc-killed") == ExtractionStatus.RUNNING and Memory.objects.count() == 0
        llm.hold = None  # the LLM answers from now on
        with celery_worker(env=env, log_path=second_log):
            wait_for(lambda: status_of("cc-killed") == ExtractionStatus.DONE, what="recovery", log=second_log)
    session = Session.objects.get(external_id="cc-killed")
    assert session.extraction_attempts == 2
    (memory,) = Memory.objects.all()
    assert memory.content == proposal["memories"][0]["content"] and memory.session == session
    assert session.extraction_report["extractor"] == "llm"


def test_a_session_that_keeps_failing_ends_failed_with_its_error(agent, test_database_url, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "EXTRACTION_MAX_ATTEMPTS": 3,
                "EXTRACTION_RETRY_BASE_SECONDS": 0.2,
                "EXTRACTION_RETRY_MAX_SECONDS": 0.5,
            }
        )
    )
    env = {
        "DATABASE_URL": test_database_url,
        "MEMORYLANE_CONFIG": str(config),
        "MEMORYLANE_EMBEDDING_MODEL": str(tmp_path / "no-such-model"),  # the embedder cannot load
    }
    log = tmp_path / "worker.log"
    with celery_worker(env=env, log_path=log):
        post_session(agent, "cc-doomed")
        wait_for(lambda: status_of("cc-doomed") == ExtractionStatus.FAILED, what="giving up", log=log)
        time.sleep(2)  # no further attempt follows
    session = Session.objects.get(external_id="cc-doomed")
    assert session.extraction_attempts == 3
    assert "cannot load the embedding model" in session.extraction_error
    assert Memory.objects.count() == 0
    detail = agent.get("/api/v1/sessions/cc-doomed").json()
    assert detail["extraction_status"] == "failed" and "embedding model" in detail["extraction_error"]
