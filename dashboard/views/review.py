"""The review queue: approve, reject, edit and merge, each swapping the item in place; and the
changed facts the upsert found, to confirm, undo or keep both."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard.forms import FactChangeForm, MemoryEditForm, MergeForm, RejectForm
from dashboard.permissions import curator_required, denied, fragment_of, get_or_404
from dashboard.views.common import form_error, human_error, paginate, render_page, with_entities
from memory.conf import setting
from memory.models import FactChange, FactChangeKind, Memory, Status
from memory.services import curation, factchanges
from memory.services.errors import MemoryLaneError

TEMPLATE = "dashboard/review.html"
OUTCOMES = {
    "confirmed": "Confirmed: the new memory stands and the old one stays history.",
    "undone": "Undone: the old memory is back and the new one is rejected.",
    "both_true": "Both kept: the old memory is active again beside the new one.",
}
PROPOSAL_OUTCOMES = {
    "confirmed": "Accepted: the proposed memory is in force and the old one stays history.",
    "undone": "Declined: the settled memory stays in force and the proposal is rejected.",
    "both_true": "Both kept: the proposed memory is active beside the settled one.",
}


def _outcome(change: FactChange) -> str:
    return (PROPOSAL_OUTCOMES if change.kind == FactChangeKind.PROPOSAL else OUTCOMES)[change.status]


FILTERS = {
    "quarantined": {"status": Status.QUARANTINED},
    "pending": {"status": Status.PENDING_REVIEW},
    "unreviewed": {"status": Status.ACTIVE},
}


def _memory(request, pk) -> Memory:
    queryset = Memory.objects.for_team(request.team).select_related("author", "session", "reviewed_by")
    return with_entities([get_or_404(request, queryset, "memory", pk=pk)])[0]


def _item(request, memory: Memory, *, status: int = 200, **extra):
    """The queue item for one memory (htmx), or back to the queue (a plain form post)."""
    if not request.htmx:
        if extra.get("error"):
            messages.error(request, extra["error"])
        elif extra.get("notice"):
            messages.success(request, extra["notice"])
        return redirect("dashboard:review")
    return render_page(request, TEMPLATE, {"memory": memory, **extra}, partial="item", status=status)


@require_GET
@curator_required
def review_queue(request):
    shown = request.GET.get("show", "")
    queue = curation.review_queue(team=request.team)
    counts = {name: queue.filter(**flt).count() for name, flt in FILTERS.items()}
    changes = factchanges.open_fact_changes(team=request.team)
    counts["changed"] = changes.count()
    context = {"shown": shown, "counts": counts, "total": sum(counts.values())}
    if shown == "changed":
        context["changes"] = paginate(request, changes)
        return render_page(request, TEMPLATE, context)
    if shown in FILTERS:
        queue = queue.filter(**FILTERS[shown])
    page = paginate(request, queue.select_related("author", "session", "reviewed_by"))
    page.object_list = with_entities(page.object_list)
    context["page"] = page
    if not shown:
        context["changes"] = list(changes[: setting("REVIEW_CHANGED_FACTS_SHOWN")])
    return render_page(request, TEMPLATE, context)


@require_POST
@curator_required
def review_fact(request, pk):
    """Confirm, undo or keep both of a changed fact; the card is swapped for its outcome."""
    changes = FactChange.objects.for_team(request.team).select_related("old", "new")
    change = get_or_404(request, changes, "changed fact", pk=pk)
    form = FactChangeForm(request.POST)
    error = None
    if form.is_valid():
        try:
            change = factchanges.fact_change_resolve(
                change=change, action=form.cleaned_data["action"], actor=request.user
            )
        except MemoryLaneError as exc:
            error = human_error(exc)
    else:
        error = form_error(form)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, _outcome(change))
        return redirect(f"{reverse('dashboard:review')}?show=changed")
    context = {"change": change, "error": error, "outcome": None if error else _outcome(change)}
    return render_page(request, TEMPLATE, context, partial="fact", status=422 if error else 200)


@require_GET
@curator_required
@fragment_of("dashboard:review")
def review_item(request, pk):
    return _item(request, _memory(request, pk))


@require_POST
@curator_required
def review_approve(request, pk):
    memory = _memory(request, pk)
    try:
        memory = curation.memory_approve(memory=memory, actor=request.user)
    except MemoryLaneError as exc:
        return _item(request, memory, error=human_error(exc), status=422)
    return _item(request, _memory(request, memory.pk), done="approved", notice="Approved: it is active now.")


@require_POST
@curator_required
def review_reject(request, pk):
    memory = _memory(request, pk)
    form = RejectForm(request.POST)
    if not form.is_valid():
        return _item(request, memory, error=form_error(form), status=422)
    memory = curation.memory_reject(memory=memory, actor=request.user, reason=form.cleaned_data["reason"])
    return _item(
        request, _memory(request, memory.pk), done="rejected", notice="Rejected: it will not be served."
    )


@require_http_methods(["GET", "POST"])
@curator_required
@fragment_of("dashboard:review")
def review_edit(request, pk):
    memory = _memory(request, pk)
    if request.method == "GET":
        return render_page(
            request, TEMPLATE, {"memory": memory, "form": MemoryEditForm.for_memory(memory)}, partial="edit"
        )
    form = MemoryEditForm(request.POST, memory=memory)
    error = None
    if form.is_valid():
        try:
            memory = curation.memory_update(memory=memory, actor=request.user, **form.changes())
        except MemoryLaneError as exc:
            error = human_error(exc)
        else:
            return _item(request, _memory(request, memory.pk), notice="Saved.")
    if not request.htmx:
        messages.error(request, error or form_error(form))
        return redirect("dashboard:review")
    context = {"memory": memory, "form": form, "error": error}
    return render_page(request, TEMPLATE, context, partial="edit", status=422)


@require_http_methods(["GET", "POST"])
@curator_required
@fragment_of("dashboard:review")
def review_merge(request, pk):
    memory = _memory(request, pk)
    context = {"memory": memory, "candidates": curation.merge_candidates(memory=memory)}
    if request.method == "GET":
        return render_page(request, TEMPLATE, context, partial="merge")
    form = MergeForm(request.POST)
    if form.is_valid():
        target = Memory.objects.for_team(request.team).filter(pk=form.cleaned_data["chosen"]).first()
        if target is None:
            denied(request, "memory", form.cleaned_data["chosen"])  # recorded; answered as a form error
            context["error"] = "No memory has that id."
        else:
            try:
                target = curation.memory_merge(source=memory, target=target, actor=request.user)
            except MemoryLaneError as exc:
                context["error"] = human_error(exc)
            else:
                return _item(
                    request, _memory(request, memory.pk), done="merged", target=target, notice="Merged."
                )
    else:
        context["error"] = form_error(form)
    if not request.htmx:
        messages.error(request, context["error"])
        return redirect("dashboard:review")
    return render_page(request, TEMPLATE, context, partial="merge", status=422)
