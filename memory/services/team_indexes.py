"""A team's own search indexes: a search costs what a corpus of its team's size costs (DESIGN.md §11).

The table's HNSW index holds every team's vectors, and its GIN index every team's words. A team's
search filters them by team: pgvector 0.6's HNSW scan yields ``ef_search`` rows and filters them
afterwards, so for a team holding 1% of a deployment it would need a scan of 100 times its ``k``;
and the GIN index finds every team's memories holding a word before the team's are kept. So a
team of at least TEAM_INDEX_MIN_MEMORIES memories, in a deployment of several teams, gets its own
partial indexes (``WHERE team_id = …``): an HNSW index of its vectors and a GIN index of its words.
PostgreSQL picks them for any statement that says ``team_id = <that team>`` — every search does —
and keeps each up to date on insert like any index. A smaller team's search compares its few
memories exactly (search.vector_candidates). This is list partitioning of the indexes, not of the
table: the memories keep one table, one primary key and their foreign keys (partitioning the table
would make ``team_id`` part of every key that points at a memory). Chosen by measurement
(docs/capacity.md).

:func:`planned_team_indexes` decides (pure); :func:`team_indexes_apply` creates and drops. The
Celery beat runs :func:`team_indexes_ensure` every TEAM_INDEX_EVERY_SECONDS; ``manage.py
team_indexes`` runs it now.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from django.db import connection

from memory.conf import setting

logger = logging.getLogger(__name__)

INDEX_NAME_RE = re.compile(r"^memory_team_(\d+)_(hnsw|words)$")
KINDS = ("hnsw", "words")


@dataclass(frozen=True)
class IndexPlan:
    """Which teams get their own indexes (``create``) and which lose them (``drop``), by team id."""

    create: tuple[int, ...] = ()
    drop: tuple[int, ...] = ()


def planned_team_indexes(
    sizes: Mapping[int, int], indexed: Set[int], *, min_rows: int, keep_rows: int
) -> IndexPlan:
    """What to change, given every existing team's number of memories (``sizes``: a team not in it
    is gone) and the teams that have their own indexes now (``indexed``). A team gets them at
    ``min_rows`` memories when the deployment has several teams; it keeps them until it falls below
    ``keep_rows`` (below ``min_rows``, so that a team near the line is not indexed and dropped in
    turn), the deployment is down to one team (the table's own indexes hold only its memories then)
    or the team is gone."""
    several = len(sizes) > 1
    create = sorted(
        team for team, rows in sizes.items() if several and rows >= min_rows and team not in indexed
    )
    drop = sorted(team for team in indexed if not several or team not in sizes or sizes[team] < keep_rows)
    return IndexPlan(create=tuple(create), drop=tuple(drop))


def index_name(team_id: int, kind: str) -> str:
    return f"memory_team_{int(team_id)}_{kind}"


def index_statement(team_id: int, kind: str, *, concurrently: bool) -> str:
    """The CREATE INDEX statement of one of a team's indexes: the table's own index's definition
    (memory.models.Memory.Meta.indexes) with the team's condition."""
    using = (
        "hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        if kind == "hnsw"
        else "gin (search_vector)"
    )
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {index_name(team_id, kind)} "
        f"ON memory_memory USING {using} WHERE team_id = {int(team_id)}"
    )


def existing_team_indexes() -> tuple[set[int], set[str]]:
    """The teams that have both their indexes, valid; and the names of the team indexes that are
    not valid (a concurrent build that failed half-way leaves one)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = 'memory_memory'::regclass AND c.relname LIKE 'memory\\_team\\_%%'"
        )
        rows = cursor.fetchall()
    kinds: dict[int, set[str]] = {}
    invalid = set()
    for name, valid in rows:
        if not (match := INDEX_NAME_RE.match(name)):
            continue
        if valid:
            kinds.setdefault(int(match[1]), set()).add(match[2])
        else:
            invalid.add(name)
    return {team for team, have in kinds.items() if have == set(KINDS)}, invalid


def team_sizes() -> dict[int, int]:
    """Every team's number of memories (every row of the table: the index holds them all), a team of
    none included."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.id, count(m.id) FROM memory_team t LEFT JOIN memory_memory m ON m.team_id = t.id "
            "GROUP BY t.id"
        )
        return dict(cursor.fetchall())


@dataclass
class IndexReport:
    created: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    seconds: float = 0.0


def team_indexes_apply(plan: IndexPlan, *, invalid: Set[str] = frozenset()) -> IndexReport:
    """Drop the invalid indexes and those of ``plan.drop``, build those of ``plan.create``.
    Outside a transaction the builds are CONCURRENTLY (writes go on meanwhile); inside one (a test,
    a caller's own transaction) they are plain."""
    concurrently = not connection.in_atomic_block
    started = time.perf_counter()
    report = IndexReport()
    with connection.cursor() as cursor:
        if not concurrently:
            # PostgreSQL refuses to index a table with foreign-key checks still pending (Django defers
            # them to the commit): they run now, and later rows' are deferred again.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for name in sorted(invalid):
            cursor.execute(f"DROP INDEX {'CONCURRENTLY ' if concurrently else ''}IF EXISTS {name}")
            report.repaired.append(name)
        for team_id in plan.drop:
            for kind in KINDS:
                cursor.execute(
                    f"DROP INDEX {'CONCURRENTLY ' if concurrently else ''}IF EXISTS {index_name(team_id, kind)}"
                )
            report.dropped.append(team_id)
        for team_id in plan.create:
            for kind in KINDS:
                cursor.execute(index_statement(team_id, kind, concurrently=concurrently))
            report.created.append(team_id)
            logger.info("team %s has its own search indexes", team_id)
    report.seconds = round(time.perf_counter() - started, 2)
    forget_indexed_teams()
    return report


def team_indexes_ensure() -> IndexReport:
    """Give every team that needs them its own indexes, and take them from those that do not."""
    indexed, invalid = existing_team_indexes()
    plan = planned_team_indexes(
        team_sizes(),
        indexed,
        min_rows=setting("TEAM_INDEX_MIN_MEMORIES"),
        keep_rows=setting("TEAM_INDEX_KEEP_MEMORIES"),
    )
    return team_indexes_apply(plan, invalid=invalid)


_indexed: tuple[float, frozenset[int]] | None = None


def has_own_indexes(team_id: int) -> bool:
    """Whether the team has its own indexes, as this process last looked (every
    TEAM_INDEX_EVERY_SECONDS, and after it changed them). A stale answer costs time, never results:
    a search that takes a team for indexed when it is not scans the table's HNSW index and, when too
    few of its rows are the team's, compares them exactly (search.vector_candidates)."""
    global _indexed
    now = time.monotonic()
    known = _indexed
    if known is None or now - known[0] > setting("TEAM_INDEX_EVERY_SECONDS"):
        known = _indexed = (now, frozenset(existing_team_indexes()[0]))
    return team_id in known[1]


def forget_indexed_teams() -> None:
    global _indexed
    _indexed = None
