"""Single sign-on's groups → team memberships: the pure decision over many cases, then the service
that applies it against the database (memory/services/signon.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from memory.models import ApiToken, Membership, TeamRole
from memory.services.signon import (
    ROLE_ORDER,
    GroupRole,
    groups_from_claim,
    memberships_plan,
    memberships_sync,
    rules_for_existing_teams,
)
from memory.services.tokens import token_create
from tests.conftest import join

ACME_RULES = [
    GroupRole("platform-owners", "acme", "owner"),
    GroupRole("platform-curators", "acme", "curator"),
    GroupRole("platform", "acme", "member"),
    GroupRole("readers", "acme", "reader"),
]
TWO_TEAMS = [
    *ACME_RULES,
    GroupRole("platform", "globex", "reader"),
    GroupRole("globex-leads", "globex", "owner"),
]


def plan(groups, rules=ACME_RULES, current=None):
    return memberships_plan(groups=frozenset(groups), rules=rules, current=current or {})


# --- the decision ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("groups", "role"),
    [
        ({"platform"}, "member"),
        ({"readers"}, "reader"),
        ({"platform-curators"}, "curator"),
        ({"platform-owners"}, "owner"),
        ({"readers", "platform"}, "member"),
        ({"platform", "platform-owners"}, "owner"),
        ({"readers", "platform-curators", "platform"}, "curator"),
        ({"readers", "platform-owners", "platform-curators", "platform"}, "owner"),
        ({"platform", "unrelated", "another"}, "member"),
    ],
)
def test_a_person_holds_the_highest_role_among_their_groups(groups, role):
    result = plan(groups)
    assert result.roles == {"acme": role}
    assert result.removed == frozenset()
    assert result.teams_after == {"acme"}
    assert result.may_sign_in


def test_rules_in_any_order_give_the_same_role():
    groups = {"readers", "platform-owners", "platform"}
    assert plan(groups, rules=list(reversed(ACME_RULES))).roles == plan(groups).roles == {"acme": "owner"}


def test_a_role_already_held_is_not_a_change():
    result = plan({"platform"}, current={"acme": "member"})
    assert result.roles == {}
    assert result.removed == frozenset()
    assert not result.changes_anything
    assert result.may_sign_in


@pytest.mark.parametrize(
    ("before", "groups", "after"),
    [
        ("member", {"platform-owners"}, "owner"),
        ("owner", {"platform"}, "member"),
        ("curator", {"readers"}, "reader"),
        ("reader", {"platform-curators", "readers"}, "curator"),
    ],
)
def test_a_change_of_groups_changes_the_role(before, groups, after):
    result = plan(groups, current={"acme": before})
    assert result.roles == {"acme": after}
    assert result.removed == frozenset()


def test_a_team_without_a_group_any_more_loses_the_membership():
    result = plan({"unrelated"}, current={"acme": "owner"})
    assert result.roles == {}
    assert result.removed == {"acme"}
    assert result.teams_after == frozenset()
    assert not result.may_sign_in


def test_teams_the_mapping_does_not_name_are_never_touched():
    result = plan(set(), current={"acme": "member", "initech": "owner"})
    assert result.removed == {"acme"}
    assert "initech" not in result.roles
    assert result.teams_after == {"initech"}
    assert result.may_sign_in  # they still belong to a team


def test_no_mapped_group_and_no_team_may_not_sign_in():
    for groups in (set(), {"unrelated"}, {"PLATFORM"}, {"platform "}):
        result = plan(groups)
        assert result.roles == {} and result.removed == frozenset()
        assert not result.may_sign_in, groups


def test_no_mapped_group_but_a_team_already_may_sign_in():
    result = plan(set(), current={"initech": "reader"})
    assert not result.changes_anything
    assert result.may_sign_in


def test_one_group_may_give_roles_in_several_teams():
    result = plan({"platform"}, rules=TWO_TEAMS)
    assert result.roles == {"acme": "member", "globex": "reader"}
    assert result.teams_after == {"acme", "globex"}


def test_each_team_takes_its_own_highest_role():
    result = plan({"platform", "globex-leads", "readers"}, rules=TWO_TEAMS)
    assert result.roles == {"acme": "member", "globex": "owner"}


def test_gaining_one_mapped_team_and_losing_another_in_one_sign_in():
    rules = [GroupRole("a", "acme", "member"), GroupRole("g", "globex", "curator")]
    result = plan({"g"}, rules=rules, current={"acme": "member", "initech": "owner"})
    assert result.roles == {"globex": "curator"}
    assert result.removed == {"acme"}
    assert result.teams_after == {"globex", "initech"}


def test_no_rules_change_nothing():
    result = plan({"platform"}, rules=[], current={"acme": "owner"})
    assert not result.changes_anything
    assert result.teams_after == {"acme"}
    assert plan({"platform"}, rules=[]).may_sign_in is False


def test_the_same_rule_twice_is_one_rule():
    result = plan({"platform"}, rules=[*ACME_RULES, GroupRole("platform", "acme", "member")])
    assert result.roles == {"acme": "member"}


def test_the_role_order_is_every_team_role_lowest_first():
    assert set(ROLE_ORDER) == set(TeamRole.values)
    assert ROLE_ORDER[0] == TeamRole.READER and ROLE_ORDER[-1] == TeamRole.OWNER


@pytest.mark.parametrize(
    ("claim", "groups"),
    [
        (["a", "b"], {"a", "b"}),
        (("a",), {"a"}),
        ("solo", {"solo"}),
        ("", set()),
        (None, set()),
        (42, set()),
        ({"a": 1}, set()),
        (["a", 7, None, "", "b"], {"a", "b"}),
    ],
)
def test_the_groups_claim_is_read_as_a_set_of_names(claim, groups):
    assert groups_from_claim(claim) == groups


# --- applying it -----------------------------------------------------------------------------------


@pytest.fixture
def person(db):
    return get_user_model().objects.create_user(username="sso-person")


def roles_of(user) -> dict[str, str]:
    return dict(Membership.objects.filter(user=user).values_list("team__slug", "role"))


def test_sync_adds_and_re_roles_memberships(person, team, other_team):
    join(person, team, "reader")
    memberships_sync(
        user=person, plan=plan({"platform", "globex-leads"}, rules=TWO_TEAMS, current={"acme": "reader"})
    )
    assert roles_of(person) == {"acme": "member", "globex": "owner"}


def test_sync_removes_a_membership_with_its_tokens_and_leaves_other_teams(person, team, other_team):
    join(person, team, "member")
    join(person, other_team, "owner")
    acme_token, _ = token_create(user=person, team=team, scopes=["read"])
    globex_token, _ = token_create(user=person, team=other_team, scopes=["read"])
    memberships_sync(user=person, plan=plan(set(), current={"acme": "member", "globex": "owner"}))
    assert roles_of(person) == {"globex": "owner"}
    assert not ApiToken.objects.filter(pk=acme_token.pk).exists()
    assert ApiToken.objects.filter(pk=globex_token.pk).exists()


def test_sync_takes_the_owner_role_from_a_last_owner_when_the_provider_says_so(person, team, caplog):
    join(person, team, "owner")
    memberships_sync(user=person, plan=plan({"platform"}, current={"acme": "owner"}))
    assert roles_of(person) == {"acme": "member"}
    assert "the team 'acme' has no owner left" in caplog.text
    memberships_sync(user=person, plan=plan(set(), current={"acme": "member"}))
    assert roles_of(person) == {}


def test_rules_naming_a_missing_team_are_left_out(team, caplog):
    rules = [GroupRole("platform", "acme", "member"), GroupRole("platform", "no-such-team", "owner")]
    assert rules_for_existing_teams(rules) == [rules[0]]
    assert "no-such-team" in caplog.text
