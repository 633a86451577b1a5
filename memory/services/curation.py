"""What curators do to a memory: edit, approve, reject, delete, merge. Each works within the
memory's team (DESIGN.md §11): two memories of different teams are never merged or compared."""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Case, IntegerField, Q, Value, When
from django.utils import timezone

from memory import embeddings
from memory.conf import setting
from memory.models import (
    Action,
    Category,
    FactChange,
    FactChangeKind,
    FactChangeStatus,
    Maturity,
    Memory,
    MemoryType,
    Priority,
    Status,
    Team,
)
from memory.services import entities as entity_service
from memory.services import maturity as maturity_service
from memory.services.audit import record_event
from memory.services.errors import ContentTooLarge, InvalidInput, InvalidTransition, NotFound
from memory.services.redaction import redact
from memory.services.store import content_hash
from memory.services.upsert import scope_key, scope_of

EDITABLE = ("content", "memory_type", "category", "priority", "tags", "valid_until", "entities")


@transaction.atomic
def memory_update(*, memory: Memory, actor, **changes) -> Memory:
    """Edit a memory in place. New content is redacted, re-hashed and re-embedded; entities given
    replace the resolved ones. Raises InvalidInput, ContentTooLarge, AmbiguousEntity."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise InvalidInput({name: ["This field cannot be edited."] for name in sorted(unknown)})
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    errors: dict[str, list[str]] = {}
    diff: dict = {}
    if "content" in changes:
        content = changes["content"]
        if not isinstance(content, str) or not content.strip():
            errors["content"] = ["Content must be non-empty text."]
        elif len(content.strip()) > setting("MAX_CONTENT_CHARS"):
            raise ContentTooLarge({"content": [f"The limit is {setting('MAX_CONTENT_CHARS')} characters."]})
        else:
            content, _ = redact(content.strip())
            if content != memory.content:
                diff["content"] = [memory.content, content]
                memory.content = content
                memory.content_hash = content_hash(content)
                memory.embedding = embeddings.encode_one(content)
    for field, choices in (("memory_type", MemoryType), ("category", Category), ("priority", Priority)):
        if field in changes and changes[field] != getattr(memory, field):
            if changes[field] not in choices.values:
                errors[field] = [f"'{changes[field]}' is not one of: {', '.join(choices.values)}."]
            else:
                diff[field] = [getattr(memory, field), changes[field]]
                setattr(memory, field, changes[field])
    if "tags" in changes:
        tags = list(dict.fromkeys(t.strip().lower() for t in changes["tags"] or [] if t.strip()))
        if len(tags) > setting("MAX_TAGS") or any(len(t) > 64 for t in tags):
            errors["tags"] = [f"At most {setting('MAX_TAGS')} tags of at most 64 characters."]
        elif tags != memory.tags:
            diff["tags"] = [memory.tags, tags]
            memory.tags = tags
    if "valid_until" in changes:
        valid_until: datetime | None = changes["valid_until"]
        if valid_until is not None and valid_until < memory.valid_from:
            errors["valid_until"] = ["valid_until cannot be before valid_from."]
        else:
            diff["valid_until"] = [str(memory.valid_until), str(valid_until)]
            memory.valid_until = valid_until
    if errors:
        raise InvalidInput(errors)
    if "entities" in changes:
        resolution = entity_service.resolve_references(
            changes["entities"] or [], team=memory.team, create=True
        ).raise_if_ambiguous()
        before = sorted(memory.mentions.filter(resolved=True).values_list("entity__slug", flat=True))
        memory.mentions.filter(resolved=True).exclude(entity__in=resolution.entities).delete()
        entity_service.link_entities(memory, resolution.entities)
        after = sorted(e.slug for e in resolution.entities)
        if before != after:
            diff["entities"] = [before, after]
            memory.scope_key = scope_key(scope_of(after))
    if diff and getattr(actor, "pk", None):
        # Edited by a curator: settled knowledge, changed from now on only by its rules (§4.3).
        memory.reviewed_by, memory.reviewed_at = actor, timezone.now()
    try:
        with transaction.atomic():
            memory.save()
    except IntegrityError:
        raise InvalidInput({"content": ["Another live memory already has this content."]}) from None
    if diff:
        record_event(memory, Action.UPDATED, actor=actor, **diff)
    return memory


def _refuse_open_proposal(memory: Memory) -> None:
    """A proposal is accepted or declined as a changed fact (beside the memory it would change), not
    approved or rejected on its own: InvalidTransition names where."""
    change = (
        FactChange.objects.for_team(memory.team_id)
        .filter(new=memory, kind=FactChangeKind.PROPOSAL, status=FactChangeStatus.OPEN)
        .first()
    )
    if change is not None:
        raise InvalidTransition(
            f"This memory is a proposal to change memory {change.old_id}: accept or decline it as changed "
            f"fact {change.pk} (POST /api/v1/changed-facts/{change.pk}, or the review queue's Changed facts)."
        )


@transaction.atomic
def memory_approve(*, memory: Memory, actor) -> Memory:
    """A curator clears a pending, quarantined or unreviewed memory: active, with the reviewer kept."""
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    _refuse_open_proposal(memory)
    before = memory.status
    memory.status = Status.ACTIVE
    memory.status_reason = ""
    memory.reviewed_by = actor
    memory.reviewed_at = timezone.now()
    try:
        with transaction.atomic():
            memory.save(update_fields=["status", "status_reason", "reviewed_by", "reviewed_at", "updated_at"])
    except IntegrityError:
        raise InvalidInput(
            {"status": ["Another live memory already has this content; merge them instead."]}
        ) from None
    record_event(memory, Action.APPROVED, actor=actor, status=[before, Status.ACTIVE])
    return memory


@transaction.atomic
def memory_reject(*, memory: Memory, actor, reason: str = "") -> Memory:
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    _refuse_open_proposal(memory)
    before = memory.status
    memory.status = Status.REJECTED
    memory.status_reason = (reason or "").strip()[:1000]
    memory.reviewed_by = actor
    memory.reviewed_at = timezone.now()
    memory.save(update_fields=["status", "status_reason", "reviewed_by", "reviewed_at", "updated_at"])
    record_event(
        memory, Action.REJECTED, actor=actor, status=[before, Status.REJECTED], reason=memory.status_reason
    )
    return memory


@transaction.atomic
def memory_delete(*, memory: Memory, actor) -> None:
    """Delete a memory and its feedback; the audit log keeps a "deleted" entry with its content."""
    record_event(memory, Action.DELETED, actor=actor, content=memory.content, memory_type=memory.memory_type)
    memory.delete()


@transaction.atomic
def memory_curate(
    *,
    memory: Memory,
    actor,
    status: str | None = None,
    maturity: str | None = None,
    reason: str = "",
    **changes,
) -> Memory:
    """One curator request: edit fields, then approve or reject, then promote, deprecate or reset.
    All or nothing: if any step is refused, none of them happened."""
    if changes:
        memory = memory_update(memory=memory, actor=actor, **changes)
    if status == Status.ACTIVE:
        memory = memory_approve(memory=memory, actor=actor)
    elif status == Status.REJECTED:
        memory = memory_reject(memory=memory, actor=actor, reason=reason)
    elif status is not None:
        raise InvalidInput({"status": ["A curator sets status to active (approve) or rejected."]})
    if maturity == Maturity.PROVEN:
        memory = maturity_service.memory_promote(memory=memory, actor=actor)
    elif maturity == Maturity.DEPRECATED:
        memory = maturity_service.memory_deprecate(memory=memory, actor=actor, reason=reason)
    elif maturity == "reset":
        memory = maturity_service.memory_reset(memory=memory, actor=actor)
    elif maturity is not None:
        raise InvalidInput({"maturity": ["A curator sets maturity to proven, deprecated or reset."]})
    return memory


def merge_candidates(*, memory: Memory, limit: int = 5) -> list[tuple[Memory, float]]:
    """The live memories of ``memory``'s team most similar to it (same kind), with their cosine
    similarity: the targets a curator is offered when merging it into another."""
    live = (
        Memory.objects.for_team(memory.team_id)
        .active()
        .current()
        .filter(kind=memory.kind)
        .exclude(pk=memory.pk)
    )
    if memory.embedding is None:
        return [(candidate, 0.0) for candidate in live.order_by("-created_at")[:limit]]
    nearest = live.defer("search_vector").nearest(memory.embedding, limit, exact=True)
    return [(candidate, round(1.0 - candidate.distance, 4)) for candidate in nearest]


@transaction.atomic
def memory_merge(*, source: Memory, target: Memory, actor) -> Memory:
    """Fold ``source`` into ``target``: the target gains the source's tags and entities and counts it
    as a reinforcement; the source is archived, superseded by the target (so its history and the
    supersession chain lead to the survivor). Feedback stays with the memory it was given to, so
    aggregates remain recomputable from events. Raises InvalidInput, and NotFound for a target of
    another team (as for a missing one)."""
    if source.pk == target.pk:
        raise InvalidInput({"target": ["A memory cannot be merged into itself."]})
    if source.team_id != target.team_id:
        raise NotFound(f"No memory {target.pk}.")
    pair = Memory.objects.for_team(source.team_id).filter(pk__in=[source.pk, target.pk]).locked_in_key_order()
    locked = {m.pk: m for m in pair}
    for wanted in (source, target):
        if wanted.pk not in locked:
            raise NotFound(f"No memory {wanted.pk}.")
    source, target = locked[source.pk], locked[target.pk]
    if target.status != Status.ACTIVE or target.superseded_by_id is not None:
        raise InvalidInput({"target": ["Merge into an active memory that has not been superseded."]})
    if source.superseded_by_id is not None:
        raise InvalidInput({"source": ["This memory was already superseded or merged."]})
    now = timezone.now()
    tags = list(dict.fromkeys([*target.tags, *source.tags]))[: setting("MAX_TAGS")]
    target_diff: dict = {"merged_from": str(source.pk)}
    if tags != target.tags:
        target_diff["tags"] = [target.tags, tags]
    target.tags = tags
    target.reinforcement_count += 1 + source.reinforcement_count
    target.save(update_fields=["tags", "reinforcement_count", "updated_at"])
    entity_service.link_entities(
        target, [m.entity for m in source.mentions.filter(resolved=True).select_related("entity")]
    )
    before = source.status
    source.status = Status.ARCHIVED
    source.status_reason = f"Merged into {target.pk}"
    source.superseded_by = target
    source.valid_until = max(now, source.valid_from)
    source.reviewed_by = actor
    source.reviewed_at = now
    source.save(
        update_fields=[
            "status",
            "status_reason",
            "superseded_by",
            "valid_until",
            "reviewed_by",
            "reviewed_at",
            "updated_at",
        ]
    )
    record_event(
        source, Action.MERGED, actor=actor, merged_into=str(target.pk), status=[before, source.status]
    )
    record_event(target, Action.MERGED, actor=actor, **target_diff)
    return target


def review_queue(*, team: Team):
    """What awaits ``team``'s curators (DESIGN.md §6): quarantined and pending memories, and active
    candidates nobody has reviewed yet — quarantined first, then pending, then the rest, newest first.
    An open proposal waits with the changed facts instead, beside the memory it would change."""
    return (
        Memory.objects.for_team(team)
        .current()
        .filter(
            Q(status__in=[Status.QUARANTINED, Status.PENDING_REVIEW])
            | Q(status=Status.ACTIVE, maturity=Maturity.CANDIDATE, reviewed_by__isnull=True)
        )
        .exclude(changed_from__kind=FactChangeKind.PROPOSAL, changed_from__status=FactChangeStatus.OPEN)
        .annotate(
            queue_rank=Case(
                When(status=Status.QUARANTINED, then=Value(0)),
                When(status=Status.PENDING_REVIEW, then=Value(1)),
                default=Value(2),
                output_field=IntegerField(),
            )
        )
        .order_by("queue_rank", "-created_at", "-id")
    )
