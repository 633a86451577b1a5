"""A database outage is a 503 with Retry-After, never a 500 (which means a bug).

``DatabaseUnavailableMiddleware`` turns a database connection error raised by a view into 503
``SERVICE_UNAVAILABLE``: the API's error shape under ``/api/`` and ``/mcp``, a page that reloads
itself on the dashboard. Errors raised outside views (in other middleware: sessions, auth) reach
``memorylane.views.server_error`` (``handler500``), which answers the same way; DRF views map them in
``api.exceptions``. The web process reconnects by itself when the database is back.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from memory.conf import setting

DATABASE_ERRORS = (OperationalError, InterfaceError)
logger = logging.getLogger(__name__)
API_PREFIXES = ("/api/", "/mcp")
MESSAGE = "The database is unavailable right now; nothing was changed. Try again in a few seconds."


def retry_after() -> int:
    return int(setting("DATABASE_RETRY_AFTER_SECONDS"))


def unavailable_response(request) -> HttpResponse:
    """The 503 for ``request``: JSON for the API and /mcp, a short text for an htmx swap (the
    dashboard's script shows it as a message), otherwise a page that reloads itself."""
    seconds = retry_after()
    if request.path.startswith(API_PREFIXES):
        response = JsonResponse(
            {"error": {"code": "SERVICE_UNAVAILABLE", "message": MESSAGE, "retry_after_seconds": seconds}},
            status=503,
        )
    elif request.headers.get("HX-Request") == "true":
        response = HttpResponse(MESSAGE, status=503, content_type="text/plain; charset=utf-8")
    else:
        page = render_to_string(
            "503.html", {"retry_after": seconds}
        )  # no request: nothing reads the database
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(seconds)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DATABASE_ERRORS):
            logger.warning("database error on %s: %s", request.path, exception)
            return unavailable_response(request)
        return None


class TeamWallMiddleware:
    """Whatever team a request acted for under row-level security (memory.services.teams.enter_team),
    its connection leaves it when the request ends, and a connection that kept one from an earlier
    request (which ended abnormally) leaves it before this one starts. Outermost, so every path out
    of a request passes here."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from memory.services.teams import leave_team

        leave_team()
        try:
            return self.get_response(request)
        finally:
            leave_team()
