"""What every dashboard page's navigation needs: the current team, the person's teams for the
switcher, and what their role lets them do."""

from __future__ import annotations

from dashboard.permissions import resolve_team


def navigation(request) -> dict:
    user = getattr(request, "user", None)
    membership = resolve_team(request) if user is not None and user.is_authenticated else None
    curator = bool(membership and membership.can_curate)

    def review_count() -> int:  # called by the template only when it is shown
        from memory.services.curation import review_queue

        return review_queue(team=membership.team).count()

    return {
        "membership": membership,
        "current_team": membership.team if membership else None,
        "memberships": getattr(request, "memberships", []),
        "is_curator": curator,
        "is_owner": bool(membership and membership.is_owner),
        "can_write": bool(membership and membership.can_write),
        "review_count": review_count if curator else None,
    }
