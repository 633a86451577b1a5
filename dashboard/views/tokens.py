"""API tokens: each person creates, lists and revokes their own. A new token is shown once."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from dashboard.forms import TokenForm
from dashboard.permissions import is_curator, member_required
from dashboard.views.common import render_page
from memory.models import ApiToken
from memory.services.tokens import InvalidScopes, token_create, token_revoke

TEMPLATE = "dashboard/tokens.html"


def _context(request, form: TokenForm, **extra) -> dict:
    return {
        "form": form,
        "tokens": ApiToken.objects.filter(user=request.user).order_by("-created_at"),
        **extra,
    }


@require_http_methods(["GET", "POST"])
@member_required
def token_list(request):
    curator = is_curator(request.user)
    if request.method == "GET":
        return render_page(request, TEMPLATE, _context(request, TokenForm(curator=curator)))
    form = TokenForm(request.POST, curator=curator)
    if not form.is_valid():
        return render_page(request, TEMPLATE, _context(request, form), status=422)
    days = form.cleaned_data["expires_days"]
    try:
        token, key = token_create(
            user=request.user,
            scopes=form.cleaned_data["scopes"],
            name=form.cleaned_data["name"].strip(),
            expires_at=timezone.now() + timedelta(days=days) if days else None,
        )
    except InvalidScopes as exc:
        form.add_error("scopes", str(exc))
        return render_page(request, TEMPLATE, _context(request, form), status=422)
    # Rendered, not redirected: the key exists only in this response and is never stored.
    response = render_page(
        request, TEMPLATE, _context(request, TokenForm(curator=curator), new_token=token, new_key=key)
    )
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@member_required
def token_revoke_view(request, pk):
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)  # someone else's token is a 404
    token = token_revoke(token=token)
    if not request.htmx:
        messages.success(request, f"Token {token.prefix}… revoked.")
        return redirect("dashboard:tokens")
    return render_page(request, TEMPLATE, {"token": token, "notice": "Revoked."}, partial="token")
