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

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from memory import embeddings
from memory.conf import setting
from memory.models import (
    Action,
    Category,
    Entity,
    EntityMention,
    Kind,
    Memory,
    MemoryEvent,
    MemoryType,
    Priority,
    Session,
    Source,
    Status,
)
from memory.services import entities as entity_service
from memory.services.errors import AmbiguousEntity, ContentTooLarge, InvalidInput
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


NEIGHBOURS_SQL = """
SELECT q.idx, m.id, m.embedding <=> q.vec::vector AS distance
FROM unnest(%s::text[]) WITH ORDINALITY AS q(vec, idx)
CROSS JOIN LATERAL (
    SELECT id, embedding FROM memory_memory
    WHERE kind = %s AND status = ANY(%s) AND superseded_by_id IS NULL
    ORDER BY embedding <=> q.vec::vector
    LIMIT %s
) AS m
ORDER BY q.idx, distance
"""


def _neighbours(
    kind: str, vectors, statuses: tuple[str, ...] = (Status.ACTIVE,)
) -> list[list[tuple[Memory, float]]]:
    """For each vector, the closest memories of ``kind`` (active ones unless ``statuses`` says
    otherwise) with their cosine similarity, in one round trip (HNSW serves each lateral lookup)."""
    texts = ["[" + ",".join(f"{x:.7g}" for x in vector) + "]" for vector in vectors]
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(setting("HNSW_EF_SEARCH"))])
        cursor.execute(NEIGHBOURS_SQL, [texts, kind, list(statuses), NEIGHBOURS_CHECKED])
        rows = cursor.fetchall()
    memories = Memory.objects.defer("embedding", "search_vector").in_bulk({pk for _, pk, _ in rows})
    found: list[list[tuple[Memory, float]]] = [[] for _ in texts]
    for index, pk, distance in rows:
        found[index - 1].append((memories[pk], 1.0 - distance))
    return found


def nearest_live(kind: str, vectors) -> list[tuple[Memory | None, float]]:
    """For each vector, the most similar live memory of ``kind`` (active, awaiting review or
    quarantined) and its cosine similarity; ``(None, -1.0)`` when there is none."""
    if not len(vectors):
        return []
    found = _neighbours(kind, vectors, statuses=(Status.ACTIVE, Status.PENDING_REVIEW, Status.QUARANTINED))
    return [max(pairs, key=lambda pair: pair[1]) if pairs else (None, -1.0) for pairs in found]


@dataclass
class _Plan:
    """What one prepared item will become: a NOOP on ``existing``, or a new memory that may
    supersede ``supersede``."""

    prepared: PreparedMemory
    entities: list[Entity]
    unknown: list[str]
    operation: str = ADD
    existing: Memory | None = None
    batch_twin: int | None = None  # NOOP on a memory created earlier in this batch
    supersede: Memory | None = None
    memory: Memory | None = None


