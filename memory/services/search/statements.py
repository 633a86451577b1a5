"""The statements a search runs, and the planner settings they run under.

Each candidate statement (the lexical scans, the vector scan, the planner's estimate) is written
around one compiled statement of the memories the search looks in (:class:`Searched`, compiled once
per process for the common shape: :func:`servable_searched`), with the question's words as tsqueries
and its vector as pgvector's text. The scans whose plans PostgreSQL gets wrong run with planner
settings of their own, set for the transaction and put back after (:func:`_planned_with`): an exact
vector scan priced for memories held in memory, the bounded lexical scans kept on the words' GIN
index."""

from __future__ import annotations

import json
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime

from django.core.exceptions import EmptyResultSet
from django.db import connection
from pgvector.django import VectorField

from memory.conf import setting
from memory.models import Memory


def tsquery_any(lexemes: list[str]) -> str:
    """A tsquery that matches any of the (already normalized) lexemes."""
    return " | ".join(_quoted(lexeme) for lexeme in lexemes)


def tsquery_all(lexemes: list[str]) -> str:
    """A tsquery that matches a text holding every one of the (already normalized) lexemes."""
    return " & ".join(_quoted(lexeme) for lexeme in lexemes)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def vector_text(vector) -> str:
    """A vector as the database reads it (pgvector's text form), or the text itself: a search converts
    its query's vector once for all its statements."""
    return vector if isinstance(vector, str) else VectorField().get_prep_value(vector)


@dataclass(frozen=True)
class Searched:
    """The memories a search looks in, a queryset compiled to SQL once (``SELECT id,
    search_vector, embedding FROM … WHERE …``): each candidate statement (the lexical scans, the
    vector scan, the planner's estimate) is written around it. PostgreSQL pulls such a plain
    subquery up into the statement, so the plans are those of the queryset's own filters. Compiling
    the queryset again for each statement (and converting the vector twice) cost ~2 ms of a
    search's Python time (bench/HISTORY.md, stop 28)."""

    sql: str
    params: tuple

    def matching(self, tsquery: str, *, limit: int | None = None) -> tuple[str, list]:
        """The ids and lexemes of the memories matching ``tsquery`` (lexemes normalized already: the
        'simple' configuration only lower-cases them again), at most ``limit``."""
        sql = (
            f"SELECT s.id, s.search_vector FROM ({self.sql}) AS s "
            "WHERE s.search_vector @@ to_tsquery('simple'::regconfig, %s)"
        )
        params = [*self.params, tsquery]
        if limit is not None:
            sql, params = sql + " LIMIT %s", [*params, limit]
        return sql, params

    def nearest(self, vector, k: int, *, exact: bool = False) -> list:
        """The ids of the ``k`` nearest by cosine distance (MemoryQuerySet.nearest's rule: the HNSW
        index serves the plain ordering; ``exact`` orders by an expression it cannot serve, so
        every filtered row is compared, planned as :func:`exact_scan_plans` says). Call inside a
        transaction."""
        distance = "s.embedding <=> %s::vector"
        order = f"({distance}) + 0.0" if exact else distance
        with connection.cursor() as cursor, exact_scan_plans(cursor) if exact else nullcontext():
            cursor.execute(
                f"SELECT s.id FROM ({self.sql}) AS s WHERE s.embedding IS NOT NULL ORDER BY {order} LIMIT %s",
                [*self.params, vector_text(vector), k],
            )
            return [pk for (pk,) in cursor.fetchall()]


def searched(base) -> Searched:
    """``base`` (a Memory queryset) compiled once; a :class:`Searched` is returned as it is. A
    queryset Django knows to be empty (``pk__in=[]``, an empty project allow-list) is compiled to
    a statement that finds nothing."""
    if isinstance(base, Searched):
        return base
    values = base.order_by().values("id", "search_vector", "embedding")
    try:
        sql, params = values.query.sql_with_params()
    except EmptyResultSet:
        quote = connection.ops.quote_name
        columns = ", ".join(
            quote(Memory._meta.get_field(name).column) for name in ("id", "search_vector", "embedding")
        )
        sql, params = f"SELECT {columns} FROM {quote(Memory._meta.db_table)} WHERE false", ()
    return Searched(sql, tuple(params))


