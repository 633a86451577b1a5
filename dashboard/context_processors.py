"""What every dashboard page's navigation needs."""

from __future__ import annotations

from dashboard.permissions import is_curator


def navigation(request) -> dict:
    user = getattr(request, "user", None)
    curator = bool(user is not None and is_curator(user))

    def review_count() -> int:  # called by the template only when it is shown
        from memory.services.curation import review_queue

        return review_queue().count()

    return {"is_curator": curator, "review_count": review_count if curator else None}
