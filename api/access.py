"""Who is calling, for which team, and what of it they may see (DESIGN.md §11).

A request resolves its :class:`Caller` once — from its API token, or for a dashboard session from
the user's current team — and every view and MCP tool reads through it: memories through
:func:`visible_memories`, sessions through :func:`session_of`, and so on. Another team's id (or
another project's, for a project-limited token) answers exactly like a missing one, and the attempt
is written down (:func:`hidden`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q

from memory.models import (
    Agent,
    ApiToken,
    Entity,
    EntityMention,
    EntityType,
    Membership,
    Memory,
    Scope,
    Session,
    Status,
    Team,
)
from memory.services.entities import normalize_slug
from memory.services.errors import InvalidInput, NotFound
from memory.services.sessions import session_resolve, session_start
from memory.services.teams import current_membership, denied_access_record, enter_team, memberships_of


@dataclass(frozen=True)
class Caller:
    """The user of one request, the team it acts in, what it may do there (``scopes``, never above
    the member's role) and, for a project-limited token, the only projects it sees (``projects``)."""

    user: Any
    team: Team | None
    scopes: frozenset[str]
    token: ApiToken | None = None
    projects: tuple[str, ...] = ()
    surface: str = "api"

    @property
    def allowed_projects(self) -> list[str] | None:
        """What the services take: the token's project slugs, or None for the whole team."""
        return list(self.projects) or None

    @property
    def can_curate(self) -> bool:
        return Scope.CURATE in self.scopes

    def denied(self, kind: str, reference) -> None:
        if self.team is not None:
            denied_access_record(
                team=self.team,
                user=self.user,
                token=self.token,
                surface=self.surface,
                kind=kind,
                reference=reference,
            )


def caller_of_token(token: ApiToken, *, surface: str) -> Caller:
    """A token's caller: its membership's team, its scopes within the member's role today."""
    return Caller(
        user=token.user,
        team=token.team,
        scopes=frozenset(token.effective_scopes),
        token=token,
        projects=tuple(token.projects or ()),
        surface=surface,
    )


def dashboard_membership(request) -> Membership | None:
    """The membership a dashboard session acts through: the team it chose (the session's ``team``
    slug) when the user still belongs to it, else their first team by slug."""
    return current_membership(
        memberships_of(getattr(request, "user", None)), getattr(request, "session", None)
    )


def caller_of(request) -> Caller | None:
    """The request's caller, resolved once per request; None when nobody is signed in. From here
    on the request acts for the caller's team under row-level security too (the second wall;
    memorylane.middleware.TeamWallMiddleware leaves it when the request ends)."""
    cached = getattr(request, "_memory_lane_caller", None)
    if cached is not None:
        return cached
    user = getattr(request, "user", None)
    if not user or not user.is_authenticated:
        return None
    if isinstance(request.auth, ApiToken):
        caller = caller_of_token(request.auth, surface="api")
    else:
        membership = dashboard_membership(request)
        caller = Caller(
            user=user,
            team=membership.team if membership else None,
            scopes=membership.scopes if membership else frozenset(),
        )
    request._memory_lane_caller = caller
    enter_team(caller.team)
    return caller


@contextmanager
def hidden(caller: Caller, kind: str, reference) -> Iterator[None]:
    """Answer a lookup that found nothing — missing, another team's or another project's, alike —
    with NotFound, and write the attempt down."""
    try:
        yield
    except NotFound:
        caller.denied(kind, reference)
        raise


# --- what a caller sees ---------------------------------------------------------------------------


def team_memories(caller: Caller):
    """The caller's team's memories, within the token's projects when it has some."""
    queryset = Memory.objects.for_team(caller.team)
    return queryset.in_projects(caller.projects) if caller.projects else queryset


def visible_memories(caller: Caller):
    """What the caller may read: curators see every memory of theirs; others only active ones
    (quarantined text is never served)."""
    queryset = team_memories(caller)
    return queryset if caller.can_curate else queryset.filter(status=Status.ACTIVE)


def memory_of(caller: Caller, queryset, memory_id, *, kind: str = "memory") -> Memory:
    """The memory ``memory_id`` of ``queryset`` (one of the above), or NotFound, written down."""
    with hidden(caller, kind, memory_id):
        memory = queryset.filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"No memory {memory_id}.")
    return memory