# Stand-ins for a search's values while its statement is compiled (servable_searched): a time, a
# text per text column, and for a key column (``team_id``) a negative number no row's key is.
_PLACEHOLDER_NOW = datetime(2000, 1, 1, 0, 0, 0, 271828, tzinfo=UTC)
_PLACEHOLDER_KEY = -271828
_servable_statements: dict[tuple, Searched] = {}


def _placeholder(name: str, position: int) -> str | int:
    return _PLACEHOLDER_KEY - position if name.endswith("_id") else f"\x00{name}"


def servable_searched(now: datetime, **filters: str | int) -> Searched:
    """``Memory.objects.servable(now).filter(**filters)`` (equality on plain columns, such as
    ``team_id`` and ``memory_type``) as a :class:`Searched`. Its statement depends only on which
    filters there are, so it is compiled once per process for each set of names and only the values
    change: compiling it for every search cost ~1.5 ms of Python (bench/HISTORY.md, stop 30). A
    search passes its ``team_id`` always: the statement holds that team's memories only."""
    shape = tuple(sorted(filters))
    template = _servable_statements.get(shape)
    if template is None:
        placeholders = {name: _placeholder(name, position) for position, name in enumerate(shape)}
        template = searched(Memory.objects.servable(_PLACEHOLDER_NOW).filter(**placeholders))
        _servable_statements[shape] = template
    values = {
        _PLACEHOLDER_NOW: now,
        **{_placeholder(name, position): filters[name] for position, name in enumerate(shape)},
    }
    return Searched(
        template.sql,
        tuple(
            values.get(param, param) if isinstance(param, str | int | datetime) else param
            for param in template.params
        ),
    )


@contextmanager
def _planned_with(cursor, planner: dict[str, str]):
    """Plan the statements inside with the ``planner`` settings, back to what was set after. The
    settings are transaction-local (call inside a transaction), so a failure inside cannot leave
    them behind on the connection."""
    cursor.execute(
        "SELECT "
        + ", ".join(f"current_setting('{name}'), set_config('{name}', %s, true)" for name in planner),
        list(planner.values()),
    )
    previous = cursor.fetchone()[::2]
    try:
        yield
    finally:
        cursor.execute(
            "SELECT " + ", ".join(f"set_config('{name}', %s, true)" for name in planner),
            list(previous),
        )


def exact_scan_plans(cursor):
    """Plan an exact vector scan with a page read out of order priced at
    VECTOR_EXACT_RANDOM_PAGE_COST instead of PostgreSQL's 4, which assumes a disk; the memories
    are in memory. At 4, to pick the few percent of memories an entity filter keeps, it read every
    memory of the table and hashed the filter's: at 100,000 memories a filter keeping 3% took 55 ms
    where looking up its memories by key takes 18, with the same nearest (bench/HISTORY.md, stop
    38)."""
    return _planned_with(cursor, {"random_page_cost": str(setting("VECTOR_EXACT_RANDOM_PAGE_COST"))})


def _word_index_plans(cursor):
    """Plan the statements inside to find the words through the GIN index, back to what was set after.

    For the bounded lexical query: the planner prices a tsquery match per row far below what it
    costs. For a LIMITed match it preferred reading the table in order and testing row after row
    until enough match: at 100,000 memories that took 9–16 ms where the GIN index takes 2; sequential
    scans are off. It also chose a bitmap scan of another index (status, superseded_by) whose
    condition holds for nearly every row and tested the words on each: at 10,000 memories, 8–10 ms
    where the GIN index takes 3. Pricing operators at LEXICAL_PLAN_CPU_OPERATOR_COST instead of
    PostgreSQL's 0.0025 makes testing ten thousand rows cost what it does (bench/HISTORY.md, stop
    34), which also keeps the other indexes' ordered scans out. Index scans stay on: a filter to an
    entity reads that entity's memories from the mentions' (entity, memory) index alone, where a
    bitmap scan fetched each mention's row (at 100,000 memories the project filter's statement took
    a third less: bench/HISTORY.md, stop 38). Call inside a transaction (:func:`_planned_with`)."""
    return _planned_with(
        cursor,
        {"enable_seqscan": "off", "cpu_operator_cost": str(setting("LEXICAL_PLAN_CPU_OPERATOR_COST"))},
    )


def estimated_rows(queryset) -> int:
    """The planner's estimate of how many rows ``queryset`` (or a :class:`Searched`) holds (no row
    is read)."""
    base = searched(queryset)
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) SELECT s.id FROM ({base.sql}) AS s", base.params)
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])
