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