def visible_entities(caller: Caller):
    """The team's canonical entities; for a project-limited token, its projects and the entities
    its memories mention, nothing else."""
    queryset = Entity.objects.for_team(caller.team).canonical()
    if not caller.projects:
        return queryset
    mentioned = (
        EntityMention.objects.for_team(caller.team)
        .filter(resolved=True, memory__in=team_memories(caller).values("pk"))
        .values("entity_id")
    )
    return queryset.filter(Q(slug__in=caller.projects, type=EntityType.PROJECT) | Q(pk__in=mentioned))


def session_visible(caller: Caller, session: Session) -> bool:
    """A project-limited token sees only the sessions of its projects."""
    if not caller.projects:
        return True
    return session.project_id is not None and session.project.slug in caller.projects


def session_of(caller: Caller, reference: str) -> Session:
    """The caller's session ``reference`` (our id or the agent's), or NotFound, written down."""
    with hidden(caller, "session", reference):
        session = session_resolve(team=caller.team, user=caller.user, reference=reference, create=False)
        if not session_visible(caller, session):
            raise NotFound(f"No session {reference!r}.")
    return session


def session_for(caller: Caller, reference: str | None, *, agent: str | None = None) -> Session | None:
    """The session a call belongs to, started on first use (agents often ask for context before
    they register the session). A project-limited token's new session is of its first project, so
    what is extracted from it stays there."""
    if not reference:
        return None
    if not caller.projects:
        return session_resolve(team=caller.team, user=caller.user, reference=reference, agent=agent)
    try:
        session = session_resolve(team=caller.team, user=caller.user, reference=reference, create=False)
    except NotFound:
        session, _ = session_start(
            team=caller.team,
            user=caller.user,
            external_id=reference,
            agent=agent or Agent.OTHER,
            project=caller.projects[0],
        )
    if not session_visible(caller, session):  # the user's session of another project
        caller.denied("session", reference)
        raise NotFound(f"No session {reference!r}.")
    return session


def session_project(caller: Caller, project: str | None) -> str | None:
    """The project a new session of the caller is for: a project-limited token names one of its
    projects (its first when it names none)."""
    if not caller.projects:
        return project
    if not project:
        return caller.projects[0]
    slug = normalize_slug(project if ":" in project else f"project:{project}")
    if slug not in caller.projects:
        raise InvalidInput({"project": [limited_message(caller, "project")]})
    return slug


# --- what a project-limited token may write -------------------------------------------------------


def limited_message(caller: Caller, field: str = "entities") -> str:
    return (
        f"This token is limited to the projects {', '.join(caller.projects)}: name one of them "
        f"(and no other project) in {field}."
    )


def projects_of(team: Team, memory_ids: list) -> dict:
    """``{memory id: set of project slugs}`` of the team's memories' resolved project mentions."""
    found: dict = {pk: set() for pk in memory_ids}
    rows = (
        EntityMention.objects.for_team(team)
        .filter(memory_id__in=memory_ids, resolved=True, entity__type=EntityType.PROJECT)
        .values_list("memory_id", "entity__slug")
    )
    for memory_id, slug in rows:
        found[memory_id].add(slug)
    return found


def check_projects(caller: Caller, memory_ids: list, fields: list[str]) -> None:
    """Refuse (InvalidInput on ``fields[i]``) a write whose memory is about no project or about a
    project outside the token's list. Called inside the write's transaction, so a refusal stores
    nothing — the text was given its projects exactly as a stored memory gets them (named entities
    and those detected in it)."""
    if not caller.projects:
        return
    found = projects_of(caller.team, memory_ids)
    errors = {
        field: [limited_message(caller)]
        for memory_id, field in zip(memory_ids, fields, strict=True)
        if not found[memory_id] or not found[memory_id] <= set(caller.projects)
    }
    if errors:
        raise InvalidInput(errors)


@contextmanager
def limited_write(caller: Caller) -> Iterator[None]:
    """A transaction for a write a project-limited token makes: check_projects inside it undoes
    the whole write. Without a limit, no transaction of its own."""
    if not caller.projects:
        yield
        return
    with transaction.atomic():
        yield
