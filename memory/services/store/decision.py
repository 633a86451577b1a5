"""The upsert's decision for each item of a store (the pure function is ``memory/services/upsert/``):
the plans of a batch, what each is compared with (its twins, its neighbours, the batch's earlier
items), and the decision governed for settled knowledge (``memory/services/governance.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db import connection

from memory.conf import setting
from memory.models import (
    LIVE_CONTENT_STATUSES,
    Entity,
    Kind,
    Memory,
    Source,
    Status,
    Team,
)
from memory.services import entities as entity_service
from memory.services.errors import AmbiguousEntity
from memory.services.governance import PROPOSED, govern, settled_reason
from memory.services.proposals import open_proposals
from memory.services.store.neighbours import (
    SAME_TEXT_SQL,
    entity_scope,
    scoped_neighbours,
    with_resolved_mentions,
)
from memory.services.store.validation import PreparedMemory
from memory.services.upsert import (
    ADD,
    NOOP,
    UPDATE,
    Decision,
    Side,
    decide,
    decide_pair,
    scope_conflict,
)


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
class Plan:
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


def plans_of(prepared: list[PreparedMemory], team: Team) -> list[Plan]:
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
        plan = Plan(item, list(resolution.entities), resolution.unknown)
        if item.kind == Kind.OBSERVATION and not item.entity_refs:
            detected = entity_service.detect_in_text(item.content, pool, index=index, team=team)
            plan.entities += [e for e in detected.entities if e not in plan.entities]
            plan.ambiguities = detected.ambiguities
        plans.append(plan)
    if ambiguities:
        raise AmbiguousEntity(ambiguities)
    return plans


def same_text_of(plans: list[Plan], team: Team) -> dict[tuple[str, str], list[Memory]]:
    """``team``'s live memories with the text of an item, by ``(kind, content hash)``, newest first, read as
    :func:`with_resolved_mentions` reads them. A hand-written statement: it finds nothing for
    nearly every store, and through the ORM (mostly compiling the query) it was a fifth of a store's
    Python time (bench/HISTORY.md, stop 35)."""
    ids = []
    with connection.cursor() as cursor:
        for kind in {p.prepared.kind for p in plans}:
            hashes = [p.prepared.content_hash for p in plans if p.prepared.kind == kind]
            cursor.execute(SAME_TEXT_SQL, [team.pk, kind, hashes, LIVE_CONTENT_STATUSES])
            ids += [pk for (pk,) in cursor.fetchall()]
    memories = with_resolved_mentions(ids, team)
    same_text: dict[tuple[str, str], list[Memory]] = {}
    for pk in ids:
        if (memory := memories.get(pk)) is not None:
            same_text.setdefault((memory.kind, memory.content_hash), []).append(memory)
    return same_text


def neighbours_of(
    plans: list[Plan], part: range, vectors, team: Team
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


def batch_sides(plans: list[Plan]) -> list[Side]:
    """Each item as the later items of its batch compare with it."""
    return [
        Side(p.prepared.content, p.prepared.category, entity_scope(p.entities), position)
        for position, p in enumerate(plans)
    ]


def decide_plans(
    plans: list[Plan],
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
    counts there; ``in_batch``: :func:`batch_sides`, empty without deduplication) and with the
    nearest live memories of a compatible scope (``neighbours``, :func:`neighbours_of`); only memories
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
                decision = same_proposal(side, matrix[index], decision)
        plan.decision = decision
        if decision.operation == NOOP:
            plan.existing = decision.compared_with
        elif decision.operation == UPDATE:
            plan.supersede = decision.compared_with
            superseded.add(plan.supersede.pk)
        elif decision.operation == PROPOSED:
            plan.propose = decision.compared_with


def same_proposal(side: Side, vector, decision: Decision) -> Decision:
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
