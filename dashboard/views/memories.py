"""The memory browser (live search with explain, filters, feedback) and the memory detail page."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Q
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from dashboard.forms import (
    DeprecateForm,
    FeedbackForm,
    MaturityActionForm,
    MemoryFilterForm,
    RestoreForm,
    SplitForm,
)
from dashboard.permissions import (
    curator_required,
    get_or_404,
    member_required,
    visible_memories,
    writer_required,
)
from dashboard.views.common import (
    form_error,
    human_error,
    paginate,
    render_page,
    safe_next,
    with_entities,
)
from dashboard.views.maturity import board_context
from memory.conf import setting
from memory.models import EntityMention, FeedbackEvent, Maturity, Memory, Status
from memory.services import curation, factchanges, history, maturity
from memory.services import entities as entity_service
from memory.services.errors import MemoryLaneError
from memory.services.feedback import feedback_record
from memory.services.search import memory_search

TEMPLATE = "dashboard/memories.html"
SEARCH_LIMIT = 25


def _search(request, form: MemoryFilterForm) -> tuple[list, str]:
    """Search hits for the form's query and filters, and a note about filters search cannot apply."""
    data = form.cleaned_data
    outcome = memory_search(
        team=request.team,
        query=data["q"],
        entities=[data["entity"]] if data.get("entity") else None,
        memory_type=data.get("type") or None,
        category=data.get("category") or None,
        priority=data.get("priority") or None,
        limit=SEARCH_LIMIT,
        record=False,  # a person browsing is not an agent being served: retrieval counts stay agents'
    )
    hits = outcome.results
    if data.get("maturity"):
        hits = [hit for hit in hits if hit.memory.maturity == data["maturity"]]
    with_entities([hit.memory for hit in hits])
    note = ""
    if data.get("status") and data["status"] != Status.ACTIVE:
        note = "Search covers active memories only; clear the search box to browse other statuses."
    elif data.get("maturity") == Maturity.DEPRECATED:
        note = "Deprecated memories are left out of search; clear the search box to browse them."
    if outcome.unknown_entities:
        note = f"No memory mentions {', '.join(outcome.unknown_entities)}."
    return hits, note


def _browse(request, form: MemoryFilterForm):
    data = form.cleaned_data
    queryset = visible_memories(request).select_related("author")
    for param, field in (
        ("type", "memory_type"),
        ("category", "category"),
        ("priority", "priority"),
        ("maturity", "maturity"),
        ("status", "status"),
    ):
        if data.get(param):
            queryset = queryset.filter(**{field: data[param]})
    note = ""
    if data.get("entity"):
        resolution = entity_service.resolve_references(
            [data["entity"]], team=request.team, create=False
        ).raise_if_ambiguous()
        if resolution.entities:
            queryset = queryset.mentioning(entity.pk for entity in resolution.entities)
        else:
            queryset, note = queryset.none(), f"No entity matches “{data['entity']}”."
    page = paginate(request, queryset.order_by("-created_at", "-id"))
    page.object_list = with_entities(page.object_list)
    return page, note


@require_GET
@member_required
def memory_list(request):
    form = MemoryFilterForm(request.GET, curator=request.membership.can_curate)
    context: dict = {"form": form, "hits": None, "page": None, "note": "", "error": ""}
    if not form.is_valid():
        context["error"] = form_error(form)
    else:
        try:
            if form.cleaned_data["q"].strip():
                context["hits"], context["note"] = _search(request, form)
            else:
                context["page"], context["note"] = _browse(request, form)
        except MemoryLaneError as exc:
            context["error"] = human_error(exc)
    context["query_string"] = request.GET.copy()
    context["query_string"].pop("page", None)
    return render_page(request, TEMPLATE, context, partial="results")


@require_POST
@writer_required
def memory_feedback(request, pk):
    memory = get_or_404(request, visible_memories(request), "memory", pk=pk)
    form = FeedbackForm(request.POST)
    context: dict = {}
    if not form.is_valid():
        context["error"] = form_error(form)
    elif not Memory.objects.for_team(request.team).servable().filter(pk=memory.pk).exists():
        context["error"] = "Only active, current memories that are not deprecated can be rated."
    else:
        try:
            result = feedback_record(
                memory=memory,
                signal=form.cleaned_data["signal"],
                user=request.user,
                note=form.cleaned_data["note"],
            )
        except MemoryLaneError as exc:
            context["error"] = human_error(exc)
        else:
            memory, context["feedback_given"] = result.memory, result.event.signal
            context["inverted"] = result.inverted
    if not request.htmx:
        if context.get("error"):
            messages.error(request, context["error"])
        else:
            messages.success(request, f"Recorded: {context['feedback_given']}.")
        return redirect(safe_next(request, reverse("dashboard:memory_detail", args=[memory.pk])))
    context["memory"] = with_entities(
        [Memory.objects.for_team(request.team).select_related("author").get(pk=memory.pk)]
    )[0]
    context["next_url"] = request.htmx.current_url_abs_path or ""
    return render_page(
        request, TEMPLATE, context, partial="card", status=422 if context.get("error") else 200
    )


def supersession_chain(memory: Memory) -> list[Memory]:
    """Oldest to newest: the memories this one replaced, itself, and what replaced it."""
    chain = [memory]
    seen = {memory.pk}
    older = memory.supersedes.order_by("-created_at").first()
    while older is not None and older.pk not in seen and len(chain) < 50:
        chain.insert(0, older)
        seen.add(older.pk)
        older = older.supersedes.order_by("-created_at").first()
    newer = memory.superseded_by
    while newer is not None and newer.pk not in seen and len(chain) < 100:
        chain.append(newer)
        seen.add(newer.pk)
        newer = newer.superseded_by
    return chain


