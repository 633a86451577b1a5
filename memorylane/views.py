import sys

from django.views import csrf, defaults

from api.exceptions import json_error, not_found


def page_not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return not_found(request)
    return defaults.page_not_found(request, exception)


def bad_request(request, exception=None):
    """``handler400``: a request Django refuses before any view (a missing or invalid Host header)
    answers in the API's error shape under /api/."""
    if request.path.startswith("/api/"):
        return json_error(request, "BAD_REQUEST", "The request is malformed (check its Host header).", 400)
    return defaults.bad_request(request, exception)


def csrf_failure(request, reason=""):
    if request.path.startswith("/api/"):
        return json_error(
            request, "CSRF_FAILED", "CSRF check failed: send the X-CSRFToken header with a session.", 403
        )
    return csrf.csrf_failure(request, reason)


def server_error(request):
    """``handler500``: a database outage met outside a view (sessions, authentication) is a 503."""
    from memorylane.middleware import DATABASE_ERRORS, unavailable_response

    if isinstance(sys.exc_info()[1], DATABASE_ERRORS):
        return unavailable_response(request)
    if request.path.startswith("/api/"):
        return json_error(
            request, "INTERNAL_ERROR", "Something went wrong on our side; the request changed nothing.", 500
        )
    return defaults.server_error(request)
