"""Storing memories (DESIGN.md §4.3): validate → redact → quarantine → hash → embed → upsert.

Every store returns an operation: ADD (a new memory), UPDATE (a new memory that supersedes a
near-duplicate in the same category) or NOOP (the existing memory, reinforced). Two live memories
never share content: a unique index on the content hash decides races between concurrent stores.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memory import embeddings
from memory.conf import setting
from memory.models import (
    Action,
    Category,
    Entity,
    Kind,
    Memory,
    MemoryType,
    Priority,
    Session,
    Source,
    Status,
)
from memory.services import entities as entity_service
from memory.services.audit import record_event
from memory.services.errors import ContentTooLarge, InvalidInput
from memory.services.redaction import injection_reasons, redact

ADD, UPDATE, NOOP = "ADD", "UPDATE", "NOOP"
MAX_TAG_LENGTH = 64
MAX_SOURCE_CHUNK_CHARS = 8000
NEIGHBOURS_CHECKED = 5
TOKEN_RE = re.compile(r"[a-z0-9]+")


def normalize_text(text: str) -> str:
    """Case, Unicode form and whitespace do not make two memories different."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()


def token_set(text: str) -> set[str]:
    return set(TOKEN_RE.findall(normalize_text(text)))


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass
class StoreResult:
    operation: str
    memory: Memory
    superseded: Memory | None = None
    redactions: list[str] = field(default_factory=list)
    quarantine_reasons: list[str] = field(default_factory=list)


@dataclass
class PreparedMemory:
    """A validated, redacted store request, ready to embed and upsert."""

    content: str
    content_hash: str
    memory_type: str
    category: str
    priority: str
    tags: list[str]
    confidence: int
    source: str
    source_chunk: str
    kind: str
    is_negative: bool
    status: str
    entity_refs: list[str]
    valid_from: datetime | None
    created_at: datetime | None
    agent_name: str
    redactions: list[str]
    quarantine_reasons: list[str]
    status_reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _choice(errors: dict, name: str, value, choices, default: str) -> str:
    if value in (None, ""):
        return default
    if value not in choices.values:
        errors[name] = [f"'{value}' is not one of: {', '.join(choices.values)}."]
    return value


