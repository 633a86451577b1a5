"""Who may do what on the dashboard: members read and give feedback; curators (staff) also act."""

from __future__ import annotations

from functools import wraps
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect

from memory.models import Memory, Status


def is_curator(user) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_staff)


def member_required(view):
    """Signed-in users only. An htmx request whose session expired is sent to the login page as a
    whole-page navigation instead of having the login form swapped into a row."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            if getattr(request, "htmx", False):
                response = HttpResponse(status=204)
                response["HX-Redirect"] = (
                    f"{settings.LOGIN_URL}?next={quote(request.htmx.current_url_abs_path or '/')}"
                )
                return response
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


def curator_required(view):
    """Curators only; a member gets 403 even when calling the URL by hand."""

    @member_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not is_curator(request.user):
            raise PermissionDenied("Only curators (staff users) can do this.")
        return view(request, *args, **kwargs)

    return wrapper


def visible_memories(user):
    """Curators see every memory; members only active ones (quarantined text is never shown to them),
    as in the API."""
    queryset = Memory.objects.all()
    return queryset if is_curator(user) else queryset.filter(status=Status.ACTIVE)


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
