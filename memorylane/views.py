import sys

from django.views import csrf, defaults

from api.exceptions import json_error, not_found


def page_not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return not_found(request)
    return defaults.page_not_found(request, exception)


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
