"""Storing memories (DESIGN.md §4.3): validate → redact → quarantine → hash → embed → upsert.

Every store returns an operation and the decision behind it: ADD (a new memory), UPDATE (a new
memory that supersedes a close one of the same scope whose fact changed — queued for a curator's
review as a FactChange), PROPOSED (the same, of settled knowledge by a non-curator: stored pending
review beside the old memory, which stays served; memory/services/governance.py) or NOOP (the
existing memory, reinforced; the incoming text is kept on the reinforcement event). The decision
itself is the pure function in ``memory/services/upsert/``; this package gathers what it needs and
writes what it says. Two live memories never share content:
a unique index on the content hash decides races between concurrent stores.

A store is one team's (DESIGN.md §11): its entities, same-text twins and neighbours are the team's
only, so the same text in two teams is two memories and nothing of one team supersedes another's.

The package, in the order a store runs: ``validation.py`` (``prepare``: validated, redacted,
screened), ``neighbours.py`` (what an item is compared with), ``decision.py`` (the decision for each
item, governed for settled knowledge), ``apply.py`` (the writes), and this file: the entry points and
the loop that embeds, decides and inserts chunk by chunk.
"""

from __future__ import annotations

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import embeddings
from memory.conf import setting
from memory.models import Memory, Session, Team
from memory.services.errors import InvalidInput, NotFound
from memory.services.store.apply import StoreResult, apply_plans, new_memory, screen_intent
from memory.services.store.decision import batch_sides, decide_plans, neighbours_of, plans_of, same_text_of
from memory.services.store.neighbours import entity_scope, scoped_neighbours
from memory.services.store.validation import (
    MAX_PROVENANCE_PATH_CHARS,
    PROVENANCE_ORIGIN,
    PROVENANCE_SHA256,
    PreparedMemory,
    prepare,
)
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

__all__ = [
    "ADD",
    "MAX_PROVENANCE_PATH_CHARS",
    "NOOP",
    "PROVENANCE_ORIGIN",
    "PROVENANCE_SHA256",
    "UPDATE",
    "PreparedMemory",
    "StoreResult",
    "content_hash",
    "entity_scope",
    "memory_store",
    "memory_store_batch",
    "prepare",
    "scoped_neighbours",
]


def store_many(
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
    plans = plans_of(prepared, team)
    same_text = same_text_of(plans, team)
    now = timezone.now()
    matrix = np.zeros((len(plans), setting("EMBEDDING_DIMENSIONS")), dtype=np.float32)
    in_batch = batch_sides(plans) if dedupe else []
    superseded: set = set()
    try:
        with transaction.atomic():
            # Chunk by chunk as the model delivers them: look up, decide, insert. The database works
            # on one chunk while the model embeds the next (bench/HISTORY.md, stop 31).
            for start, chunk in embeddings.vector_chunks(vectors):
                part = range(start, start + len(chunk))
                matrix[part.start : part.stop] = chunk
                screen_intent(plans, part, matrix)
                neighbours = neighbours_of(plans, part, chunk, team) if dedupe else {}
                decide_plans(
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
                        plans[index].memory = new_memory(
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
            store_many(
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
    return apply_plans(plans, author=author, session=session, now=now, curator=curator)


def check_session(session: Session | None, team: Team) -> None:
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
    check_session(session, team)
    prepared = prepare(**fields)
    vectors = embeddings.encode([prepared.content])
    with transaction.atomic():
        return store_many(
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
    check_session(session, team)
    if len(items) > setting("MAX_BATCH"):
        raise InvalidInput({"items": [f"At most {setting('MAX_BATCH')} memories per batch."]})
    # The model embeds the items chunk by chunk while the next are prepared and the earlier chunks
    # looked up, decided and inserted (embeddings.ChunkedEncoding, store_many).
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
            return store_many(
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
