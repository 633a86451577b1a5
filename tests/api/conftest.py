from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from memory.services.store import memory_store
from memory.services.tokens import token_create, token_revoke
from tests.conftest import join


@pytest.fixture(autouse=True)
def generous_throttle(settings):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "API_THROTTLE_RATE": "100000/min"}


def client_with(key: str | None) -> APIClient:
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def tokens(team) -> dict[str, str | None]:
    """Tokens of members of ``team`` in every role (DESIGN.md §11), and unusable ones."""
    User = get_user_model()
    member = join(User.objects.create_user(username="member"), team, "member")
    curator = join(User.objects.create_user(username="curator"), team, "curator")
    reader = join(User.objects.create_user(username="reader"), team, "reader")
    revoked_token, revoked = token_create(user=member, scopes=["read", "write"])
    token_revoke(token=revoked_token)
    _, expired = token_create(
        user=member, scopes=["read", "write"], expires_at=timezone.now() - timedelta(minutes=1)
    )
    # A token made with the curate scope while its member was a curator: the demotion that
    # followed narrows it at once (ApiToken.effective_scopes).
    join(member, team, "curator")
    claiming = token_create(user=member, scopes=["read", "write", "curate"])[1]
    join(member, team, "member")
    return {
        "anonymous": None,
        "revoked": revoked,
        "expired": expired,
        "read_only": token_create(user=reader, scopes=["read"])[1],
        "member": token_create(user=member, scopes=["read", "write"])[1],
        "member_claiming_curate": claiming,
        "curator": token_create(user=curator, scopes=["read", "write", "curate"])[1],
    }


@pytest.fixture
def api(tokens):
    return {role: client_with(key) for role, key in tokens.items()}


@pytest.fixture
def memory(team, embedder):
    return memory_store(
        team=team,
        content="Never call stripe.Charge.create directly; go through payments/gateway.py.",
        memory_type="correction",
        category="gotcha",
        entities=["project:billing-api", "feature:payments"],
    ).memory
