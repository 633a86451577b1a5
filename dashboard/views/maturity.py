"""The maturity board: candidate, established, proven and deprecated columns with their counts."""

from __future__ import annotations

from django.views.decorators.http import require_GET

from dashboard.permissions import member_required
from dashboard.views.common import render_page, with_entities
from memory.models import Maturity, Memory

PER_COLUMN = 12


def board_context(team) -> dict:
    """The team's active, current memories per maturity; each column shows its best by feedback
    score."""
    live = Memory.objects.for_team(team).active().current().select_related("author")
    columns = []
    for value, label in Maturity.choices:
        in_column = live.filter(maturity=value)
        memories = with_entities(in_column.order_by("-feedback_score", "-created_at")[:PER_COLUMN])
        columns.append(
            {"value": value, "label": label.capitalize(), "count": in_column.count(), "memories": memories}
        )
    return {"columns": columns, "per_column": PER_COLUMN}


@require_GET
@member_required
def maturity_board(request):
    return render_page(request, "dashboard/maturity.html", board_context(request.team), partial="board")
