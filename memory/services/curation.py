"""What curators do to a memory: edit, approve, reject, delete."""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import embeddings
from memory.conf import setting
from memory.models import Action, Category, Maturity, Memory, MemoryType, Priority, Status
from memory.services import entities as entity_service
from memory.services import maturity as maturity_service
from memory.services.audit import record_event
from memory.services.errors import ContentTooLarge, InvalidInput
from memory.services.redaction import redact
from memory.services.store import content_hash

EDITABLE = ("content", "memory_type", "category", "priority", "tags", "valid_until", "entities")


@transaction.atomic
def memory_update(*, memory: Memory, actor, **changes) -> Memory:
    """Edit a memory in place. New content is redacted, re-hashed and re-embedded; entities given
    replace the resolved ones. Raises InvalidInput, ContentTooLarge, AmbiguousEntity."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise InvalidInput({name: ["This field cannot be edited."] for name in sorted(unknown)})
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
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
            changes["entities"] or [], create=True
        ).raise_if_ambiguous()
        before = sorted(memory.mentions.filter(resolved=True).values_list("entity__slug", flat=True))
        memory.mentions.filter(resolved=True).exclude(entity__in=resolution.entities).delete()
        entity_service.link_entities(memory, resolution.entities)
        after = sorted(e.slug for e in resolution.entities)
        if before != after:
            diff["entities"] = [before, after]
    try:
        with transaction.atomic():
            memory.save()
    except IntegrityError:
        raise InvalidInput({"content": ["Another live memory already has this content."]}) from None
    if diff:
        record_event(memory, Action.UPDATED, actor=actor, **diff)
    return memory


@transaction.atomic
def memory_approve(*, memory: Memory, actor) -> Memory:
    """A curator clears a pending, quarantined or unreviewed memory: active, with the reviewer kept."""
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
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
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
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
