"""Shared fixtures: real PostgreSQL + pgvector, the real embedding model, real Celery workers."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from memorylane import embedded


def pytest_sessionfinish(session, exitstatus) -> None:
    # Leave no embedded PostgreSQL running after the suite (unless someone else started it).
    embedded.stop_if_started_here()


@pytest.fixture(scope="session")
def embedder():
    """The real model, loaded once per run."""
    from memory import embeddings

    embeddings.get_model()
    return embeddings


@pytest.fixture
def member(db):
    return get_user_model().objects.create_user(username="mia", password="pw-mia-12345")


@pytest.fixture
def curator(db):
    return get_user_model().objects.create_user(username="cora", password="pw-cora-12345", is_staff=True)


@pytest.fixture
def test_database_url(django_db_setup, django_db_blocker) -> str:
    """A URL for the test database, for child processes (workers, servers) to share it."""
    from django.db import connection

    return database_url_for(connection.settings_dict)


def database_url_for(settings_dict: dict) -> str:
    from urllib.parse import quote

    user = quote(settings_dict["USER"] or "")
    password = f":{quote(settings_dict['PASSWORD'])}" if settings_dict["PASSWORD"] else ""
    host = settings_dict["HOST"] or ""
    port = settings_dict["PORT"] or ""
    name = settings_dict["NAME"]
    if host.startswith("/"):
        return f"postgresql://{user}{password}@/{name}?host={quote(host)}" + (f"&port={port}" if port else "")
    return f"postgresql://{user}{password}@{host}{':' + str(port) if port else ''}/{name}"


def voter(index: int):
    """The index-th distinct person giving feedback: promotion needs helpful votes from several
    people (MATURITY_MIN_VOTERS), so tests that establish a memory vote as different users."""
    return get_user_model().objects.get_or_create(username=f"voter-{index}")[0]
