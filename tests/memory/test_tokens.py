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


# --- teams (DESIGN.md §11): the commands of issue 41, point 6 -------------------------------------


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def test_create_token_for_a_new_user_puts_them_in_the_default_team(db):
    key = create_token("ada", "--create-user")
    _, token = authenticate(key)
    assert token.team.slug == "default" and token.membership.role == "member"
    key = create_token("cleo", "--create-user", "--scopes", "read,write,curate")
    assert authenticate(key)[1].membership.role == "curator"
    key = create_token("olaf", "--create-user", "--staff", "--scopes", "read")
    assert authenticate(key)[1].membership.role == "owner"


def test_the_team_commands_make_a_contractor_token_limited_to_one_project(db):
    run("create_team", "mobile", "--name", "Mobile")
    run("add_member", "bob", "mobile", "--role", "reader", "--create-user")
    key = create_token("bob", "--team", "mobile", "--scopes", "read", "--projects", "project:mobile-app")
    user, token = authenticate(key)
    assert (user.username, token.team.slug, token.projects) == ("bob", "mobile", ["project:mobile-app"])
    assert token.effective_scopes == {"read"}


def test_create_token_names_the_teams_when_a_user_has_several(db):
    run("create_team", "alpha")
    run("create_team", "beta")
    run("add_member", "ann", "alpha", "--role", "member", "--create-user")
    run("add_member", "ann", "beta", "--role", "member")
    with pytest.raises(CommandError, match="alpha, beta"):
        create_token("ann")
    assert authenticate(create_token("ann", "--team", "beta"))[1].team.slug == "beta"


def test_create_token_refuses_scopes_above_the_role_and_teams_the_user_is_not_in(db):
    run("create_team", "alpha")
    run("create_team", "beta")
    run("add_member", "rex", "alpha", "--role", "reader", "--create-user")
    with pytest.raises(CommandError, match="reader of alpha may not hold the scope write"):
        create_token("rex", "--scopes", "read,write")
    with pytest.raises(CommandError, match="not a member"):
        create_token("rex", "--team", "beta", "--scopes", "read")
    with pytest.raises(CommandError, match="no team"):
        create_token("rex", "--team", "gamma", "--scopes", "read")
    assert not ApiToken.objects.exists()


def test_team_commands_refuse_bad_input_clearly(db):
    with pytest.raises(CommandError, match="Lower-case"):
        run("create_team", "Not A Slug")
    run("create_team", "alpha")
    with pytest.raises(CommandError, match="exists already"):
        run("create_team", "alpha")
    with pytest.raises(CommandError, match="no user"):
        run("add_member", "ghost", "alpha", "--role", "member")
    with pytest.raises(CommandError, match="no team"):
        run("add_member", "ghost", "omega", "--role", "member", "--create-user")


def test_a_demoted_members_tokens_lose_the_scopes_of_the_old_role_at_once(member, team):
    from memory.services.teams import member_set_role

    _, key = token_create(user=member, scopes=["read", "write"])
    member_set_role(membership=member.memberships.get(team=team), role="reader")
    assert authenticate(key)[1].effective_scopes == {"read"}


def test_a_removed_members_tokens_of_that_team_stop_working_at_once(member, team, other_team):
    from memory.services.teams import member_add, member_remove

    member_add(team=other_team, user=member, role="member")
    _, here = token_create(user=member, team=team, scopes=["read"])
    _, there = token_create(user=member, team=other_team, scopes=["read"])
    member_remove(membership=member.memberships.get(team=team))
    with pytest.raises(AuthenticationFailed):
        authenticate(here)
    assert authenticate(there)[1].team == other_team


def test_a_team_keeps_one_owner(owner, team):
    from memory.services.errors import InvalidInput
    from memory.services.teams import member_remove, member_set_role

    membership = owner.memberships.get(team=team)
    with pytest.raises(InvalidInput, match="one owner"):
        member_remove(membership=membership)
    with pytest.raises(InvalidInput, match="one owner"):
        member_set_role(membership=membership, role="member")
