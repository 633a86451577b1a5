from __future__ import annotations

import pytest

from memorylane.celery import app


def test_health_reports_every_part_without_authentication(client, db):
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    body = response.json()
    assert body == {
        "status": "ok",
        "database": "ok",
        "broker": "ok",
        "embedder": "ok",
        "version": body["version"],
        "tasks": {
            "status": "ok",
            "problems": [],
            "extraction": {"pending": 0, "running": 0, "done": 0, "failed": 0, "oldest_waiting_seconds": 0},
            "jobs": {
                "reflect": {"status": "never run", "late": False},
                "decay": {"status": "never run", "late": False},
            },
        },
    }
    assert body["version"]


@pytest.fixture
def unreachable_broker():
    original = app.conf.broker_url, app.conf.broker_transport
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    app.conf.broker_transport = None  # the URL's scheme decides, not the local broker's transport
    yield
    app.conf.broker_url, app.conf.broker_transport = original


def test_health_is_503_and_names_the_broken_part(client, db, unreachable_broker):
    response = client.get("/api/v1/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["broker"].startswith("error")
    assert body["database"] == "ok"


def test_health_reports_a_missing_embedding_model(client, db, settings):
    settings.EMBEDDING_MODEL = "/nonexistent/model"
    body = client.get("/api/v1/health").json()
    assert body["embedder"].startswith("error")


def test_health_reports_a_stuck_extraction_backlog_and_a_failed_job(client, team, member):
    from datetime import timedelta

    from django.utils import timezone

    from memory.models import Session, TaskRun

    ended = timezone.now() - timedelta(hours=1)
    Session.objects.create(team=team, user=member, external_id="stuck", ended_at=ended)
    Session.objects.create(
        team=team, user=member, external_id="done", ended_at=ended, extraction_status="done"
    )
    Session.objects.create(
        team=team, user=member, external_id="open"
    )  # not ended: not waiting for extraction
    TaskRun.objects.create(task="reflect", status="failed", error="boom", finished_at=timezone.now())
    response = client.get("/api/v1/health")
    assert response.status_code == 200  # the pipeline degrades learning, not answers
    tasks = response.json()["tasks"]
    assert tasks["status"] == "degraded"
    assert tasks["extraction"]["pending"] == 1 and tasks["extraction"]["done"] == 1
    assert 3500 < tasks["extraction"]["oldest_waiting_seconds"] < 3700
    assert tasks["problems"] == [
        f"extraction backlog is {tasks['extraction']['oldest_waiting_seconds']} s old",
        "the last reflect run failed",
    ]
    assert "boom" not in response.content.decode()  # job errors are not public


def test_anonymous_callers_see_states_only_and_staff_see_the_error(client, db, unreachable_broker, curator):
    anonymous = client.get("/api/v1/health").json()
    assert anonymous["broker"] == "error"  # no exception text, host or path
    assert "1" not in anonymous["broker"] and "redis" not in str(anonymous).lower()
    client.force_login(curator)
    staff = client.get("/api/v1/health").json()
    assert staff["broker"].startswith("error: ") and len(staff["broker"]) > len("error: ")
