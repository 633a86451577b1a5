"""Single sign-on's settings: the group → team role mapping read from the environment."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory.models import TeamRole
from memorylane.settings import TEAM_ROLES, env_group_roles

NAME = "MEMORYLANE_OIDC_GROUP_ROLES"


def test_the_mapping_reads_group_team_and_role(monkeypatch):
    monkeypatch.setenv(NAME, "platform-owners=acme:owner, platform=acme:member,readers=acme:reader,")
    assert env_group_roles(NAME) == [
        ("platform-owners", "acme", "owner"),
        ("platform", "acme", "member"),
        ("readers", "acme", "reader"),
    ]


def test_a_group_may_map_to_several_teams_and_hold_an_equals_sign(monkeypatch):
    monkeypatch.setenv(NAME, "platform=acme:member,platform=globex:reader,cn=dev;ou=groups=acme:curator")
    assert env_group_roles(NAME) == [
        ("platform", "acme", "member"),
        ("platform", "globex", "reader"),
        ("cn=dev;ou=groups", "acme", "curator"),
    ]


def test_an_unset_mapping_is_empty(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    assert env_group_roles(NAME) == []


@pytest.mark.parametrize(
    "value",
    [
        "platform",
        "platform=acme",
        "platform=acme:admin",
        "=acme:member",
        "platform=:member",
        "platform=acme:",
    ],
)
def test_a_malformed_entry_is_refused_at_startup(monkeypatch, value):
    monkeypatch.setenv(NAME, value)
    with pytest.raises(ImproperlyConfigured, match="group=team:role"):
        env_group_roles(NAME)


def test_the_settings_know_every_team_role():
    assert set(TEAM_ROLES) == set(TeamRole.values)
