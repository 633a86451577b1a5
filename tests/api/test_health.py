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
    }
    assert body["version"]


@pytest.fixture
def unreachable_broker():
    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    yield
    app.conf.broker_url = original


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
