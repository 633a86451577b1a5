from __future__ import annotations

from django.shortcuts import render

from dashboard import charts, stats
from dashboard.permissions import member_required
from memory.services.health import health_report


@member_required
def overview(request):
    team = request.team
    figures = stats.overview(team)
    feedback_labels, feedback_series = stats.feedback_by_day(team)
    maturity_labels, maturity_series = stats.maturity_by_week(team)
    context = {
        "figures": figures,
        "maturity_chart": charts.stacked_columns(maturity_labels, maturity_series, max_labels=4),
        "feedback_chart": charts.stacked_columns(feedback_labels, feedback_series, max_labels=5),
        "category_chart": charts.horizontal_bars(figures["by_category"]),
        "activity": stats.recent_activity(team),
        "tasks": stats.task_health(team),
        "health": health_report(),
    }
    return render(request, "dashboard/overview.html", context)
