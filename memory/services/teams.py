"""Teams, memberships and the wall between teams (DESIGN.md §11).

A request or a task resolves its team once — from its token, the dashboard's current team, or a
command's ``--team`` — and reads every team-owned row through ``Model.objects.for_team(team)``.
Another team's id is answered exactly like a missing one, and the attempt is written down
(:func:`denied_access_record`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction

from memory.conf import setting
from memory.models import ROLE_SCOPES, DeniedAccess, Membership, Team, TeamRole
from memory.services.errors import InvalidInput, MemoryLaneError, NotFound

logger = logging.getLogger(__name__)

DEFAULT_TEAM_SLUG = "default"
# The database role the application acts for a team as, under row-level security (migration 0014).
WALL_ROLE = "memorylane_app"
TEAM_SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class TeamRequired(MemoryLaneError):
    """A user of several teams did not say which one; ``teams`` lists their slugs."""

    code = "TEAM_REQUIRED"


class NotAMember(MemoryLaneError):
    code = "NOT_A_MEMBER"


def role_allows(role: str, scopes) -> bool:
    return set(scopes) <= ROLE_SCOPES[role]


def highest_role_for(scopes) -> str:
    """The narrowest role whose scopes cover ``scopes`` (a token created for a new user keeps working)."""
    for role in (TeamRole.READER, TeamRole.MEMBER, TeamRole.CURATOR):
        if role_allows(role, scopes):
            return role
    return TeamRole.OWNER


@transaction.atomic
def team_create(*, slug: str, name: str = "") -> Team:
    """A new team. Raises InvalidInput for a malformed or taken slug."""
    slug = (slug or "").strip().lower()
    if not TEAM_SLUG_RE.match(slug) or len(slug) > 64:
        raise InvalidInput({"slug": "Lower-case letters, digits and single hyphens, at most 64 characters."})
    if Team.objects.filter(slug=slug).exists():
        raise InvalidInput({"slug": f"A team '{slug}' exists already."})
    return Team.objects.create(slug=slug, name=name.strip() or slug)


def team_default() -> Team:
    """The team ``default``, created when missing: where an upgrade put every existing row, and
    where a single-team deployment keeps working without naming a team."""
    team, _ = Team.objects.get_or_create(slug=DEFAULT_TEAM_SLUG, defaults={"name": "Default"})
    return team


@transaction.atomic
def member_add(*, team: Team, user, role: str) -> Membership:
    """Make ``user`` a member of ``team`` with ``role``, or change their role if they are one."""
    if role not in TeamRole.values:
        raise InvalidInput({"role": f"One of: {', '.join(TeamRole.values)}."})
    membership, created = Membership.objects.get_or_create(team=team, user=user, defaults={"role": role})
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def member_set_role(*, membership: Membership, role: str) -> Membership:
    """Change a member's role. Their tokens keep their scopes but are bounded by the new role at
    once (ApiToken.effective_scopes). A team keeps at least one owner."""
    if role not in TeamRole.values:
        raise InvalidInput({"role": f"One of: {', '.join(TeamRole.values)}."})
    if membership.role == TeamRole.OWNER and role != TeamRole.OWNER and _last_owner(membership):
        raise InvalidInput({"role": "A team keeps at least one owner."})
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def member_remove(*, membership: Membership, keep_an_owner: bool = True) -> None:
    """Remove a member: every token of theirs for this team goes with the membership, so it is
    refused from the next request on. A team keeps at least one owner, unless ``keep_an_owner`` is
    false: a single sign-on whose identity provider no longer puts the person in the team's groups
    removes them all the same (memory.services.signon)."""
    if keep_an_owner and membership.role == TeamRole.OWNER and _last_owner(membership):
        raise InvalidInput({"member": "A team keeps at least one owner."})
    membership.delete()


def _last_owner(membership: Membership) -> bool:
    owners = Membership.objects.select_for_update().filter(team_id=membership.team_id, role=TeamRole.OWNER)
    return not owners.exclude(pk=membership.pk).exists()


def memberships_of(user) -> list[Membership]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(Membership.objects.filter(user=user).select_related("team").order_by("team__slug"))


# A signed-in session keeps the team it shows under this key (a team slug): the dashboard's switcher
# writes it; the dashboard and the API read it.
SESSION_TEAM_KEY = "team"


def current_membership(memberships: list[Membership], session) -> Membership | None:
    """Of a person's ``memberships``, the one their ``session`` acts through: the team it chose
    when they still belong to it, else their first team by slug."""
    chosen = session.get(SESSION_TEAM_KEY) if session is not None else None
    return next((m for m in memberships if m.team.slug == chosen), memberships[0] if memberships else None)


def membership_for(user, team: Team | str | None = None) -> Membership:
    """``user``'s membership of ``team`` (a Team or a slug); without one, their only team's. Raises
    NotAMember, or TeamRequired naming the choices when the user belongs to several teams."""
    memberships = memberships_of(user)
    if team is not None:
        slug = team.slug if isinstance(team, Team) else team
        for membership in memberships:
            if membership.team.slug == slug:
                return membership
        raise NotAMember(f"{user} is not a member of a team '{slug}'.")
    if len(memberships) == 1:
        return memberships[0]
    if not memberships:
        raise NotAMember(f"{user} is not a member of any team.")
    slugs = [membership.team.slug for membership in memberships]
    raise TeamRequired(f"{user} belongs to several teams; name one of: {', '.join(slugs)}.", teams=slugs)


def user_create(username: str, *, staff: bool = False):
    User = get_user_model()
    return User.objects.create_user(username=username, is_staff=staff)


def team_get(slug: str) -> Team:
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        raise NotFound(f"No team '{slug}'.")
    return team


def denied_access_record(*, team: Team, user=None, token=None, surface: str, kind: str, reference) -> None:
    """Write down that a caller of ``team`` asked for a row it cannot see (another team's, another
    project's, or none at all: the three answer alike, so the log says only what was asked)."""
    DeniedAccess.objects.create(
        team=team,
        user=user if getattr(user, "pk", None) else None,
        token_prefix=getattr(token, "prefix", "") or "",
        surface=surface,
        kind=kind,
        reference=str(reference)[:300],
    )


# --- the second wall: PostgreSQL row-level security (migration 0014) -------------------------------
#
# With ROW_LEVEL_SECURITY on, a request acts for its team as WALL_ROLE with ``memorylane.team_id``
# set: the database then shows and accepts only that team's rows, whatever a query forgets. Both are set for the connection while
# the request holds it and reset when it ends (memorylane.middleware.TeamWallMiddleware), not with
# SET LOCAL: a request is not one transaction (Django's autocommit), and SET LOCAL outside one does
# nothing. Code that acts for every team (migrations, commands, the scheduled jobs) runs as the
# tables' owner, which the policies do not bind.


def row_security_available() -> bool:
    """Whether this connection can act as WALL_ROLE (the role exists and the account is a member):
    asked once per connection."""
    available = getattr(connection, "_memory_lane_wall", None)
    if available is None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = %s) "
                "AND pg_has_role(current_user, %s, 'MEMBER')",
                [WALL_ROLE, WALL_ROLE],
            )
            available = bool(cursor.fetchone()[0])
        connection._memory_lane_wall = available
    return available


