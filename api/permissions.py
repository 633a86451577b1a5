"""Scopes: read → search, context, list, export; write → store, feedback, sessions;
curate → edit, delete, merge. A token's scopes never exceed its member's role today (owner and
curator curate, member writes, reader reads); a dashboard session has its role's scopes in its
current team (api.access)."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from api.access import caller_of
from memory.models import Scope

ROLE_NEEDED = {
    Scope.CURATE: "a curator or owner of the team",
    Scope.WRITE: "a member, curator or owner of the team",
}


def scopes_of(request) -> frozenset[str]:
    caller = caller_of(request)
    return caller.scopes if caller is not None else frozenset()


class HasScope(BasePermission):
    """The view's ``required_scopes`` maps each HTTP method to the scope it needs."""

    message = "This token lacks the scope this request needs."

    def has_permission(self, request, view) -> bool:
        if not request.user or not request.user.is_authenticated:
            return False
        required_scopes = getattr(view, "required_scopes", {})
        required = required_scopes.get(request.method)
        if required is None:
            if request.method == "HEAD":
                required = required_scopes.get("GET")
            if required is None:  # OPTIONS, or a method the view lacks: DRF answers 405 for those
                return True
        if required not in scopes_of(request):
            caller = caller_of(request)
            if caller is None or caller.team is None:
                self.message = "This account is not a member of any team."
            else:
                role = ROLE_NEEDED.get(required)
                self.message = f"This request needs the '{required}' scope" + (f" ({role})." if role else ".")
            return False
        return True
