"""Small helpers every dashboard page uses."""

from __future__ import annotations

from collections.abc import Iterable

from django.core.paginator import Page, Paginator
from django.db.models import Prefetch, prefetch_related_objects
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from memory.models import EntityMention, Memory
from memory.services.errors import AmbiguousEntity, InvalidInput, MemoryLaneError

PAGE_SIZE = 20
FIELD_LABELS = {
    "content": "Content",
    "memory_type": "Type",
    "type": "Type",
    "category": "Category",
    "priority": "Priority",
    "tags": "Tags",
    "entities": "Entities",
    "reason": "Reason",
    "target": "Target",
    "source": "Source",
    "status": "Status",
    "slug": "Entity",
    "aliases": "Aliases",
    "q": "Search",
}


def render_page(request, template: str, context: dict, *, partial: str | None = None, status: int = 200):
    """The whole page, or just ``partial`` of it when htmx asked."""
    name = f"{template}#{partial}" if partial and request.htmx else template
    return render(request, name, context, status=status)


def human_error(exc: MemoryLaneError) -> str:
    """A domain error as a sentence a person can act on."""
    if isinstance(exc, AmbiguousEntity):
        parts = [f"“{name}” could mean {' or '.join(slugs)}" for name, slugs in exc.ambiguities.items()]
        return "; ".join(parts) + ". Use the full slug, e.g. " + next(iter(exc.ambiguities.values()))[0] + "."
    if isinstance(exc, InvalidInput):
        return " ".join(
            f"{FIELD_LABELS.get(name, name.replace('_', ' ').capitalize())}: {' '.join(messages)}"
            for name, messages in exc.fields.items()
        )
    return exc.message


def form_error(form) -> str:
    """A bound form's errors as one sentence."""
    parts = []
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else ""
        parts.append(f"{label}: {' '.join(errors)}" if label else " ".join(errors))
    return " ".join(parts)


def paginate(request, queryset, per_page: int = PAGE_SIZE) -> Page:
    return Paginator(queryset, per_page).get_page(request.GET.get("page"))


def with_entities(memories: Iterable[Memory]) -> list[Memory]:
    """Attach resolved mentions (``memory.resolved_mentions``) in one query."""
    memories = list(memories)
    prefetch_related_objects(
        memories,
        Prefetch(
            "mentions",
            queryset=EntityMention.objects.filter(resolved=True).select_related("entity"),
            to_attr="resolved_mentions",
        ),
    )
    return memories


def safe_next(request, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return fallback
