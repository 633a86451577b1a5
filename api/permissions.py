"""Scopes: read → search, context, list, export; write → store, feedback, sessions;
curate → edit, delete, merge (and only for staff users)."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from memory.models import ApiToken, Scope


def scopes_of(request) -> set[str]:
    """A token's scopes; a logged-in dashboard user reads and writes, and curates if staff."""
    user = request.user
    if not user or not user.is_authenticated:
        return set()
    if isinstance(request.auth, ApiToken):
        scopes = set(request.auth.scopes)
    else:
        scopes = {Scope.READ, Scope.WRITE, Scope.CURATE}
    if not user.is_staff:
        scopes.discard(Scope.CURATE)
    return scopes


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
            self.message = f"This request needs the '{required}' scope" + (
                " and a curator (staff) account." if required == Scope.CURATE else "."
            )
            return False
        return True