def prepare(
    *,
    content: str,
    memory_type: str | None = None,
    category: str | None = None,
    priority: str | None = None,
    entities: list[str] | None = None,
    tags: list[str] | None = None,
    confidence: int | None = None,
    source: str = Source.API,
    source_chunk: str = "",
    kind: str = Kind.OBSERVATION,
    is_negative: bool = False,
    status: str | None = None,
    valid_from: datetime | None = None,
    created_at: datetime | None = None,
    agent_name: str = "",
) -> PreparedMemory:
    """Validate one store request and make its text safe to keep. Raises InvalidInput."""
    errors: dict[str, list[str]] = {}
    if not isinstance(content, str) or not content.strip():
        errors["content"] = ["Content must be non-empty text."]
        content = ""
    content = content.strip()
    if len(content) > setting("MAX_CONTENT_CHARS"):
        raise ContentTooLarge(
            {
                "content": [
                    f"Content is {len(content)} characters; the limit is {setting('MAX_CONTENT_CHARS')}."
                ]
            }
        )
    memory_type = _choice(errors, "type", memory_type, MemoryType, setting("DEFAULT_TYPE"))
    category = _choice(errors, "category", category, Category, setting("DEFAULT_CATEGORY"))
    priority = _choice(errors, "priority", priority, Priority, setting("DEFAULT_PRIORITY"))
    source = _choice(errors, "source", source, Source, Source.API)
    kind = _choice(errors, "kind", kind, Kind, Kind.OBSERVATION)
    if status is not None:
        status = _choice(errors, "status", status, Status, Status.ACTIVE)
    if confidence is None:
        confidence = setting("DEFAULT_CONFIDENCE")
    elif isinstance(confidence, bool) or not isinstance(confidence, int) or not 0 <= confidence <= 100:
        errors["confidence"] = ["Confidence must be an integer from 0 to 100."]
    tags = tags or []
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        errors["tags"] = ["Tags must be a list of strings."]
        tags = []
    tags = list(dict.fromkeys(tag.strip().lower() for tag in tags if tag.strip()))
    if len(tags) > setting("MAX_TAGS"):
        errors["tags"] = [f"At most {setting('MAX_TAGS')} tags."]
    elif any(len(tag) > MAX_TAG_LENGTH for tag in tags):
        errors["tags"] = [f"Tags are at most {MAX_TAG_LENGTH} characters."]
    if not isinstance(source_chunk, str) or len(source_chunk) > MAX_SOURCE_CHUNK_CHARS:
        errors["source_chunk"] = [f"The source chunk is text of at most {MAX_SOURCE_CHUNK_CHARS} characters."]
        source_chunk = ""
    entity_refs: list[str] = []
    try:
        entity_refs = entity_service.validate_references(entities or [])
    except InvalidInput as exc:
        errors.update(exc.fields)
    if len(agent_name) > 100:
        errors["agent_name"] = ["The agent name is at most 100 characters."]
    if errors:
        raise InvalidInput(errors)

    content, redactions = redact(content)
    source_chunk, chunk_redactions = redact(source_chunk)
    reasons = injection_reasons(content)
    if reasons:
        status = Status.QUARANTINED
    elif status is None:
        review = source == Source.EXTRACTION and setting("REVIEW_EXTRACTED")
        status = Status.PENDING_REVIEW if review else Status.ACTIVE
    return PreparedMemory(
        content=content,
        content_hash=content_hash(content),
        memory_type=memory_type,
        category=category,
        priority=priority,
        tags=tags,
        confidence=confidence,
        source=source,
        source_chunk=source_chunk,
        kind=kind,
        is_negative=is_negative,
        status=status,
        entity_refs=entity_refs,
        valid_from=valid_from,
        created_at=created_at,
        agent_name=agent_name,
        redactions=redactions + chunk_redactions,
        quarantine_reasons=reasons,
        status_reason=("Quarantined: " + "; ".join(reasons)) if reasons else "",
    )


def _live(kind: str):
    return Memory.objects.filter(kind=kind, superseded_by__isnull=True).filter(
        status__in=[Status.ACTIVE, Status.PENDING_REVIEW, Status.QUARANTINED]
    )


def _reinforce(existing: Memory, prepared: PreparedMemory, entities: list[Entity], author) -> StoreResult:
    tags = list(dict.fromkeys([*existing.tags, *prepared.tags]))
    Memory.objects.filter(pk=existing.pk).update(tags=tags, reinforcement_count=F("reinforcement_count") + 1)
    existing.refresh_from_db()
    entity_service.link_entities(existing, entities)
    record_event(existing, Action.REINFORCED, actor=author, source=prepared.source)
    return StoreResult(
        NOOP, existing, redactions=prepared.redactions, quarantine_reasons=prepared.quarantine_reasons
    )


