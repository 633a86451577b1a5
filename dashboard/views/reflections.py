"""Reflections: the playbook bullets with their source observations, and Run now with progress."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Prefetch, Q
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from dashboard.permissions import curator_required, fragment_of, get_or_404, member_required, visible_memories
from dashboard.views.common import human_error, paginate, render_page, with_entities
from memory.models import Kind, TaskName, TaskRun, TaskRunStatus
from memory.services.errors import MemoryLaneError

TEMPLATE = "dashboard/reflections.html"
FINISHED = (TaskRunStatus.DONE, TaskRunStatus.FAILED)


def team_runs(team):
    """The reflection runs a team sees: its own (Run now) and the scheduled ones over every team,
    whose summaries the template leaves out (they count other teams' memories too)."""
    return TaskRun.objects.filter(Q(team=team) | Q(team__isnull=True), task=TaskName.REFLECT)


@require_GET
@member_required
def reflection_list(request):
    visible = visible_memories(request)
    reflections = (
        visible.filter(kind=Kind.REFLECTION)
        .prefetch_related(
            Prefetch("sources", queryset=visible.order_by("created_at"), to_attr="visible_sources")
        )
        .order_by("-created_at", "-id")
    )
    page = paginate(request, reflections)
    page.object_list = with_entities(page.object_list)
    run = team_runs(request.team).first()
    context = {"page": page, "run": run, "polling": run is not None and run.status not in FINISHED}
    return render_page(request, TEMPLATE, context, partial="list")


@require_POST
@curator_required
def reflection_run(request):
    from memory.services.reflection import reflection_queue  # the pipeline's service (issue 5)

    try:
        run = reflection_queue(team=request.team, user=request.user)
    except MemoryLaneError as exc:
        if not request.htmx:
            messages.error(request, human_error(exc))
            return redirect("dashboard:reflections")
        return render_page(
            request, TEMPLATE, {"run": None, "error": human_error(exc)}, partial="run", status=422
        )
    if not request.htmx:
        messages.success(request, "Reflection queued; this page shows its progress.")
        return redirect("dashboard:reflections")
    return render_page(request, TEMPLATE, {"run": run, "polling": True}, partial="run")


@require_GET
@member_required
@fragment_of("dashboard:reflections")
def reflection_run_status(request, pk):
    """The run's progress box. While the run is queued or running it polls itself every second;
    when the run finishes, the list reloads once (the "reflections-changed" event)."""
    run = get_or_404(request, team_runs(request.team), "reflection run", pk=pk)
    polling = run.status not in FINISHED
    response = render_page(request, TEMPLATE, {"run": run, "polling": polling}, partial="run")
    if not polling and request.htmx:
        response["HX-Trigger"] = "reflections-changed"
    return response
