"""Entities: the list with mention counts, the ambiguity queue, merging and aliases."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Q
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard.forms import AliasesForm, EntityFilterForm, EntityMergeForm, MentionResolveForm, split_list
from dashboard.permissions import curator_required, denied, fragment_of, get_or_404, member_required
from dashboard.views.common import form_error, human_error, paginate, render_page
from memory.models import Entity, EntityMention
from memory.services import entities as entity_service
from memory.services.errors import MemoryLaneError

TEMPLATE = "dashboard/entities.html"
QUEUE_SHOWN = 25  # the newest first; the rest appear as these are resolved


def _entities(team):
    return (
        Entity.objects.for_team(team)
        .canonical()
        .annotate(mention_count=Count("mentions", filter=Q(mentions__resolved=True)))
    )


def _queue(team):
    return (
        EntityMention.objects.for_team(team)
        .filter(resolved=False)
        .select_related("memory")
        .order_by("-created_at", "-pk")
    )


def _open_mention(request, pk) -> EntityMention:
    return get_or_404(request, _queue(request.team), "mention", pk=pk)


@require_GET
@member_required
def entity_list(request):
    form = EntityFilterForm(request.GET)
    queryset = _entities(request.team)
    if form.is_valid():
        if query := form.cleaned_data["q"].strip():
            queryset = queryset.filter(Q(slug__icontains=query) | Q(name__icontains=query))
        if form.cleaned_data["type"]:
            queryset = queryset.filter(type=form.cleaned_data["type"])
    context = {
        "form": form,
        "page": paginate(request, queryset.order_by("-mention_count", "slug")),
        "query_string": _without_page(request),
    }
    if request.membership.can_curate:
        queue = _queue(request.team)
        context["queue"] = list(queue[:QUEUE_SHOWN])
        context["queue_count"] = queue.count()
        context["merge_form"] = EntityMergeForm()
        context["all_slugs"] = list(
            Entity.objects.for_team(request.team)
            .canonical()
            .order_by("slug")
            .values_list("slug", flat=True)[:1000]
        )
    return render_page(request, TEMPLATE, context, partial="list")


def _without_page(request):
    query = request.GET.copy()
    query.pop("page", None)
    return query


def _mention_item(request, mention, *, status: int = 200, **extra):
    if not request.htmx:
        if extra.get("error"):
            messages.error(request, extra["error"])
        else:
            messages.success(request, extra.get("notice", "Done."))
        return redirect("dashboard:entities")
    return render_page(request, TEMPLATE, {"mention": mention, **extra}, partial="mention", status=status)


@require_POST
@curator_required
def mention_resolve(request, pk):
    mention = _open_mention(request, pk)
    form = MentionResolveForm(request.POST)
    if not form.is_valid():
        return _mention_item(request, mention, error=form_error(form), status=422)
    try:
        resolved = entity_service.mention_resolve_slug(mention=mention, slug=form.cleaned_data["slug"])
    except MemoryLaneError as exc:
        return _mention_item(request, mention, error=human_error(exc), status=422)
    resolved = (
        EntityMention.objects.for_team(request.team).select_related("entity", "memory").get(pk=resolved.pk)
    )
    return _mention_item(
        request, resolved, done=True, notice=f"“{mention.raw}” now points to {resolved.entity.slug}."
    )


@require_POST
@curator_required
def mention_dismiss(request, pk):
    mention = _open_mention(request, pk)
    entity_service.mention_dismiss(mention=mention)
    return _mention_item(request, mention, dismissed=True, notice=f"Dismissed “{mention.raw}”.")


@require_POST
@curator_required
def entity_merge(request):
    form = EntityMergeForm(request.POST)
    if not form.is_valid():
        messages.error(request, form_error(form))
        return redirect("dashboard:entities")
    found = {}
    for role in ("source", "target"):
        slug = entity_service.normalize_slug(form.cleaned_data[role])
        found[role] = Entity.objects.for_team(request.team).filter(slug=slug).first() if slug else None
        if found[role] is None:
            denied(request, "entity", form.cleaned_data[role])  # recorded; answered as a message
            messages.error(
                request, f"No entity “{form.cleaned_data[role]}”: give its slug, e.g. person:mark-robinson."
            )
            return redirect("dashboard:entities")
    try:
        target = entity_service.entity_merge(source=found["source"], target=found["target"])
    except MemoryLaneError as exc:
        messages.error(request, human_error(exc))
    else:
        messages.success(
            request, f"Merged {found['source'].slug} into {target.slug}; its mentions moved along."
        )
    return redirect("dashboard:entities")


@require_http_methods(["GET", "POST"])
@curator_required
@fragment_of("dashboard:entities")
def entity_aliases(request, pk):
    entity = get_or_404(request, _entities(request.team), "entity", pk=pk)
    if request.method == "GET":
        form = AliasesForm(initial={"aliases": ", ".join(entity.aliases)})
        return render_page(request, TEMPLATE, {"entity": entity, "form": form}, partial="aliases")
    form = AliasesForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            entity_service.entity_set_aliases(entity=entity, aliases=split_list(form.cleaned_data["aliases"]))
        except MemoryLaneError as exc:
            error = human_error(exc)
        else:
            if not request.htmx:
                messages.success(request, f"Aliases of {entity.slug} saved.")
                return redirect("dashboard:entities")
            entity = _entities(request.team).get(pk=pk)
            return render_page(request, TEMPLATE, {"entity": entity, "notice": "Saved."}, partial="entity")
    else:
        error = form_error(form)
    if not request.htmx:
        messages.error(request, error)
        return redirect("dashboard:entities")
    return render_page(
        request, TEMPLATE, {"entity": entity, "form": form, "error": error}, partial="aliases", status=422
    )


@require_GET
@curator_required
@fragment_of("dashboard:entities")
def entity_row(request, pk):
    entity = get_or_404(request, _entities(request.team), "entity", pk=pk)
    return render_page(request, TEMPLATE, {"entity": entity}, partial="entity")
