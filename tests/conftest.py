"""Shared fixtures: real PostgreSQL + pgvector, the real embedding model, real Celery workers."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from hypothesis import settings as hypothesis_settings

from memorylane import embedded


class FewRoundsPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Django's PBKDF2 at 1,000 rounds instead of 1,000,000: a test user's password took ~0.5 s to
    hash on two cores, and hundreds of tests make users and sign them in. Its hashes name their
    rounds (``pbkdf2_sha256$1000$…``), so a server process of the tests, with the default hashers,
    checks them all the same."""

    iterations = 1000


# The suite's generated cases are the same on every run (``derandomize``), so a red CI names a change,
# not a draw: a property was once broken by a case one CI run drew and the next might not have.
# ``HYPOTHESIS_PROFILE=explore`` draws new cases, for a search before a commit.
hypothesis_settings.register_profile("default", derandomize=True, print_blob=True)
hypothesis_settings.register_profile("explore", derandomize=False, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config) -> None:
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["tests.conftest.FewRoundsPBKDF2PasswordHasher", *settings.PASSWORD_HASHERS]


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
def team(db):
    """The team the tests' people belong to (DESIGN.md §11)."""
    from memory.models import Team

    return Team.objects.get_or_create(slug="acme", defaults={"name": "Acme"})[0]


@pytest.fixture
def other_team(db):
    """A team nobody of ``team`` belongs to: nothing of one may reach the other."""
    from memory.models import Team

    return Team.objects.get_or_create(slug="globex", defaults={"name": "Globex"})[0]


def join(user, team, role: str):
    from memory.models import Membership

    Membership.objects.update_or_create(user=user, team=team, defaults={"role": role})
    return user


@pytest.fixture
def member(team):
    user = get_user_model().objects.create_user(username="mia", password="pw-mia-12345")
    return join(user, team, "member")


@pytest.fixture
def curator(team):
    user = get_user_model().objects.create_user(username="cora", password="pw-cora-12345", is_staff=True)
    return join(user, team, "curator")


@pytest.fixture
def owner(team):
    user = get_user_model().objects.create_user(username="olga", password="pw-olga-12345")
    return join(user, team, "owner")


@pytest.fixture
def reader(team):
    user = get_user_model().objects.create_user(username="rita", password="pw-rita-12345")
    return join(user, team, "reader")


@pytest.fixture
def outsider(other_team):
    """A member of another team, with the most rights there: they must see nothing of ``team``."""
    user = get_user_model().objects.create_user(username="otto", password="pw-otto-12345")
    return join(user, other_team, "owner")


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


def voter(index: int, team=None):
    """The index-th distinct person giving feedback: promotion needs helpful votes from several
    people (MATURITY_MIN_VOTERS), so tests that establish a memory vote as different users. With
    ``team``, a member of it."""
    user = get_user_model().objects.get_or_create(username=f"voter-{index}")[0]
    return join(user, team, "member") if team is not None else user