def _store_many(
    prepared: list[PreparedMemory],
    vectors,
    *,
    author=None,
    session: Session | None = None,
    dedupe: bool = True,
    retry: bool = True,
) -> list[StoreResult]:
    """The upsert of DESIGN.md §4.3 for a list of items, in a handful of queries whatever its length.

    Items are decided in order: each is compared with live memories and with the items before it
    in the same list (identical or near-identical text → NOOP); only memories already stored can
    be superseded. The caller holds the transaction."""
    author = author if getattr(author, "pk", None) else None
    slugs = [slug for p in prepared for ref in p.entity_refs if (slug := entity_service.normalize_slug(ref))]
    by_slug = entity_service.entities_for_slugs(slugs, create=True) if slugs else {}
    needs_pool = any(not entity_service.normalize_slug(ref) for p in prepared for ref in p.entity_refs)
    pool = list(Entity.objects.canonical()) if needs_pool else None
    plans, ambiguities = [], {}
    for item in prepared:
        resolution = entity_service.resolve_references(
            item.entity_refs, create=False, by_slug=by_slug, pool=pool
        )
        ambiguities.update(resolution.ambiguities)
        plans.append(_Plan(item, resolution.entities, resolution.unknown))
    if ambiguities:
        raise AmbiguousEntity(ambiguities)

    by_hash: dict[tuple[str, str], Memory] = {
        (m.kind, m.content_hash): m
        for kind in {p.kind for p in prepared}
        for m in _live(kind).filter(content_hash__in=[p.content_hash for p in prepared if p.kind == kind])
    }
    neighbours: dict[int, list[tuple[Memory, float]]] = {}
    if dedupe:
        for kind in {p.kind for p in prepared}:
            indexes = [i for i, p in enumerate(prepared) if p.kind == kind]
            for index, found in zip(indexes, _neighbours(kind, [vectors[i] for i in indexes]), strict=True):
                neighbours[index] = found

    superseded: set = set()
    for index, plan in enumerate(plans):
        item = plan.prepared
        if (item.kind, item.content_hash) in by_hash:
            plan.operation, plan.existing = NOOP, by_hash[(item.kind, item.content_hash)]
            continue
        if not dedupe:
            continue
        tokens = token_set(item.content)
        for earlier in range(index):
            other = plans[earlier]
            if other.operation == NOOP or other.prepared.kind != item.kind:
                continue
            cosine = float(vectors[earlier] @ vectors[index])
            if (
                other.prepared.content_hash == item.content_hash
                or cosine >= setting("NOOP_COSINE")
                or jaccard(tokens, token_set(other.prepared.content)) >= setting("NOOP_JACCARD")
            ):
                plan.operation, plan.batch_twin = NOOP, earlier
                break
        if plan.operation == NOOP:
            continue
        for neighbour, cosine in neighbours.get(index, []):
            if cosine >= setting("NOOP_COSINE") or jaccard(tokens, token_set(neighbour.content)) >= setting(
                "NOOP_JACCARD"
            ):
                plan.operation, plan.existing, plan.supersede = NOOP, neighbour, None
                break
            if (
                plan.supersede is None
                and item.status == Status.ACTIVE  # quarantined or unreviewed text never hides a live memory
                and cosine >= setting("UPDATE_COSINE")
                and neighbour.category == item.category
                and neighbour.pk not in superseded
            ):
                plan.supersede = neighbour
        if plan.supersede is not None:
            plan.operation = UPDATE
            superseded.add(plan.supersede.pk)

    now = timezone.now()
    new_plans = [plan for plan in plans if plan.operation != NOOP]
    for index, plan in enumerate(plans):
        if plan.operation == NOOP:
            continue
        item = plan.prepared
        created_at = item.created_at or now
        plan.memory = Memory(
            kind=item.kind,
            content=item.content,
            content_hash=item.content_hash,
            memory_type=item.memory_type,
            category=item.category,
            priority=item.priority,
            is_negative=item.is_negative,
            embedding=vectors[index],
            tags=item.tags,
            confidence=item.confidence,
            status=item.status,
            status_reason=item.status_reason,
            source=item.source,
            source_chunk=item.source_chunk,
            session=session,
            author=author,
            agent_name=item.agent_name,
            valid_from=item.valid_from or created_at,
            last_validated_at=created_at,
            created_at=created_at,
        )
    try:
        with transaction.atomic():
            Memory.objects.bulk_create([plan.memory for plan in new_plans])
    except IntegrityError:
        if not retry:
            raise
        # A concurrent store of the same content won the race; decide again, item by item, now
        # that its row is visible.
        return [
            _store_many(
                [item], vectors[i : i + 1], author=author, session=session, dedupe=dedupe, retry=False
            )[0]
            for i, item in enumerate(prepared)
        ]

    mentions, unresolved, events, results = [], {}, [], []
    for plan in plans:
        item = plan.prepared
        if plan.operation == NOOP:
            target = plan.existing if plan.batch_twin is None else plans[plan.batch_twin].memory
            tags = list(dict.fromkeys([*target.tags, *item.tags]))
            Memory.objects.filter(pk=target.pk).update(
                tags=tags, reinforcement_count=F("reinforcement_count") + 1
            )
            target.tags = tags
            target.reinforcement_count += 1
            mentions += [(target, entity) for entity in plan.entities]
            events.append(
                MemoryEvent(
                    memory=target,
                    memory_ref=target.pk,
                    action=Action.REINFORCED,
                    actor=author,
                    diff={"source": item.source},
                )
            )
            results.append(
                StoreResult(
                    NOOP, target, redactions=item.redactions, quarantine_reasons=item.quarantine_reasons
                )
            )
            continue
        memory, entities = plan.memory, list(plan.entities)
        if plan.supersede is not None:
            old = Memory.objects.select_for_update().get(pk=plan.supersede.pk)
            entities += [
                e
                for e in Entity.objects.filter(mentions__memory=old, mentions__resolved=True)
                if e not in entities
            ]
            old.valid_until = max(now, old.valid_from)
            old.superseded_by = memory
            old.save(update_fields=["valid_until", "superseded_by", "updated_at"])
            plan.supersede = old
            events.append(
                MemoryEvent(
                    memory=old,
                    memory_ref=old.pk,
                    action=Action.SUPERSEDED,
                    actor=author,
                    diff={"superseded_by": str(memory.pk)},
                )
            )
        if item.kind == Kind.OBSERVATION and not item.entity_refs:
            if pool is None:
                pool = list(Entity.objects.canonical())
            detected = entity_service.detect_in_text(item.content, pool)
            entities += [e for e in detected.entities if e not in entities]
            if detected.ambiguities:
                unresolved[memory.pk] = (memory, detected.ambiguities, [])
        if plan.unknown:
            unresolved[memory.pk] = (memory, unresolved.get(memory.pk, (None, {}, []))[1], plan.unknown)
        mentions += [(memory, entity) for entity in entities]
        events.append(
            MemoryEvent(
                memory=memory,
                memory_ref=memory.pk,
                action=Action.QUARANTINED if item.status == Status.QUARANTINED else Action.CREATED,
                actor=author,
                diff={
                    "operation": plan.operation,
                    "source": item.source,
                    "redactions": item.redactions,
                    "quarantine_reasons": item.quarantine_reasons,
                    "supersedes": str(plan.supersede.pk) if plan.supersede else None,
                },
            )
        )
        results.append(
            StoreResult(
                plan.operation,
                memory,
                superseded=plan.supersede,
                redactions=item.redactions,
                quarantine_reasons=item.quarantine_reasons,
            )
        )
    EntityMention.objects.bulk_create(
        [
            EntityMention(memory=memory, entity=entity, raw=entity.slug, resolved=True)
            for memory, entity in mentions
        ],
        ignore_conflicts=True,
    )
    for memory, ambiguities, unknown in unresolved.values():
        entity_service.record_unresolved(memory, ambiguities, unknown)
    MemoryEvent.objects.bulk_create(events)
    return results


def memory_store(
    *, author=None, session: Session | None = None, dedupe: bool = True, **fields
) -> StoreResult:
    """Store one memory. Raises InvalidInput, ContentTooLarge or AmbiguousEntity; stores nothing then."""
    prepared = prepare(**fields)
    vectors = embeddings.encode([prepared.content])
    with transaction.atomic():
        return _store_many([prepared], vectors, author=author, session=session, dedupe=dedupe)[0]


def memory_store_batch(
    items: list[dict], *, author=None, session: Session | None = None, dedupe: bool = True, vectors=None
) -> list[StoreResult]:
    """Store many memories with one embedding call and a few queries. All or nothing: an invalid
    or ambiguous item stores none of them (InvalidInput names it as ``items[i].field``).
    ``vectors`` are the items' embeddings when the caller already has them (of the same text)."""
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
    if not prepared:
        return []
    if vectors is None:
        vectors = embeddings.encode([p.content for p in prepared])
    with transaction.atomic():
        return _store_many(prepared, vectors, author=author, session=session, dedupe=dedupe)