def enter_team(team: Team) -> None:
    """A request acts for ``team`` on this connection until :func:`leave_team`, when the
    ROW_LEVEL_SECURITY setting is on."""
    if team is not None and setting("ROW_LEVEL_SECURITY"):
        _enter(team)


def _enter(team: Team) -> None:
    if not row_security_available():
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('memorylane.team_id', %s, false), set_config('role', %s, false)",
            [str(team.pk), WALL_ROLE],
        )
    connection._memory_lane_team = team.pk


def leave_team() -> None:
    """Back to the account's own role, with no team. A connection that cannot say so is closed, so
    the next request gets a new one rather than this one's team."""
    if getattr(connection, "_memory_lane_team", None) is None:
        return
    connection._memory_lane_team = None
    try:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE; RESET memorylane.team_id")
    except DatabaseError:
        logger.warning("teams: could not reset the team of a connection; closing it", exc_info=True)
        connection.close()


@contextmanager
def as_table_owner() -> Iterator[None]:
    """Run the block's statements as the tables' owner, outside the policies, when this connection
    acts for a team under row-level security (else as they are). Only for statements that name
    their team themselves and that a policy would slow down: the search's candidate statements,
    each written around a team's queryset (search.gather_candidates). Under a policy PostgreSQL does
    not use a GIN index for a search's words, as ``@@`` is not leakproof: search over HTTP took
    ~40 ms more at p95 on 10,000 memories (docs/teams.md). Call inside a transaction: a failure
    rolls the change of role back with it."""
    if getattr(connection, "_memory_lane_team", None) is None:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")
    failed = True
    try:
        yield
        failed = False
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('role', %s, false)", [WALL_ROLE])
        except DatabaseError:
            if not failed:
                raise
            # The block failed and took its transaction with it: the rollback restores the role.
            if not connection.in_atomic_block:
                connection.close()


@contextmanager
def acting_for(team: Team) -> Iterator[None]:
    """Run the block as ``team`` under row-level security whatever the setting (tests, and code
    that asks for the wall by name)."""
    previous = getattr(connection, "_memory_lane_team", None)
    _enter(team)
    try:
        yield
    finally:
        leave_team()
        if previous is not None:
            _enter(Team(pk=previous))