def detail_context(request, memory: Memory) -> dict:
    """What the memory detail page shows of ``memory`` (one of ``visible_memories(request)``)."""
    visible = visible_memories(request)
    with_entities([memory])
    team = request.team
    return {
        "memory": memory,
        "unresolved": EntityMention.objects.for_team(team).filter(memory=memory, resolved=False),
        # The timeline newest first (the service reads it oldest first); versions oldest first.
        "timeline": list(reversed(history.memory_history(memory, readable=visible))),
        "versions": history.memory_versions(memory, readable=visible),
        "feedback": FeedbackEvent.objects.for_team(team)
        .filter(memory=memory)
        .select_related("user", "session")[:200],
        "chain": supersession_chain(memory),
        "sources": visible.filter(reflections=memory),
        "reflections": visible.filter(Q(sources=memory) | Q(pk=memory.condensed_into_id)).distinct(),
        "inversions": visible.filter(inverted_from=memory),
        "servable": Memory.objects.for_team(team).servable().filter(pk=memory.pk).exists(),
        "deprecate_form": DeprecateForm(),
        "multiplier": setting("MATURITY_MULTIPLIERS").get(memory.maturity),
        "can_promote": memory.maturity in (Maturity.CANDIDATE, Maturity.ESTABLISHED),
        "reinforcements": factchanges.reinforcements(memory),
    }


def _detail_memory(request, pk) -> Memory:
    return get_or_404(
        request,
        visible_memories(request).select_related(
            "author", "reviewed_by", "session", "superseded_by", "inverted_from", "condensed_into"
        ),
        "memory",
        pk=pk,
    )


@require_GET
@member_required
def memory_detail(request, pk):
    memory = _detail_memory(request, pk)
    return render_page(request, "dashboard/memory_detail.html", detail_context(request, memory))


@require_POST
@curator_required
def memory_restore(request, pk):
    """Set the memory's text back to one of its earlier versions: the page again (htmx swaps it
    whole, since the text, the versions and the timeline all change), or a redirect to it."""
    memory = _detail_memory(request, pk)
    form = RestoreForm(request.POST)
    notice = error = ""
    if not form.is_valid():
        error = form_error(form)
    else:
        version = form.cleaned_data["version"]
        try:
            history.memory_restore_version(memory=memory, version=version, actor=request.user)
        except MemoryLaneError as exc:
            error = human_error(exc)
        else:
            notice = f"Version {version} restored: it is the memory's text again."
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, notice)
        return redirect("dashboard:memory_detail", pk=memory.pk)
    context = {**detail_context(request, _detail_memory(request, pk)), "notice": notice, "error": error}
    return render_page(
        request, "dashboard/memory_detail.html", context, partial="page", status=422 if error else 200
    )


@require_POST
@curator_required
def memory_split(request, pk):
    """Store a text this memory absorbed (a NOOP) as a memory of its own."""
    memory = get_or_404(request, Memory.objects.for_team(request.team), "memory", pk=pk)
    form = SplitForm(request.POST)
    if not form.is_valid():
        messages.error(request, form_error(form))
        return redirect("dashboard:memory_detail", pk=memory.pk)
    try:
        result = factchanges.reinforcement_split(
            memory=memory, event_id=form.cleaned_data["reinforcement"], actor=request.user
        )
    except MemoryLaneError as exc:
        messages.error(request, human_error(exc))
        return redirect("dashboard:memory_detail", pk=memory.pk)
    messages.success(request, "Split out: the text is a memory of its own now.")
    return redirect("dashboard:memory_detail", pk=result.memory.pk)


def apply_maturity_action(memory: Memory, form: MaturityActionForm, actor) -> str:
    """Run a curator's promote, deprecate or reset; return what happened. Raises MemoryLaneError."""
    action = form.cleaned_data["action"]
    if action == "promote":
        maturity.memory_promote(memory=memory, actor=actor)
        return "Promoted to proven."
    if action == "deprecate":
        maturity.memory_deprecate(memory=memory, actor=actor, reason=form.cleaned_data["reason"])
        return "Deprecated: left out of search, context and export until reset."
    memory = maturity.memory_reset(memory=memory, actor=actor)
    return f"Reset: maturity follows feedback again ({memory.maturity})."


@require_POST
@curator_required
def memory_maturity(request, pk):
    """Promote, deprecate or reset from the detail page (a redirect back) or the maturity board
    (the board, re-rendered: the memory moves to its new column)."""
    memory = get_or_404(request, Memory.objects.for_team(request.team), "memory", pk=pk)
    form = MaturityActionForm(request.POST)
    notice = error = ""
    if not form.is_valid():
        error = form_error(form)
    else:
        try:
            notice = apply_maturity_action(memory, form, request.user)
        except MemoryLaneError as exc:
            error = human_error(exc)
    if request.htmx:
        context = {**board_context(request.team), "notice": notice, "error": error}
        return render_page(
            request, "dashboard/maturity.html", context, partial="board", status=422 if error else 200
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, notice)
    return redirect(safe_next(request, reverse("dashboard:memory_detail", args=[memory.pk])))


@require_POST
@curator_required  # DESIGN.md §6: curators delete (and the API's curate scope)
def memory_delete(request, pk):
    memory = get_or_404(request, Memory.objects.for_team(request.team), "memory", pk=pk)
    curation.memory_delete(memory=memory, actor=request.user)
    messages.success(request, "Deleted. The audit log keeps a record of its content.")
    return redirect("dashboard:memories")
