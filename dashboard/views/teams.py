"""The team switcher, and the Members page where owners add, create, re-role and remove members."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.http import require_GET, require_POST

from dashboard.forms import MemberAddForm, MemberCreateForm, MemberRoleForm
from dashboard.permissions import TEAM_SESSION_KEY, denied, get_or_404, member_required, owner_required
from dashboard.views.common import form_error, human_error, render_page, safe_next
from memory.models import DeniedAccess, Membership
from memory.services import teams
from memory.services.errors import MemoryLaneError

TEMPLATE = "dashboard/members.html"
DENIALS_SHOWN = 10
# A page about one row of the old team has no counterpart in the new one: go to its list instead.
LIST_OF = {
    "memory_detail": "dashboard:memories",
    "session_detail": "dashboard:sessions",
}


@require_POST
@member_required
def team_switch(request):
    """Make another of the person's teams the current one. A team they do not belong to answers
    404 like one that does not exist, and the current team stays."""
    slug = request.POST.get("team", "")
    chosen = next((m for m in request.memberships if m.team.slug == slug), None)
    if chosen is None:
        raise denied(request, "team", slug)
    request.session[TEAM_SESSION_KEY] = chosen.team.slug
    messages.success(request, f"You are working in {chosen.team.name}.")
    return redirect(_same_page_in_new_team(safe_next(request, "/")))


def _same_page_in_new_team(target: str) -> str:
    path = target.split("?", 1)[0]
    try:
        match = resolve(path)
    except Resolver404:
        return "/"
    if not match.kwargs:
        return target
    return reverse(LIST_OF.get(match.url_name, "dashboard:overview"))


def _members(team):
    return Membership.objects.filter(team=team).select_related("user").order_by("user__username")


def _page(request, *, add_form=None, create_form=None, status: int = 200):
    context = {
        "members": _members(request.team),
        "add_form": add_form or MemberAddForm(team=request.team),
        "create_form": create_form or MemberCreateForm(),
        "roles": MemberRoleForm.base_fields["role"].choices,
        # Who of the team asked for a row it cannot see (another team's id, or none at all).
        "denials": DeniedAccess.objects.for_team(request.team).select_related("user")[:DENIALS_SHOWN],
    }
    return render_page(request, TEMPLATE, context, status=status)


@require_GET
@owner_required
def member_list(request):
    return _page(request)


@require_POST
@owner_required
def member_add(request):
    form = MemberAddForm(request.POST, team=request.team)
    if not form.is_valid():
        return _page(request, add_form=form, status=422)
    user = form.cleaned_data["username"]
    teams.member_add(team=request.team, user=user, role=form.cleaned_data["role"])
    messages.success(
        request, f"{user.get_username()} joined {request.team.name} as {form.cleaned_data['role']}."
    )
    return redirect("dashboard:members")


@require_POST
@owner_required
def member_create(request):
    form = MemberCreateForm(request.POST)
    if not form.is_valid():
        return _page(request, create_form=form, status=422)
    with transaction.atomic():  # no account without its membership
        user = form.create_user()
        teams.member_add(team=request.team, user=user, role=form.cleaned_data["role"])
    messages.success(
        request, f"Created {user.get_username()}, a {form.cleaned_data['role']} of {request.team.name}."
    )
    return redirect("dashboard:members")


def _member(request, pk) -> Membership:
    return get_or_404(request, _members(request.team), "membership", pk=pk)


def _row(request, membership: Membership, *, status: int = 200, **extra):
    """The member's row (htmx), or back to the page with a message (a plain form post)."""
    if not request.htmx:
        if extra.get("error"):
            messages.error(request, extra["error"])
        elif extra.get("notice"):
            messages.success(request, extra["notice"])
        return redirect("dashboard:members")
    context = {"member": membership, "roles": MemberRoleForm.base_fields["role"].choices, **extra}
    return render_page(request, TEMPLATE, context, partial="member", status=status)


@require_POST
@owner_required
def member_role(request, pk):
    membership = _member(request, pk)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        return _row(request, membership, error=form_error(form), status=422)
    try:
        membership = teams.member_set_role(membership=membership, role=form.cleaned_data["role"])
    except MemoryLaneError as exc:  # a team keeps one owner
        membership.refresh_from_db(fields=["role"])
        return _row(request, membership, error=human_error(exc), status=422)
    name = membership.user.get_username()
    return _row(request, membership, notice=f"{name} is a {membership.role} now.")


@require_POST
@owner_required
def member_remove(request, pk):
    membership = _member(request, pk)
    try:
        teams.member_remove(membership=membership)
    except MemoryLaneError as exc:
        return _row(request, membership, error=human_error(exc), status=422)
    notice = f"{membership.user.get_username()} left {request.team.name}; their tokens of it stop working."
    return _row(request, membership, removed=True, notice=notice)
