"""Gathering a search's candidates: the lexical and the vector list in one transaction (the
question is embedded on another thread meanwhile), what scoring reads of each candidate loaded by
one statement with its similarity to the question, the candidate rescue (a vector list the lexical
one shows stranded is run again, wider, then exactly), and the entities the question names matched
to the candidates' memories."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection, transaction

from memory import embeddings
from memory.conf import setting
from memory.models import Memory, Team
from memory.services import entities as entity_service
from memory.services.search.corpus import corpus_stats
from memory.services.search.lexical import lexical_candidates
from memory.services.search.statements import estimated_rows, searched, vector_text
from memory.services.search.vector import vector_candidates, vector_list_stranded
from memory.services.teams import as_table_owner

# The package's logger: search's log lines keep the name they had before it was split in stages.
logger = logging.getLogger(__package__)


@dataclass(frozen=True, slots=True)
class ScoredRow:
    """What scoring reads of a memory (SCORED_FIELDS), read without building a model instance."""

    pk: object
    memory_type: str
    feedback_score: float
    priority: str
    last_validated_at: datetime
    maturity: str


@dataclass
class Candidate:
    memory: Memory | ScoredRow
    similarity: float
    vector_rank: int | None
    lexical_rank: int | None
    lexical_score: float | None
    lexical_coverage: float = 0.0
    entity_match: bool = False


# What score_candidate reads of a memory (type weight, feedback, decay, maturity): ScoredRow's fields.
SCORED_FIELDS = ("id", "memory_type", "feedback_score", "priority", "last_validated_at", "maturity")
SCORED_TIMES = ("last_validated_at",)


def scored_rows(ids: list, vector, *, team_id: int) -> dict:
    """``{id: (ScoredRow, similarity)}`` for the memories ``ids`` of the team ``team_id`` (another
    team's id is left out, as a missing one), similarity to ``vector`` (None for a memory without an
    embedding, which only the lexical list can find).

    Similarity is computed by the database: shipping 384 floats per candidate back costs more. One
    hand-written statement and plain rows: through the ORM (the query compiled, a deferred model
    built per row) the ~100 candidates of a search cost twice as much (bench/HISTORY.md, load)."""
    if not ids:
        return {}
    quote = connection.ops.quote_name

    def column(name: str) -> str:
        # A time is read as seconds since the epoch: the driver's timestamp loader, in Python, cost
        # more than the rest of the row (bench/HISTORY.md, stop 30).
        quoted = quote(Memory._meta.get_field(name).column)
        return f"extract(epoch FROM {quoted})::float8" if name in SCORED_TIMES else quoted

    columns = ", ".join(column(name) for name in SCORED_FIELDS)
    embedding = quote(Memory._meta.get_field("embedding").column)
    sql = (
        f"SELECT {columns}, 1 - ({embedding} <=> %s::vector) FROM {quote(Memory._meta.db_table)} "
        f"WHERE {quote(Memory._meta.pk.column)} = ANY(%s) "
        f"AND {quote(Memory._meta.get_field('team').column)} = %s"
    )
    times = [SCORED_FIELDS.index(name) for name in SCORED_TIMES]
    with connection.cursor() as cursor:
        cursor.execute(sql, [vector_text(vector), ids, team_id])
        rows = {}
        for row in cursor.fetchall():
            values = list(row[:-1])
            for index in times:
                values[index] = datetime.fromtimestamp(values[index], UTC)
            rows[row[0]] = (ScoredRow(*values), row[-1])
        return rows


def rescued_vector_candidates(
    base,
    vector,
    n: int,
    vector_ids: list,
    lexical_ids: list,
    rows: dict,
    *,
    filtered_rows: int | None,
    team_id: int,
    own_index: bool = False,
) -> tuple[list, str]:
    """The vector list again when the HNSW scan that gave ``vector_ids`` was stranded
    (:func:`vector_list_stranded`), and its plan: the index at its widest (HNSW_EF_SEARCH_MAX), then,
    if still stranded, an exact scan when the memories searched (``filtered_rows``, else the corpus)
    are at most VECTOR_EXACT_MAX_ROWS. ``rows`` is :func:`scored_rows`' answer for the candidates so
    far; the new vector candidates' rows are added to it. ``own_index``: the team ``team_id`` has its
    own indexes (team_indexes). Call inside a transaction."""

    def stranded(ids: list) -> bool:
        listed = set(ids)
        return vector_list_stranded(
            [rows[pk][1] for pk in ids if pk in rows],
            # A memory without an embedding (a row written outside the server) tells nothing of the scan.
            [
                rows[pk][1]
                for pk in lexical_ids
                if pk in rows and pk not in listed and rows[pk][1] is not None
            ],
        )

    if not stranded(vector_ids):
        return vector_ids, "hnsw"
    # The filtered plan's own fallback (too few rows passed the filter) may end in an exact scan.
    vector_ids, widened = vector_candidates(
        base,
        vector,
        n,
        filtered=filtered_rows is not None,
        rows=filtered_rows,
        widest=True,
        team_id=team_id if own_index else None,
    )
    plan = "hnsw, widened, then exact" if widened.endswith("exact") else "hnsw, widened"
    rows.update(scored_rows([pk for pk in vector_ids if pk not in rows], vector, team_id=team_id))
    searched_rows = corpus_stats(team_id)[0] if filtered_rows is None else filtered_rows
    if stranded(vector_ids) and searched_rows <= setting("VECTOR_EXACT_MAX_ROWS"):
        vector_ids = searched(base).nearest(vector, n, exact=True)
        plan = "hnsw, widened, then exact"
        rows.update(scored_rows([pk for pk in vector_ids if pk not in rows], vector, team_id=team_id))
    logger.info("search: the HNSW scan was stranded; plan %r", plan)
    return vector_ids, plan


def gather_candidates(
    base,
    query: str,
    n: int,
    *,
    team: Team,
    lists=("vector", "lexical"),
    exact: bool = False,
    detect: bool = False,
    own_index: bool = False,
) -> tuple[list[Candidate], entity_service.Detected, str]:
    """The top ``n`` of each candidate list, with every feature the scoring needs, and the vector
    list's plan. ``base`` holds ``team``'s memories only (the caller's filter); ``team``'s entities
    are the ones detected in the query. ``exact`` says a filter applies (the vector list then plans
    for it: :func:`vector_candidates`), ``own_index`` that the team has its own indexes
    (team_indexes); an HNSW scan the lexical list shows to be stranded is run again
    (:func:`rescued_vector_candidates`)."""
    # The query is embedded on another thread (with concurrent requests' queries) while the database
    # ranks it lexically.
    pending_vector = embeddings.submit_query(query)
    base = searched(base)
    # Every statement below is written around ``base`` (the team's memories): under row-level
    # security they run as the tables' owner, so that the words' GIN index serves them.
    with transaction.atomic(), as_table_owner():
        filtered_rows = estimated_rows(base) if exact else None
        lexical = (
            lexical_candidates(base, query, n, team_id=team.pk, filtered_rows=filtered_rows)
            if "lexical" in lists
            else []
        )
        lexical_ids = [pk for pk, _, _ in lexical]
        vector = vector_text(pending_vector.result())
        vector_ids, plan = (
            vector_candidates(
                base,
                vector,
                n,
                filtered=exact,
                rows=filtered_rows,
                complete=own_index,
                team_id=team.pk if own_index else None,
            )
            if "vector" in lists
            else ([], "")
        )
        # Only the columns scoring reads are loaded: building ~100 whole rows cost more than the query.
        rows = scored_rows(list({*vector_ids, *lexical_ids}), vector, team_id=team.pk)
        if plan == "hnsw" and lexical_ids:
            vector_ids, plan = rescued_vector_candidates(
                base,
                vector,
                n,
                vector_ids,
                lexical_ids,
                rows,
                filtered_rows=filtered_rows,
                team_id=team.pk,
                own_index=own_index,
            )
            rows = {pk: rows[pk] for pk in {*vector_ids, *lexical_ids} if pk in rows}
    vector_rank = {pk: rank for rank, pk in enumerate(vector_ids, start=1)}
    lexical_rank = {pk: rank for rank, pk in enumerate(lexical_ids, start=1)}
    lexical_score = {pk: (score, coverage) for pk, score, coverage in lexical}
    detected = (
        entity_service.detect_in_text(query, index=entity_service.name_index(team), team=team)
        if detect
        else entity_service.Detected()
    )
    if not rows:
        return [], detected, plan
    ids = list(rows)
    entity_matched: set = set()
    if detected.entities:
        entity_matched = set(
            Memory.objects.for_team(team)
            .filter(pk__in=ids, mentions__entity__in=detected.entities)
            .values_list("pk", flat=True)
        )
    candidates = [
        Candidate(
            memory=rows[pk][0],
            # No embedding: nothing is known of its meaning, so its words alone rank it.
            similarity=0.0 if rows[pk][1] is None else rows[pk][1],
            vector_rank=vector_rank.get(pk),
            lexical_rank=lexical_rank.get(pk),
            lexical_score=lexical_score[pk][0] if pk in lexical_score else None,
            lexical_coverage=lexical_score[pk][1] if pk in lexical_score else 0.0,
            entity_match=pk in entity_matched,
        )
        for pk in ids
    ]
    return candidates, detected, plan
