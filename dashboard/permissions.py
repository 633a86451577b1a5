"""Who may do what on the dashboard, and in which team (DESIGN.md §11).

Every view of a signed-in person runs in one team: ``request.team`` and ``request.membership``,
resolved once per request by :func:`resolve_team` — the team the person switched to (the session
key ``team``, which the API's session authentication reads too) if they still belong to it, else
their first team by slug. Roles, not ``is_staff``,
decide what they may do: readers read; members also give feedback; curators (and owners) review,
edit, merge, promote and deprecate; owners also manage members, every token of the team, and
delete memories.
"""

from __future__ import annotations

from functools import wraps
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render

from memory.models import Membership, Memory, Status
from memory.services.teams import (
    SESSION_TEAM_KEY,
    current_membership,
    denied_access_record,
    enter_team,
    memberships_of,
)

TEAM_SESSION_KEY = SESSION_TEAM_KEY  # where the switcher writes the chosen team
_UNRESOLVED = object()


def resolve_team(request) -> Membership | None:
    """The signed-in person's membership of the current team (None without one), computed once
    per request; sets ``request.team``, ``request.membership`` and ``request.memberships``."""
    if getattr(request, "_membership", _UNRESOLVED) is not _UNRESOLVED:
        return request._membership
    user = getattr(request, "user", None)
    memberships = memberships_of(user) if user is not None else []
    chosen = current_membership(memberships, getattr(request, "session", None))
    request._membership = chosen
    request.membership = chosen
    request.memberships = memberships
    request.team = chosen.team if chosen else None
    # From here on the database's row-level security shows this team's rows only (the second
    # wall); memorylane.middleware.TeamWallMiddleware leaves the team when the request ends.
    enter_team(request.team)
    return chosen


def _login_redirect(request):
    """An htmx request whose session expired is sent to the login page as a whole-page navigation
    instead of having the login form swapped into a row."""
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = (
            f"{settings.LOGIN_URL}?next={quote(request.htmx.current_url_abs_path or '/')}"
        )
        return response
    return redirect_to_login(request.get_full_path())


def member_required(view):
    """Signed-in members of a team only: anyone else is sent to log in, and a signed-in person who
    belongs to no team is told so (403) instead of seeing an empty dashboard."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return _login_redirect(request)
        if resolve_team(request) is None:
            return render(request, "dashboard/no_team.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def _role_required(allowed, message: str):
    def decorator(view):
        @member_required
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not allowed(request.membership):
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


# Readers read and nothing else: feedback is a write.
writer_required = _role_required(
    lambda membership: membership.can_write, "Readers can read but not rate or change memories."
)
curator_required = _role_required(
    lambda membership: membership.can_curate, "Only curators and owners of the team can do this."
)
owner_required = _role_required(
    lambda membership: membership.is_owner, "Only owners of the team can do this."
)


def visible_memories(request):
    """The current team's memories this person may see: curators every one, members and readers
    only active ones (quarantined text is never shown to them), as in the API."""
    queryset = Memory.objects.for_team(request.team)
    return queryset if request.membership.can_curate else queryset.filter(status=Status.ACTIVE)


def denied(request, kind: str, reference) -> Http404:
    """A 404 for a row this person cannot reach — another team's, or none at all: both answer alike,
    and the attempt is written to the audit log of the person's team."""
    denied_access_record(
        team=request.team, user=request.user, surface="dashboard", kind=kind, reference=reference
    )
    return Http404(f"No such {kind}.")


def get_or_404(request, queryset, kind: str, **lookup):
    """The one row of ``queryset`` (already scoped to ``request.team``) matching ``lookup``, or
    :func:`denied`."""
    found = queryset.filter(**lookup).first()
    if found is None:
        raise denied(request, kind, lookup.get("pk", lookup))
    return found


def fragment_of(page: str, *, with_pk: bool = False):
    """A GET that only answers htmx with a piece of ``page``; a browser opening the URL itself is sent
    to the whole page instead of being shown a fragment out of context."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if request.method == "GET" and not request.htmx:
                return redirect(page, *([kwargs["pk"]] if with_pk else []))
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
