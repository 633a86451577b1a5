"""API tokens of the current team. Each person creates tokens of their own membership, with scopes
their role allows and an optional project allow-list; owners see and revoke every token of the
team, others only their own. A new token is shown once."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from dashboard.forms import TokenForm
from dashboard.permissions import get_or_404, member_required
from dashboard.views.common import render_page
from memory.models import ApiToken
from memory.services.tokens import InvalidScopes, token_create, token_revoke

TEMPLATE = "dashboard/tokens.html"


def _tokens(request):
    """The tokens this person manages: the whole team's for an owner, their own otherwise."""
    if request.membership.is_owner:
        return ApiToken.objects.filter(membership__team=request.team).select_related("user")
    return ApiToken.objects.filter(membership=request.membership).select_related("user")


def token_form(request, data=None) -> TokenForm:
    """The token form, offering the scopes the person's role allows."""
    return TokenForm(data, allowed_scopes=request.membership.scopes)


def mint(request, form: TokenForm) -> tuple[ApiToken, str] | None:
    """The token ``form`` describes, created for the signed-in person's membership of the current
    team, and its key (never stored); None, with the errors on ``form``, when it is invalid or asks
    for more than the role allows. This page and Connect an agent both mint through here."""
    if not form.is_valid():
        return None
    days = form.cleaned_data["expires_days"]
    try:
        return token_create(
            user=request.user,
            team=request.team,
            scopes=form.cleaned_data["scopes"],
            projects=form.cleaned_data["projects"],
            name=form.cleaned_data["name"].strip(),
            expires_at=timezone.now() + timedelta(days=days) if days else None,
        )
    except InvalidScopes as exc:
        form.add_error("scopes", str(exc))
        return None


def _context(request, form: TokenForm, **extra) -> dict:
    return {"form": form, "tokens": _tokens(request).order_by("-created_at"), **extra}


@require_http_methods(["GET", "POST"])
@member_required
def token_list(request):
    if request.method == "GET":
        return render_page(request, TEMPLATE, _context(request, token_form(request)))
    form = token_form(request, request.POST)
    if (minted := mint(request, form)) is None:
        return render_page(request, TEMPLATE, _context(request, form), status=422)
    token, key = minted
    # Rendered, not redirected: the key exists only in this response and is never stored.
    response = render_page(
        request, TEMPLATE, _context(request, token_form(request), new_token=token, new_key=key)
    )
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@member_required
def token_revoke_view(request, pk):
    # Someone else's token (unless an owner asks) or another team's is a 404, recorded.
    token = get_or_404(request, _tokens(request), "token", pk=pk)
    token = token_revoke(token=token)
    if not request.htmx:
        messages.success(request, f"Token {token.prefix}… revoked.")
        return redirect("dashboard:tokens")
    return render_page(request, TEMPLATE, {"token": token, "notice": "Revoked."}, partial="token")
