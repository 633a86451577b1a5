from __future__ import annotations

import hashlib
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIRequestFactory

from api.authentication import BearerTokenAuthentication
from memory.models import ApiToken
from memory.services.tokens import token_create, token_revoke


def authenticate(key: str):
    request = APIRequestFactory().get("/api/v1/search", HTTP_AUTHORIZATION=f"Bearer {key}")
    return BearerTokenAuthentication().authenticate(request)


def create_token(*args: str) -> str:
    out = StringIO()
    call_command("create_token", *args, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def test_create_token_prints_a_token_that_authenticates_and_stores_only_its_hash(db):
    key = create_token("ada", "--create-user", "--scopes", "read,write")
    user, token = authenticate(key)
    assert user.username == "ada"
    assert token.scopes == ["read", "write"]
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    stored = ApiToken.objects.values().get()
    assert all(key not in str(value) for value in stored.values())
    assert token.last_used_at is not None


def test_create_token_can_make_a_curator(db):
    key = create_token("cleo", "--create-user", "--staff", "--scopes", "read,write,curate")
    user, token = authenticate(key)
    assert user.is_staff and token.scopes == ["read", "write", "curate"]


def test_create_token_refuses_unknown_users_and_scopes(db):
    with pytest.raises(CommandError, match="--create-user"):
        create_token("nobody")
    get_user_model().objects.create_user(username="bo")
    with pytest.raises(CommandError, match="scopes"):
        create_token("bo", "--scopes", "read,admin")
    assert not ApiToken.objects.exists()


def test_revoked_expired_and_forged_tokens_fail(member):
    _, revoked_key = token_create(user=member, scopes=["read"])
    token_revoke(token=ApiToken.objects.get())
    _, expired_key = token_create(
        user=member, scopes=["read"], expires_at=timezone.now() - timedelta(seconds=1)
    )
    token, good_key = token_create(user=member, scopes=["read"])
    forged = good_key[:-4] + "AAAA"
    for key in (revoked_key, expired_key, forged, "ml_nothing", "not-a-token"):
        with pytest.raises(AuthenticationFailed):
            authenticate(key)
    assert authenticate(good_key)[0] == member


def test_an_inactive_users_token_fails(member):
    _, key = token_create(user=member, scopes=["read"])
    member.is_active = False
    member.save()
    with pytest.raises(AuthenticationFailed):
        authenticate(key)
