"""Storing memories (DESIGN.md §4.3): validate → redact → quarantine → hash → embed → upsert.

Every store returns an operation and the decision behind it: ADD (a new memory), UPDATE (a new
memory that supersedes a close one of the same scope whose fact changed — queued for a curator's
review as a FactChange), PROPOSED (the same, of settled knowledge by a non-curator: stored pending
review beside the old memory, which stays served; memory/services/governance.py) or NOOP (the
existing memory, reinforced; the incoming text is kept on the reinforcement event). The decision
itself is the pure function in ``memory/services/upsert/``; this module gathers what it needs and
writes what it says. Two live memories never share content:
a unique index on the content hash decides races between concurrent stores.

A store is one team's (DESIGN.md §11): its entities, same-text twins and neighbours are the team's
only, so the same text in two teams is two memories and nothing of one team supersedes another's.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from memory import embeddings
from memory.conf import setting
from memory.models import (
    LIVE_CONTENT_STATUSES,
    Action,
    Category,
    Entity,
    EntityMention,
    EntityType,
    FactChange,
    FactChangeKind,
    Kind,
    Memory,
    MemoryEvent,
    MemoryType,
    Priority,
    Session,
    Source,
    Status,
    Team,
)
from memory.rows import RowReader, row_reader
from memory.services import entities as entity_service
from memory.services.errors import AmbiguousEntity, ContentTooLarge, InvalidInput, NotFound
from memory.services.governance import PROPOSED, govern, settled_reason
from memory.services.injection import screen_fields
from memory.services.intent import intent_reasons
from memory.services.proposals import open_proposals, proposal_after_reinforcement, supersede
from memory.services.redaction import redact
from memory.services.search.statements import exact_scan_plans
from memory.services.upsert import (  # noqa: F401  (re-exported: callers import them from here)
    ADD,
    NOOP,
    UPDATE,
    Decision,
    Side,
    content_hash,
    decide,
    decide_pair,
    jaccard,
    normalize_text,
    scope_conflict,
    scope_key,
    scope_of,
    token_set,
)

MAX_TAG_LENGTH = 64
MAX_SOURCE_CHUNK_CHARS = 8000
# Provenance: where an imported memory came from (a file and its hash), kept on the audit events.
MAX_PROVENANCE_PATH_CHARS = 500
PROVENANCE_ORIGIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # e.g. claude-code-auto-memory
PROVENANCE_SHA256 = re.compile(r"[0-9a-f]{64}")

logger = logging.getLogger(__name__)


@dataclass
class StoreResult:
    operation: str
    memory: Memory
    superseded: Memory | None = None
    decision: Decision | None = None
    proposal_for: Memory | None = None  # PROPOSED: the settled memory it would change
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
    evidence: tuple[int, int] | None = None  # the session messages (seq range) it was extracted from
    provenance: dict[str, str] = field(default_factory=dict)  # an import's file: origin, path, sha256
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
    evidence: tuple[int, int] | None = None,
    provenance: dict | None = None,
) -> PreparedMemory:
    """Validate one store request and make its text safe to keep. Raises InvalidInput.
    ``provenance`` (an import's file: ``origin``, ``path``, ``sha256``) is kept, redacted, on the
    memory's created or reinforced event, so each teammate's copy of a note stays traceable."""
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
    if evidence is not None and not (
        isinstance(evidence, tuple | list)
        and len(evidence) == 2
        and all(isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 for seq in evidence)
        and evidence[0] <= evidence[1]
    ):
        errors["evidence"] = ["The evidence is a (first, last) range of message numbers."]
    provenance = provenance or {}
    if not _valid_provenance(provenance):
        errors["provenance"] = [
            "The provenance is {origin: a lowercase label, path: the file's path (at most "
            f"{MAX_PROVENANCE_PATH_CHARS} characters), sha256: its hash in hex}}, each optional."
        ]
        provenance = {}
    if errors:
        raise InvalidInput(errors)

    # Every text that is served is screened — the source chunk and tags reach agents too — and
    # before redaction, so an encoded payload cannot hide behind its redaction marker.
    reasons = screen_fields(content=content, source_chunk=source_chunk, tags=tags)
    content, redactions = redact(content)
    source_chunk, chunk_redactions = redact(source_chunk)
    tag_redactions = []
    for index, tag in enumerate(tags):
        tags[index], found = redact(tag)
        tag_redactions += found
    if provenance.get("path"):  # a file name may carry a secret too; the hash and label cannot
        provenance = {**provenance, "path": redact(provenance["path"])[0]}
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
        redactions=redactions + chunk_redactions + tag_redactions,
        quarantine_reasons=reasons,
        status_reason=("Quarantined: " + "; ".join(reasons)) if reasons else "",
        evidence=tuple(evidence) if evidence is not None else None,
        provenance=provenance,
    )


def _valid_provenance(provenance) -> bool:
    if not isinstance(provenance, dict) or not set(provenance) <= {"origin", "path", "sha256"}:
        return False
    origin, path, sha256 = (provenance.get(key, "") for key in ("origin", "path", "sha256"))
    if not all(isinstance(value, str) for value in (origin, path, sha256)):
        return False
    return (
        (not origin or PROVENANCE_ORIGIN.fullmatch(origin) is not None)
        and (not sha256 or PROVENANCE_SHA256.fullmatch(sha256) is not None)
        and len(path) <= MAX_PROVENANCE_PATH_CHARS
        and "\x00" not in path
    )


# The memories an item's exact text may already be: the team's live ones of its kind (not
# superseded, and of LIVE_CONTENT_STATUSES, as the unique index on live content), newest first.
SAME_TEXT_SQL = """
SELECT id FROM memory_memory
WHERE team_id = %s AND kind = %s AND content_hash = ANY(%s) AND status = ANY(%s)
  AND superseded_by_id IS NULL
ORDER BY created_at DESC
"""


# The nearest memories of each new one, left out those of another scope: a memory with entities of a
# type the new one also has, none of them shared (another project, person…). Each vector's candidates
# are the team's live memories of its kind an HNSW scan finds (at most HNSW_EF_SEARCH, the scan's own
# bound); their entities are then read for all of them at once, and the nearest of a compatible scope
# kept. Tested candidate by candidate inside the scan, the scope cost 31 µs a candidate, and where
# most candidates are of another scope (memories about one owner among a hundred) the test ran on
# all of them: two fifths of a batch store's lookups (bench/HISTORY.md, stop 36).
# ``{order}``: the distance (the HNSW index serves it) or the distance plus 0.0 (an exact scan).
NEIGHBOURS_SQL = """
WITH q AS MATERIALIZED (
    SELECT idx, vec::vector AS vec, ids::bigint[] AS ids, types::text[] AS types
    FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS u(vec, ids, types, idx)
),
candidate AS MATERIALIZED (
    SELECT q.idx, m.id, m.distance
    FROM q
    CROSS JOIN LATERAL (
        SELECT mem.id, mem.embedding <=> q.vec AS distance
        FROM memory_memory mem
        WHERE mem.team_id = %s AND mem.kind = %s AND mem.status = ANY(%s)
          AND mem.superseded_by_id IS NULL AND mem.id <> ALL(%s::uuid[])
        ORDER BY {order}
        LIMIT %s
    ) AS m
),
conflict AS (
    SELECT c.idx, c.id
    FROM candidate c
    JOIN q ON q.idx = c.idx
    JOIN memory_entitymention mm ON mm.memory_id = c.id AND mm.resolved
    JOIN memory_entity e ON e.id = mm.entity_id
    WHERE e.type = ANY(q.types)
    GROUP BY c.idx, c.id, e.type
    HAVING NOT bool_or(mm.entity_id = ANY(q.ids))
)
SELECT q.idx, ranked.id, ranked.distance, coalesce(scanned.n, 0)
FROM q
LEFT JOIN (SELECT idx, count(*) AS n FROM candidate GROUP BY idx) AS scanned ON scanned.idx = q.idx
LEFT JOIN (
    SELECT c.idx, c.id, c.distance, row_number() OVER (PARTITION BY c.idx ORDER BY c.distance) AS rank
    FROM candidate c
    WHERE NOT EXISTS (SELECT 1 FROM conflict x WHERE x.idx = c.idx AND x.id = c.id)
) AS ranked ON ranked.idx = q.idx AND ranked.rank <= %s
ORDER BY q.idx, ranked.distance
"""
HNSW_ORDER, EXACT_ORDER = "mem.embedding <=> q.vec", "(mem.embedding <=> q.vec) + 0.0"

# Counted up to a bound (the last parameter): past it the answer is the same.
LIVE_ROWS_SQL = """
SELECT count(*) FROM (
    SELECT 1 FROM memory_memory mem
    WHERE mem.team_id = %s AND mem.kind = %s AND mem.status = ANY(%s)
      AND mem.superseded_by_id IS NULL AND mem.id <> ALL(%s::uuid[]) AND mem.embedding IS NOT NULL
    LIMIT %s
) AS live
"""


def entity_scope(entities) -> dict[str, frozenset[str]]:
    """Entities by type, as the upsert decision compares them."""
    return scope_of(entity.slug for entity in entities)


def _scope_arrays(entities) -> tuple[str, str]:
    """The entities of the types a scope compares, as two PostgreSQL array literals: their ids and
    their types."""
    kinds = set(setting("UPSERT_SCOPE_ENTITY_TYPES"))
    scoped = [entity for entity in entities if entity.type in kinds]
    ids = ",".join(str(int(entity.pk)) for entity in scoped)
    types = ",".join(sorted({entity.type for entity in scoped}))
    return "{" + ids + "}", "{" + types + "}"


def scoped_neighbours(
    team: Team,
    kind: str,
    vectors,
    scopes: list,
    statuses: tuple[str, ...] = (Status.ACTIVE,),
    *,
    excluded=(),
) -> list[list[tuple[Memory, float]]]:
    """For each vector, ``team``'s closest memories of ``kind`` with a compatible scope (``scopes[i]``:
    the new memory's entities), of the HNSW_EF_SEARCH nearest, and their cosine similarity, each
    memory's entities prefetched. The memories ``excluded`` (ids) are left out."""
    texts = ["[" + ",".join(f"{x:.7g}" for x in vector) + "]" for vector in vectors]
    arrays = [_scope_arrays(s) for s in scopes]
    excluded = [str(pk) for pk in excluded]
    ef_search = setting("HNSW_EF_SEARCH")

    def neighbours(cursor, wanted: list[int], order: str) -> list[tuple]:
        cursor.execute(
            NEIGHBOURS_SQL.format(order=order),
            [
                [texts[i] for i in wanted],
                [arrays[i][0] for i in wanted],
                [arrays[i][1] for i in wanted],
                team.pk,
                kind,
                list(statuses),
                excluded,
                ef_search,
                setting("UPSERT_NEIGHBOURS"),
            ],
        )
        # Back to the caller's positions (the statement numbers its vectors from 1).
        return [
            (wanted[index - 1], pk, distance, scanned) for index, pk, distance, scanned in cursor.fetchall()
        ]

    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
        rows = neighbours(cursor, list(range(len(texts))), HNSW_ORDER)
        empty = [index for index, _, _, scanned in rows if scanned == 0]
        if empty and _stranded(cursor, team, kind, statuses, excluded):
            logger.info("upsert: the HNSW scan found no neighbour of %d vector(s); an exact scan", len(empty))
            with exact_scan_plans(cursor):
                rows = [row for row in rows if row[0] not in empty] + neighbours(cursor, empty, EXACT_ORDER)
    memories = _with_resolved_mentions(list({pk for _, pk, _, _ in rows if pk is not None}), team)
    found: list[list[tuple[Memory, float]]] = [[] for _ in texts]
    for index, pk, distance, _ in sorted(rows, key=lambda row: (row[0], row[2] or 0.0)):
        if pk is not None:
            found[index].append((memories[pk], 1.0 - distance))
    return found


def _stranded(cursor, team, kind, statuses, excluded) -> bool:
    """An HNSW scan that found none of the team's memories of this kind, although the team has
    some, was stranded: dead entries that rolled-back or purged rows leave until a vacuum, or a
    small team's memories all outside the table's neighbourhood of the vector. An upsert that
    missed its neighbours would store a duplicate beside them, so the vectors are looked up again
    by an exact scan — when the team's memories of this kind are at most VECTOR_EXACT_MAX_ROWS."""
    most = setting("VECTOR_EXACT_MAX_ROWS")
    cursor.execute(LIVE_ROWS_SQL, [team.pk, kind, list(statuses), excluded, most + 1])
    (live,) = cursor.fetchone()
    return 0 < live <= most


@functools.cache
def _team_readers() -> tuple[RowReader, RowReader]:
    """:func:`row_reader`'s statements for memories by id and their mentions by memory id, within
    one team (their last parameter)."""
    readers = []
    for reader in (
        row_reader(Memory, many=True, left_out=("embedding", "search_vector")),
        row_reader(EntityMention, (("entity", None),), key="memory", many=True),
    ):
        column = connection.ops.quote_name(reader.parts[0].model._meta.get_field("team").column)
        readers.append(RowReader(f"{reader.sql} AND m.{column} = %s", reader.parts, reader.related))
    return readers[0], readers[1]


def _with_resolved_mentions(ids: list, team: Team) -> dict:
    """``{id: memory}`` for ``team``'s memories ``ids`` (their vectors left out), each with its
    ``resolved_mentions`` (its resolved mentions, each with its entity). Two hand-written statements
    (memory/rows.py): every store reads its nearest memories, and through the ORM that cost ~9% of a
    store's Python time (bench/HISTORY.md, stop 29)."""
    if not ids:
        return {}
    memory_reader, mention_reader = _team_readers()
    memories = {memory.pk: memory for memory in memory_reader.read([ids, team.pk])}
    for memory in memories.values():
        memory.resolved_mentions = []
    for mention in mention_reader.read([ids, team.pk]):
        if mention.resolved and mention.entity is not None and mention.memory_id in memories:
            memories[mention.memory_id].resolved_mentions.append(mention)
    return memories


def settled_of(memory: Memory) -> str | None:
    """Why ``memory`` is settled knowledge that only a curator or enough people may change (§4.3)."""
    return settled_reason(
        maturity=memory.maturity, priority=memory.priority, curated=memory.reviewed_by_id is not None
    )


def side_of(memory: Memory) -> Side:
    mentions = getattr(memory, "resolved_mentions", None)
    if mentions is None:
        mentions = memory.mentions.filter(resolved=True).select_related("entity")
    return Side(memory.content, memory.category, entity_scope(m.entity for m in mentions), memory)


@dataclass
class _Plan:
    """What one prepared item becomes: a NOOP on ``existing``, or a new memory that may supersede
    ``supersede``; ``decision`` says why."""

    prepared: PreparedMemory
    entities: list[Entity]
    unknown: list[str]
    ambiguities: dict[str, list[str]] = field(default_factory=dict)  # names detected in the text
    decision: Decision = field(default_factory=lambda: Decision(ADD, "deduplication off"))
    existing: Memory | None = None
    batch_twin: int | None = None  # NOOP on a memory created earlier in this batch
    supersede: Memory | None = None
    propose: Memory | None = None  # PROPOSED: the settled memory this one would change
    memory: Memory | None = None

    @property
    def operation(self) -> str:
        return self.decision.operation

    def side(self) -> Side:
        return Side(self.prepared.content, self.prepared.category, entity_scope(self.entities))


def _plans(prepared: list[PreparedMemory], team: Team) -> list[_Plan]:
    """Resolve each item's entities among ``team``'s (explicit references, or those its text names).
    Raises AmbiguousEntity when an explicit reference matches several."""
    slugs = [slug for p in prepared for ref in p.entity_refs if (slug := entity_service.normalize_slug(ref))]
    by_slug = entity_service.entities_for_slugs(slugs, team=team, create=True) if slugs else {}
    needs_pool = any(
        not entity_service.normalize_slug(ref) for p in prepared for ref in p.entity_refs
    ) or any(p.kind == Kind.OBSERVATION and not p.entity_refs for p in prepared)
    pool = list(Entity.objects.for_team(team).canonical()) if needs_pool else None
    index = entity_service.NameIndex.build(pool) if pool is not None else None
    plans, ambiguities = [], {}
    for item in prepared:
        resolution = entity_service.resolve_references(
            item.entity_refs, team=team, create=False, by_slug=by_slug, pool=pool
        )
        ambiguities.update(resolution.ambiguities)
        plan = _Plan(item, list(resolution.entities), resolution.unknown)
        if item.kind == Kind.OBSERVATION and not item.entity_refs:
            detected = entity_service.detect_in_text(item.content, pool, index=index, team=team)
            plan.entities += [e for e in detected.entities if e not in plan.entities]
            plan.ambiguities = detected.ambiguities
        plans.append(plan)
    if ambiguities:
        raise AmbiguousEntity(ambiguities)
    return plans


def _same_text(plans: list[_Plan], team: Team) -> dict[tuple[str, str], list[Memory]]:
    """``team``'s live memories with the text of an item, by ``(kind, content hash)``, newest first, read as
    :func:`_with_resolved_mentions` reads them. A hand-written statement: it finds nothing for
    nearly every store, and through the ORM (mostly compiling the query) it was a fifth of a store's
    Python time (bench/HISTORY.md, stop 35)."""
    ids = []
    with connection.cursor() as cursor:
        for kind in {p.prepared.kind for p in plans}:
            hashes = [p.prepared.content_hash for p in plans if p.prepared.kind == kind]
            cursor.execute(SAME_TEXT_SQL, [team.pk, kind, hashes, LIVE_CONTENT_STATUSES])
            ids += [pk for (pk,) in cursor.fetchall()]
    memories = _with_resolved_mentions(ids, team)
    same_text: dict[tuple[str, str], list[Memory]] = {}
    for pk in ids:
        if (memory := memories.get(pk)) is not None:
            same_text.setdefault((memory.kind, memory.content_hash), []).append(memory)
    return same_text


def _neighbours(
    plans: list[_Plan], part: range, vectors, team: Team
) -> dict[int, list[tuple[Memory, float]]]:
    """``team``'s nearest live memories of a compatible scope of the items ``part`` (``vectors``: theirs),
    by item index; the memories this batch created before them are left out (they are compared as
    batch items, and only memories already stored can be superseded)."""
    created = [plan.memory.pk for plan in plans[: part.start] if plan.memory is not None]
    neighbours: dict[int, list[tuple[Memory, float]]] = {}
    for kind in {plans[i].prepared.kind for i in part}:
        indexes = [i for i in part if plans[i].prepared.kind == kind]
        found = scoped_neighbours(
            team,
            kind,
            [vectors[i - part.start] for i in indexes],
            [plans[i].entities for i in indexes],
            excluded=created,
        )
        neighbours.update(zip(indexes, found, strict=True))
    return neighbours


def _batch_sides(plans: list[_Plan]) -> list[Side]:
    """Each item as the later items of its batch compare with it."""
    return [
        Side(p.prepared.content, p.prepared.category, entity_scope(p.entities), position)
        for position, p in enumerate(plans)
    ]


def _decide(
    plans: list[_Plan],
    part: range,
    matrix: np.ndarray,
    *,
    dedupe: bool,
    in_batch: list[Side],
    same_text: dict[tuple[str, str], list[Memory]],
    neighbours: dict[int, list[tuple[Memory, float]]],
    superseded: set,
    curator: bool,
) -> None:
    """Set the decision of each plan of ``part`` (DESIGN.md §4.3, memory/services/upsert/): the
    same live text is a NOOP; otherwise compare with the items before it in this list (only a NOOP
    counts there; ``in_batch``: :func:`_batch_sides`, empty without deduplication) and with the
    nearest live memories of a compatible scope (``neighbours``, :func:`_neighbours`); only memories
    already stored can be superseded, each at most once (``superseded``: those taken by earlier
    items), and settled ones only by a ``curator`` (else the change is PROPOSED, or reinforces an
    open proposal of the same change). ``matrix``: the items' vectors, filled up to the end of
    ``part``. Reads open proposals; writes nothing."""
    for index in part:
        plan = plans[index]
        item = plan.prepared
        side = plan.side()
        twin = next(
            (
                memory
                for memory in same_text.get((item.kind, item.content_hash), [])
                if not scope_conflict(side.entities, side_of(memory).entities)
            ),
            None,
        )
        if twin is not None:
            plan.decision, plan.existing = Decision(NOOP, "same text", twin, 1.0, 1.0), twin
            continue
        if not dedupe:
            continue
        # One matrix-vector product per item: a matrix-matrix product of the whole batch would wake
        # the BLAS library's threads, which then spin on the other core.
        cosines = matrix[:index] @ matrix[index]
        earlier = [
            (in_batch[position], float(cosines[position]))
            for position, other in enumerate(plans[:index])
            if other.operation != NOOP and other.prepared.kind == item.kind
        ]
        within = decide(side, earlier)
        if within.operation == NOOP:
            plan.decision, plan.batch_twin = within, within.compared_with
            continue
        candidates = [(side_of(memory), cosine) for memory, cosine in neighbours.get(index, [])]
        # Extraction recognises a lesson the team already has in other words (DESIGN.md §4.8).
        lesson = setting("EXTRACTION_SAME_LESSON_COSINE") if item.source == Source.EXTRACTION else None
        if item.status != Status.ACTIVE:
            # Quarantined or unreviewed text never hides a live memory: it may only be a NOOP.
            decision = decide(side, candidates, same_lesson_cosine=lesson)
            if decision.operation == UPDATE:
                decision = Decision(
                    ADD,
                    f"not active, so it supersedes nothing ({decision.reason})",
                    decision.compared_with,
                    decision.cosine,
                    decision.jaccard,
                )
        else:
            candidates = [(c, cosine) for c, cosine in candidates if c.ref.pk not in superseded]
            decision = decide(side, candidates, same_lesson_cosine=lesson)
            if decision.operation == UPDATE:
                decision = govern(decision, settled=settled_of(decision.compared_with), curator=curator)
            if decision.operation == PROPOSED:
                decision = _same_proposal(side, matrix[index], decision)
        plan.decision = decision
        if decision.operation == NOOP:
            plan.existing = decision.compared_with
        elif decision.operation == UPDATE:
            plan.supersede = decision.compared_with
            superseded.add(plan.supersede.pk)
        elif decision.operation == PROPOSED:
            plan.propose = decision.compared_with


def _same_proposal(side: Side, vector, decision: Decision) -> Decision:
    """A proposal of the same change as one already open against the same memory reinforces that one
    (so that distinct people proposing it independently can carry it); else ``decision`` stands."""
    old = decision.compared_with
    for proposed in open_proposals([old.pk], team_id=old.team_id).get(old.pk, []):
        cosine = float(np.asarray(proposed.embedding, dtype=np.float32) @ vector)
        same = decide_pair(side, side_of(proposed), cosine)
        if same.operation == NOOP:
            reason = f"the same change as an open proposal ({same.reason})"
            return Decision(NOOP, reason, proposed, cosine, same.jaccard)
    return decision


def _new_memory(plan: _Plan, vector, *, team: Team, author, session, now) -> Memory:
    item = plan.prepared
    created_at = item.created_at or now
    status, status_reason = item.status, item.status_reason
    if plan.operation == PROPOSED:
        status = Status.PENDING_REVIEW
        status_reason = f"Proposed change of settled memory {plan.propose.pk}: {plan.decision.reason}"[:1000]
    return Memory(
        team=team,
        kind=item.kind,
        content=item.content,
        content_hash=item.content_hash,
        scope_key=scope_key(entity_scope(plan.entities)),
        memory_type=item.memory_type,
        category=item.category,
        priority=item.priority,
        is_negative=item.is_negative,
        embedding=vector,
        tags=item.tags,
        confidence=item.confidence,
        status=status,
        status_reason=status_reason,
        source=item.source,
        source_chunk=item.source_chunk,
        evidence_seq_start=item.evidence[0] if item.evidence else None,
        evidence_seq_end=item.evidence[1] if item.evidence else None,
        session=session,
        author=author,
        agent_name=item.agent_name,
        valid_from=item.valid_from or created_at,
        last_validated_at=created_at,
        created_at=created_at,
    )


def _store_many(
    prepared: list[PreparedMemory],
    vectors,
    *,
    team: Team,
    author=None,
    session: Session | None = None,
    dedupe: bool = True,
    retry: bool = True,
    curator: bool = False,
) -> list[StoreResult]:
    """The upsert of DESIGN.md §4.3 for a list of items, in a handful of queries whatever its length:
    resolve entities → decide (memory/services/upsert/, then memory/services/governance.py: settled
    memories change by a ``curator``'s write only) → write. The caller holds the transaction.
    ``vectors``: an array, or a ChunkedEncoding the model may still be working on (what needs no
    vector is done first)."""
    author = author if getattr(author, "pk", None) else None
    plans = _plans(prepared, team)
    same_text = _same_text(plans, team)
    now = timezone.now()
    matrix = np.zeros((len(plans), setting("EMBEDDING_DIMENSIONS")), dtype=np.float32)
    in_batch = _batch_sides(plans) if dedupe else []
    superseded: set = set()
    try:
        with transaction.atomic():
            # Chunk by chunk as the model delivers them: look up, decide, insert. The database works
            # on one chunk while the model embeds the next (bench/HISTORY.md, stop 31).
            for start, chunk in embeddings.vector_chunks(vectors):
                part = range(start, start + len(chunk))
                matrix[part.start : part.stop] = chunk
                _screen_intent(plans, part, matrix)
                neighbours = _neighbours(plans, part, chunk, team) if dedupe else {}
                _decide(
                    plans,
                    part,
                    matrix,
                    dedupe=dedupe,
                    in_batch=in_batch,
                    same_text=same_text,
                    neighbours=neighbours,
                    superseded=superseded,
                    curator=curator,
                )
                for index in part:
                    if plans[index].operation != NOOP:
                        plans[index].memory = _new_memory(
                            plans[index], matrix[index], team=team, author=author, session=session, now=now
                        )
                Memory.objects.bulk_create([plans[i].memory for i in part if plans[i].memory is not None])
    except IntegrityError:
        if not retry:
            raise
        # A concurrent store of the same content won the race; decide again, item by item, now
        # that its row is visible.
        vectors = embeddings.vector_array(vectors)
        return [
            _store_many(
                [item],
                vectors[i : i + 1],
                team=team,
                author=author,
                session=session,
                dedupe=dedupe,
                retry=False,
                curator=curator,
            )[0]
            for i, item in enumerate(prepared)
        ]
    return _apply(plans, author=author, session=session, now=now, curator=curator)


def _screen_intent(plans: list[_Plan], part: range, matrix) -> None:
    """The screen of intent on the vectors just embedded (memory/services/intent.py): a memory it
    flags is quarantined like one the wording screen flagged in ``prepare``."""
    for index in part:
        item = plans[index].prepared
        if item.status == Status.QUARANTINED:
            continue
        reasons = intent_reasons(matrix[index], item.content)
        if reasons:
            item.status = Status.QUARANTINED
            item.quarantine_reasons = [*item.quarantine_reasons, *reasons]
            item.status_reason = "Quarantined: " + "; ".join(item.quarantine_reasons)


def _glued(target: Memory, entities: list[Entity]) -> list[Entity]:
    """The entities a NOOP adds to the memory it reinforces: all of them, except that a team-wide
    memory (about no project) repeated inside one project stays team-wide."""
    if (
        any(e.type == EntityType.PROJECT for e in entities)
        and EntityType.PROJECT not in side_of(target).entities
    ):
        return [e for e in entities if e.type != EntityType.PROJECT]
    return entities


def _apply(plans: list[_Plan], *, author, session: Session | None, now, curator: bool) -> list[StoreResult]:
    """Write what the decisions say: reinforce NOOP targets (keeping the incoming text; an open
    proposal so reinforced may take effect), supersede changed facts and queue them for review, link
    proposals to the memories they would change, and record mentions and audit events."""
    mentions, events, changed, results, reinforced = [], [], [], [], []
    for plan in plans:
        item = plan.prepared
        if plan.operation == NOOP:
            target = plan.existing if plan.batch_twin is None else plans[plan.batch_twin].memory
            tags = list(dict.fromkeys([*target.tags, *item.tags]))
            Memory.objects.for_team(target.team_id).filter(pk=target.pk).update(
                tags=tags, reinforcement_count=F("reinforcement_count") + 1
            )
            target.tags = tags
            target.reinforcement_count += 1
            reinforced.append(target)
            mentions += [(target, entity) for entity in _glued(target, plan.entities)]
            plan.decision.compared_with = target
            events.append(
                MemoryEvent(
                    team_id=target.team_id,
                    memory=target,
                    memory_ref=target.pk,
                    action=Action.REINFORCED,
                    actor=author,
                    diff={
                        "source": item.source,
                        "text": item.content,
                        "type": item.memory_type,
                        "category": item.category,
                        "priority": item.priority,
                        "tags": item.tags,
                        "entities": [e.slug for e in plan.entities],
                        "author": getattr(author, "username", None),
                        "agent_name": item.agent_name,
                        "session": str(session.pk) if session else None,
                        "decision": plan.decision.as_dict(),
                        **({"provenance": item.provenance} if item.provenance else {}),
                    },
                )
            )
            results.append(
                StoreResult(
                    NOOP,
                    target,
                    decision=plan.decision,
                    redactions=item.redactions,
                    quarantine_reasons=item.quarantine_reasons,
                )
            )
            continue
        memory, entities = plan.memory, list(plan.entities)
        if plan.supersede is not None:
            old = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=plan.supersede.pk)
            carried = supersede(old, memory, actor=author, now=now, decision=plan.decision.as_dict())
            entities += [e for e in carried if e not in entities]
            plan.supersede = old
        old = plan.supersede or plan.propose
        if old is not None and plan.decision.changed_fact:
            changed.append(
                FactChange(
                    team_id=old.team_id,
                    kind=FactChangeKind.PROPOSAL if plan.propose is not None else FactChangeKind.CHANGED,
                    old=old,
                    new=memory,
                    reason=plan.decision.reason[:1000],
                    changes=plan.decision.as_dict()["changes"],
                    cosine=plan.decision.cosine,
                )
            )
        if plan.propose is not None:
            events.append(
                MemoryEvent(
                    team_id=old.team_id,
                    memory=old,
                    memory_ref=old.pk,
                    action=Action.PROPOSED,
                    actor=author,
                    diff={
                        "proposal": str(memory.pk),
                        "text": memory.content,
                        "author": getattr(author, "username", None),
                        "decision": plan.decision.as_dict(),
                    },
                )
            )
        mentions += [(memory, entity) for entity in entities]
        events.append(
            MemoryEvent(
                team_id=memory.team_id,
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
                    "proposal_for": str(plan.propose.pk) if plan.propose else None,
                    "decision": plan.decision.as_dict(),
                    **({"provenance": item.provenance} if item.provenance else {}),
                },
            )
        )
        results.append(
            StoreResult(
                plan.operation,
                memory,
                superseded=plan.supersede,
                decision=plan.decision,
                proposal_for=plan.propose,
                redactions=item.redactions,
                quarantine_reasons=item.quarantine_reasons,
            )
        )
    EntityMention.objects.bulk_create(
        [
            EntityMention(
                team_id=memory.team_id, memory=memory, entity=entity, raw=entity.slug, resolved=True
            )
            for memory, entity in mentions
        ],
        ignore_conflicts=True,
    )
    for plan in plans:
        if plan.operation != NOOP and (plan.ambiguities or plan.unknown):
            entity_service.record_unresolved(plan.memory, plan.ambiguities, plan.unknown)
    MemoryEvent.objects.bulk_create(events)
    FactChange.objects.bulk_create(changed, ignore_conflicts=True)
    for target in dict.fromkeys(reinforced):
        if proposal_after_reinforcement(target, actor=author, curator=curator) is not None:
            target.refresh_from_db()
    return results