def _store_one(
    prepared: PreparedMemory,
    vector,
    *,
    author=None,
    session: Session | None = None,
    dedupe: bool = True,
) -> StoreResult:
    resolution = entity_service.resolve_references(prepared.entity_refs, create=True).raise_if_ambiguous()
    entities = resolution.entities
    same = _live(prepared.kind).filter(content_hash=prepared.content_hash).first()
    if same is not None:
        return _reinforce(same, prepared, entities, author)

    supersede: Memory | None = None
    if dedupe:
        neighbours = _live(prepared.kind).filter(status=Status.ACTIVE).nearest(vector, NEIGHBOURS_CHECKED)
        tokens = token_set(prepared.content)
        for neighbour in neighbours:
            cosine = 1.0 - neighbour.distance
            if cosine >= setting("NOOP_COSINE") or jaccard(tokens, token_set(neighbour.content)) >= setting(
                "NOOP_JACCARD"
            ):
                return _reinforce(neighbour, prepared, entities, author)
            if (
                supersede is None
                and prepared.status
                == Status.ACTIVE  # quarantined or unreviewed text never hides a live memory
                and cosine >= setting("UPDATE_COSINE")
                and neighbour.category == prepared.category
            ):
                supersede = neighbour

    now = timezone.now()
    created_at = prepared.created_at or now
    memory = Memory(
        kind=prepared.kind,
        content=prepared.content,
        content_hash=prepared.content_hash,
        memory_type=prepared.memory_type,
        category=prepared.category,
        priority=prepared.priority,
        is_negative=prepared.is_negative,
        embedding=vector,
        tags=prepared.tags,
        confidence=prepared.confidence,
        status=prepared.status,
        status_reason=prepared.status_reason,
        source=prepared.source,
        source_chunk=prepared.source_chunk,
        session=session,
        author=author if getattr(author, "pk", None) else None,
        agent_name=prepared.agent_name,
        valid_from=prepared.valid_from or created_at,
        last_validated_at=created_at,
        created_at=created_at,
    )
    try:
        with transaction.atomic():
            memory.save(force_insert=True)
    except IntegrityError:
        # A concurrent store of the same content won the race: that one is ours too.
        same = _live(prepared.kind).filter(content_hash=prepared.content_hash).first()
        if same is None:
            raise
        return _reinforce(same, prepared, entities, author)

    if supersede is not None:
        supersede = Memory.objects.select_for_update().get(pk=supersede.pk)
        carried = Entity.objects.filter(mentions__memory=supersede, mentions__resolved=True)
        entities = list(dict.fromkeys([*entities, *carried]))
        supersede.valid_until = max(now, supersede.valid_from)
        supersede.superseded_by = memory
        supersede.save(update_fields=["valid_until", "superseded_by", "updated_at"])
        record_event(supersede, Action.SUPERSEDED, actor=author, superseded_by=str(memory.pk))
    entity_service.link_entities(memory, entities)
    if resolution.unknown:
        entity_service.record_unresolved(memory, {}, resolution.unknown)
    if prepared.kind == Kind.OBSERVATION and not prepared.entity_refs:
        detected = entity_service.detect_in_text(prepared.content)
        entity_service.link_entities(memory, detected.entities)
        if detected.ambiguities:
            entity_service.record_unresolved(memory, detected.ambiguities)
    record_event(
        memory,
        Action.QUARANTINED if prepared.status == Status.QUARANTINED else Action.CREATED,
        actor=author,
        operation=UPDATE if supersede else ADD,
        source=prepared.source,
        redactions=prepared.redactions,
        quarantine_reasons=prepared.quarantine_reasons,
        supersedes=str(supersede.pk) if supersede else None,
    )
    return StoreResult(
        UPDATE if supersede else ADD,
        memory,
        superseded=supersede,
        redactions=prepared.redactions,
        quarantine_reasons=prepared.quarantine_reasons,
    )


def memory_store(
    *, author=None, session: Session | None = None, dedupe: bool = True, **fields
) -> StoreResult:
    """Store one memory. Raises InvalidInput, ContentTooLarge or AmbiguousEntity; stores nothing then."""
    prepared = prepare(**fields)
    vector = embeddings.encode_one(prepared.content)
    with transaction.atomic():
        return _store_one(prepared, vector, author=author, session=session, dedupe=dedupe)


def memory_store_batch(
    items: list[dict], *, author=None, session: Session | None = None, dedupe: bool = True
) -> list[StoreResult]:
    """Store many memories with one embedding call. All or nothing: an invalid or ambiguous item
    stores none of them (InvalidInput names it as ``items[i].field``)."""
    if len(items) > setting("MAX_BATCH"):
        raise InvalidInput({"items": [f"At most {setting('MAX_BATCH')} memories per batch."]})
    prepared, errors = [], {}
    for index, item in enumerate(items):
        try:
            prepared.append(prepare(**item))
        except InvalidInput as exc:
            errors.update({f"items[{index}].{name}": messages for name, messages in exc.fields.items()})
    if errors:
        raise InvalidInput(errors)
    vectors = embeddings.encode([p.content for p in prepared])
    with transaction.atomic():
        return [
            _store_one(p, vector, author=author, session=session, dedupe=dedupe)
            for p, vector in zip(prepared, vectors, strict=True)
        ]
