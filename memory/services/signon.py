"""Single sign-on: the identity provider's groups decide a person's roles in the teams the mapping
names (DESIGN.md §11, docs/teams.md).

``MEMORYLANE_OIDC_GROUP_ROLES`` maps groups to a team and a role. At each sign-in
:func:`memberships_plan` — a pure function of the person's groups, the mapping and their
memberships now — says what their memberships of the mapped teams must become, and
:func:`memberships_sync` makes it so. A team the mapping does not name is never touched: its
members are managed on the dashboard's Members page as before.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.db import transaction

from memory.models import Membership, Team, TeamRole
from memory.services.teams import member_add, member_remove

logger = logging.getLogger(__name__)

# Lowest first: a person in several groups of one team holds the highest of their roles.
ROLE_ORDER: tuple[str, ...] = (TeamRole.READER, TeamRole.MEMBER, TeamRole.CURATOR, TeamRole.OWNER)


class GroupRole(NamedTuple):
    """One entry of the mapping: members of ``group`` hold ``role`` in the team ``team`` (a slug)."""

    group: str
    team: str
    role: str


@dataclass(frozen=True)
class MembershipPlan:
    """What a sign-in changes: ``roles`` are the mapped teams whose role is new or different (team
    slug → role), ``removed`` the mapped teams the person leaves, ``teams_after`` every team they
    belong to afterwards, mapped or not."""

    roles: Mapping[str, str]
    removed: frozenset[str]
    teams_after: frozenset[str]

    @property
    def may_sign_in(self) -> bool:
        """Only a member of some team may sign in: a dashboard with no team shows nothing."""
        return bool(self.teams_after)

    @property
    def changes_anything(self) -> bool:
        return bool(self.roles or self.removed)


def groups_from_claim(value: Any) -> frozenset[str]:
    """The groups claim as a set of names. Providers send a list of strings; some send one string
    for a single group; anything else (a number, an object, nothing) counts as no groups."""
    if isinstance(value, str):
        return frozenset({value}) if value else frozenset()
    if isinstance(value, list | tuple | set | frozenset):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()


def memberships_plan(
    *, groups: Collection[str], rules: Iterable[GroupRole], current: Mapping[str, str]
) -> MembershipPlan:
    """The memberships a person with ``groups`` must hold, given the mapping ``rules`` and their
    memberships now (``current``: team slug → role).

    For every team the rules name: the highest role among the person's groups mapped to it, or no
    membership when none of their groups is; teams no rule names keep what they have. Pure: no
    database, no settings."""
    rules = list(rules)
    mapped_teams = {rule.team for rule in rules}
    wanted: dict[str, str] = {}
    for rule in rules:
        if rule.group in groups and _rank(rule.role) > _rank(wanted.get(rule.team)):
            wanted[rule.team] = rule.role
    roles = {team: role for team, role in wanted.items() if current.get(team) != role}
    removed = frozenset(team for team in current if team in mapped_teams and team not in wanted)
    teams_after = frozenset(set(current) - removed | set(wanted))
    return MembershipPlan(roles=roles, removed=removed, teams_after=teams_after)


def _rank(role: str | None) -> int:
    return ROLE_ORDER.index(role) if role is not None else -1


def rules_for_existing_teams(rules: Iterable[GroupRole]) -> list[GroupRole]:
    """The rules whose team exists. A rule naming a missing team is left out with a warning: a
    sign-in creates no team (a typo in the mapping must not make one); ``manage.py create_team``
    does."""
    rules = list(rules)
    existing = set(Team.objects.filter(slug__in={rule.team for rule in rules}).values_list("slug", flat=True))
    for team in sorted({rule.team for rule in rules} - existing):
        logger.warning("signon: MEMORYLANE_OIDC_GROUP_ROLES names the team %r, which does not exist", team)
    return [rule for rule in rules if rule.team in existing]


def current_roles(user) -> dict[str, str]:
    """``user``'s memberships now, team slug → role (none for a user not yet created)."""
    if user is None or user.pk is None:
        return {}
    return dict(Membership.objects.filter(user=user).values_list("team__slug", "role"))


@transaction.atomic
def memberships_sync(*, user, plan: MembershipPlan) -> None:
    """Apply ``plan`` to ``user``: add or re-role the memberships of ``plan.roles`` and remove
    those of ``plan.removed``, with their tokens of those teams (as removing a member on the
    dashboard does). For a mapped team the identity provider decides, so a sign-in may take the
    owner role from a team's last owner; that is logged."""
    changed = set(plan.roles) | plan.removed
    teams = {team.slug: team for team in Team.objects.filter(slug__in=changed)}
    owned_before = set(
        Membership.objects.filter(user=user, team__slug__in=changed, role=TeamRole.OWNER).values_list(
            "team__slug", flat=True
        )
    )
    for slug, role in plan.roles.items():
        member_add(team=teams[slug], user=user, role=role)
    leaving = Membership.objects.filter(user=user, team__slug__in=plan.removed).select_related("team")
    for membership in leaving:
        member_remove(membership=membership, keep_an_owner=False)
    for slug in sorted(owned_before):
        if not Membership.objects.filter(team=teams[slug], role=TeamRole.OWNER).exists():
            logger.warning("signon: the team %r has no owner left after %s signed in", slug, user)