def _check_session(session: Session | None, team: Team) -> None:
    """A session of another team is answered as a missing one."""
    if session is not None and session.team_id != team.pk:
        raise NotFound(f"No session {str(session.pk)!r}.")


def memory_store(
    *,
    team: Team,
    author=None,
    session: Session | None = None,
    dedupe: bool = True,
    curator: bool = False,
    **fields,
) -> StoreResult:
    """Store one memory in ``team``; ``curator``: the writer may change settled knowledge (§4.3).
    Raises InvalidInput, ContentTooLarge or AmbiguousEntity, and NotFound for a session of another
    team; stores nothing then."""
    _check_session(session, team)
    prepared = prepare(**fields)
    vectors = embeddings.encode([prepared.content])
    with transaction.atomic():
        return _store_many(
            [prepared], vectors, team=team, author=author, session=session, dedupe=dedupe, curator=curator
        )[0]


def memory_store_batch(
    items: list[dict],
    *,
    team: Team,
    author=None,
    session: Session | None = None,
    dedupe: bool = True,
    vectors=None,
    curator: bool = False,
) -> list[StoreResult]:
    """Store many memories in ``team`` with one embedding call and a few queries. All or nothing: an
    invalid or ambiguous item stores none of them (InvalidInput names it as ``items[i].field``).
    ``vectors`` are the items' embeddings when the caller already has them (of the same text)."""
    _check_session(session, team)
    if len(items) > setting("MAX_BATCH"):
        raise InvalidInput({"items": [f"At most {setting('MAX_BATCH')} memories per batch."]})
    # The model embeds the items chunk by chunk while the next are prepared and the earlier chunks
    # looked up, decided and inserted (embeddings.ChunkedEncoding, _store_many).
    pending = embeddings.ChunkedEncoding() if vectors is None else None
    prepared, errors = [], {}
    try:
        for index, item in enumerate(items):
            try:
                prepared.append(prepare(**item))
            except InvalidInput as exc:
                errors.update({f"items[{index}].{name}": messages for name, messages in exc.fields.items()})
            else:
                if pending is not None and not errors:
                    pending.add(prepared[-1].content)
        if errors:
            raise InvalidInput(errors)
        if not prepared:
            return []
        with transaction.atomic():
            return _store_many(
                prepared,
                vectors if pending is None else pending,
                team=team,
                author=author,
                session=session,
                dedupe=dedupe,
                curator=curator,
            )
    finally:
        if pending is not None:
            pending.cancel()  # what the model has not started when the store failed before reading it
