"""Agent sessions: outcome, extraction status, transcript, extracted memories, re-run."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Q
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from dashboard.forms import SessionFilterForm
from dashboard.permissions import curator_required, fragment_of, get_or_404, member_required, visible_memories
from dashboard.views.common import human_error, paginate, render_page, with_entities
from memory.models import ExtractionStatus, Recall, Session
from memory.services.errors import MemoryLaneError

TEMPLATE = "dashboard/session_detail.html"
TRANSCRIPT_PAGE = 100


@require_GET
@member_required
def session_list(request):
    form = SessionFilterForm(request.GET)
    queryset = (
        Session.objects.for_team(request.team)
        .select_related("user", "project")
        .annotate(
            message_count=Count("messages", distinct=True), memory_count=Count("memories", distinct=True)
        )
    )
    if form.is_valid():
        if query := form.cleaned_data["q"].strip():
            queryset = queryset.filter(Q(external_id__icontains=query) | Q(summary__icontains=query))
        if form.cleaned_data["agent"]:
            queryset = queryset.filter(agent=form.cleaned_data["agent"])
        if form.cleaned_data["extraction"]:
            queryset = queryset.filter(extraction_status=form.cleaned_data["extraction"])
    query_string = request.GET.copy()
    query_string.pop("page", None)
    context = {
        "form": form,
        "page": paginate(request, queryset.order_by("-started_at")),
        "query_string": query_string,
    }
    return render_page(request, "dashboard/sessions.html", context, partial="list")


def _session(request, pk) -> Session:
    sessions = Session.objects.for_team(request.team).select_related("user", "project")
    return get_or_404(request, sessions, "session", pk=pk)


@require_GET
@member_required
def session_detail(request, pk):
    session = _session(request, pk)
    messages = session.messages.order_by("seq")
    evidence = _evidence_range(request)
    if evidence and "page" not in request.GET:
        # Open the page that holds the evidence a memory links to (?from=3&to=5).
        before = messages.filter(seq__lt=evidence[0]).count()
        request.GET = request.GET.copy()
        request.GET["page"] = str(before // TRANSCRIPT_PAGE + 1)
    transcript = paginate(request, messages, per_page=TRANSCRIPT_PAGE)
    visible = visible_memories(request)
    context = {
        "session": session,
        "transcript": transcript,
        "evidence": evidence,
        "extracted": with_entities(visible.filter(session=session).order_by("created_at")),
        "recalls": Recall.objects.for_team(request.team)
        .filter(session=session, memory__in=visible)
        .select_related("memory")
        .order_by("rank"),
    }
    return render_page(request, TEMPLATE, context, partial="transcript")


def _evidence_range(request) -> tuple[int, int] | None:
    try:
        first = int(request.GET["from"])
        last = int(request.GET.get("to", first))
    except (KeyError, ValueError):
        return None
    return (first, last) if 0 <= first <= last else None


@require_GET
@member_required
@fragment_of("dashboard:session_detail", with_pk=True)
def session_status(request, pk):
    """The extraction status box; it polls itself while a re-run is pending or running."""
    session = _session(request, pk)
    polling = request.GET.get("poll") == "1" and session.extraction_status in (
        ExtractionStatus.PENDING,
        ExtractionStatus.RUNNING,
    )
    return render_page(request, TEMPLATE, {"session": session, "polling": polling}, partial="status")


@require_POST
@curator_required
def session_rerun(request, pk):
    from memory.services.extraction import extraction_requeue  # the pipeline's service (issue 5)

    session = _session(request, pk)
    error = ""
    try:
        session = extraction_requeue(session=session, user=request.user)
    except MemoryLaneError as exc:
        error = human_error(exc)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, "Extraction queued again.")
        return redirect("dashboard:session_detail", pk=session.pk)
    context = {
        "session": _session(request, session.pk),
        "polling": not error,
        "error": error,
        "notice": "" if error else "Queued.",
    }
    return render_page(request, TEMPLATE, context, partial="status", status=422 if error else 200)
