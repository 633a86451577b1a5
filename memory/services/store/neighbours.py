"""What an item is compared with: the team's live memories of its exact text, and its nearest
memories of a compatible scope (hand-written statements; a stranded HNSW scan is run again exactly)."""

from __future__ import annotations

import functools
import logging

from django.db import connection

from memory.conf import setting
from memory.models import (
    EntityMention,
    Memory,
    Status,
    Team,
)
from memory.rows import RowReader, row_reader
from memory.services.search.statements import exact_scan_plans
from memory.services.upsert import (
    scope_of,
)

logger = logging.getLogger(__name__)

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


def scope_arrays(entities) -> tuple[str, str]:
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
    arrays = [scope_arrays(s) for s in scopes]
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
        if empty and stranded(cursor, team, kind, statuses, excluded):
            logger.info("upsert: the HNSW scan found no neighbour of %d vector(s); an exact scan", len(empty))
            with exact_scan_plans(cursor):
                rows = [row for row in rows if row[0] not in empty] + neighbours(cursor, empty, EXACT_ORDER)
    memories = with_resolved_mentions(list({pk for _, pk, _, _ in rows if pk is not None}), team)
    found: list[list[tuple[Memory, float]]] = [[] for _ in texts]
    for index, pk, distance, _ in sorted(rows, key=lambda row: (row[0], row[2] or 0.0)):
        if pk is not None:
            found[index].append((memories[pk], 1.0 - distance))
    return found


def stranded(cursor, team, kind, statuses, excluded) -> bool:
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
def team_readers() -> tuple[RowReader, RowReader]:
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


def with_resolved_mentions(ids: list, team: Team) -> dict:
    """``{id: memory}`` for ``team``'s memories ``ids`` (their vectors left out), each with its
    ``resolved_mentions`` (its resolved mentions, each with its entity). Two hand-written statements
    (memory/rows.py): every store reads its nearest memories, and through the ORM that cost ~9% of a
    store's Python time (bench/HISTORY.md, stop 29)."""
    if not ids:
        return {}
    memory_reader, mention_reader = team_readers()
    memories = {memory.pk: memory for memory in memory_reader.read([ids, team.pk])}
    for memory in memories.values():
        memory.resolved_mentions = []
    for mention in mention_reader.read([ids, team.pk]):
        if mention.resolved and mention.entity is not None and mention.memory_id in memories:
            memories[mention.memory_id].resolved_mentions.append(mention)
    return memories
