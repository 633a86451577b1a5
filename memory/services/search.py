"""Search, the "smart find" (DESIGN.md §4.4).

1. Resolve explicit entities (strict filter; ambiguity → CLARIFICATION_REQUIRED) and detect known
   entities named in the query (their memories get ENTITY_MATCH_BOOST within the one ordering).
2. Candidates: top-N by cosine similarity (HNSW) and top-N by a BM25 ranking of the query's
   lexemes (any of them may match), N = max(SEARCH_CANDIDATES_MIN, SEARCH_CANDIDATES_PER_RESULT ×
   limit), from servable memories only.
3. The base relevance fuses the two (FUSION_METHOD, default ``adaptive``):
   ``α × similarity min-max normalised over the candidates + (1 − α) × BM25 / best BM25``, where α
   leans lexical (FUSION_ALPHA_MIN) when the question names someone or something exactly that the
   memories' words know, and semantic (FUSION_ALPHA_MAX) when no memory covers much of the
   question's words — a paraphrase; in between it follows the best match's coverage
   (FUSION_COVERAGE_RANGE), reaching FUSION_ALPHA_MIN only when a memory holds every word.
4. Vector-only candidates below the similarity floor are dropped.
5. ``final = relevance × Π factor^RANKING_EXPONENTS[factor]`` over type weight, intent boost,
   feedback score, decay and maturity, × ENTITY_MATCH_BOOST for a memory about a named entity.
6. The top ``limit`` in score order with an ``explain`` of every factor; retrieval counted; Recall
   rows written for a session.

``mode`` exists for the benchmark: ``fts`` lexical only, ``vector`` plain cosine, ``hybrid`` fused
without the re-ranking factors, ``full`` what the API does.

A search looks in one team's memories only (DESIGN.md §11): every candidate list is drawn from
``Memory.objects.for_team(team)`` (the compiled statements carry ``team_id`` as one of their
equality filters), entities resolve and are detected among the team's, and its Recall rows carry
the team. ``allowed_projects`` (a token's project allow-list) narrows that to those projects'
memories. What BM25 knows of the corpus (its size, average length and word counts, kept per
process) is counted over the team's memories: another team's words move neither its scores nor its
plans. A team large enough has its own indexes (team_indexes), so its search costs what a corpus of
its size costs, whatever the deployment holds.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from django.core.exceptions import EmptyResultSet
from django.db import connection, transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone
from pgvector.django import VectorField

from memory import embeddings
from memory.conf import setting
from memory.models import Category, Entity, Memory, MemoryType, Priority, Recall, Session, Team
from memory.rows import row_reader
from memory.services import entities as entity_service
from memory.services import team_indexes
from memory.services.decay import decay_factor
from memory.services.errors import InvalidInput, NotFound
from memory.services.maturity import multiplier as maturity_multiplier
from memory.services.redaction import redact
from memory.services.taxonomy import type_weight
from memory.services.teams import as_table_owner

logger = logging.getLogger(__name__)

MODES = ("fts", "vector", "hybrid", "full")
MAX_QUERY_CHARS = 2000


@dataclass
class SearchHit:
    memory: Memory
    score: float
    explain: dict


@dataclass
class SearchOutcome:
    query: str
    results: list[SearchHit]
    entities: list[Entity] = field(default_factory=list)
    detected_entities: list[Entity] = field(default_factory=list)
    unknown_entities: list[str] = field(default_factory=list)
    intent_types: list[str] = field(default_factory=list)
    vector_plan: str = ""  # how the vector list was found (gather_candidates), for benchmarks and logs


def intent_types(query: str) -> list[str]:
    """The memory types the question asks for, from its cue words ("what mistake…" → correction, gap)."""
    text = query.lower()
    boosted = []
    for memory_type, cues in setting("INTENT_CUES").items():
        if any(re.search(rf"\b{re.escape(cue)}\b", text) for cue in cues):
            boosted.append(memory_type)
    return boosted


# BM25 over the query's words: Σ idf × tf × (k1 + 1) / (tf + norm), where tf is how often a memory
# holds the word and norm = k1 × (1 − b + b × its number of lexemes / the average number). ``ideal``,
# what a memory holding each word once at the average length would score (the sum of their idf), is
# what coverage divides by. The counts come one of two ways (:func:`_bm25_sql`), with the same
# results (bench/HISTORY.md, stop 33):
# - per word, for a question of up to LEXICAL_RANK_COUNT_MAX_WORDS words: one column per word, read
#   from ts_rank. For a one-word tsquery with every weight 1, ts_rank gives (1 + 1/2² + … + 1/tf²) ÷
#   (π²/6), and as the rest of that series is close to 1/(tf + ½), tf = round(1 / ((π²/6) × (1 −
#   rank)) − ½): exact from 1 to 255 (a test pins it); a word held more often than a tsvector counts
#   (256 positions) reads as 255, as ts_rank sums in single precision. This costs a test per word and
#   row, and saved a third of the statement for a question of a few words.
# - per row, for longer questions: each memory's lexemes kept to the query's (weighted A, filtered on
#   A) and unnested, one (memory, word, count) row each, then grouped.
TERM_COUNT_SQL = (
    "CASE WHEN x.sv @@ %s::tsquery "
    "THEN round(1 / (1.64493406685 - 1.64493406685 * ts_rank('{1,1,1,1}', x.sv, %s::tsquery, 0)) - 0.5) "
    "ELSE 0 END"
)
NORM_SQL = "%s * (1 - %s + %s * x.dl / %s) AS norm"  # k1, b, b, the average length
# The per-word counts are MATERIALIZED: a CTE read once is inlined, and BM25 names each count twice
# (tf / (tf + norm)), so PostgreSQL ran each word's ts_rank twice per row (bench/HISTORY.md, stop 34).
WORD_COLUMNS_SQL = {
    "term_counts": "tf AS MATERIALIZED (SELECT x.id, " + NORM_SQL + ", {counts} FROM matches x)",
    "document_counts": "df AS (SELECT ARRAY[{counts}]::float8[] AS df FROM tf)",
    "bm25": """
SELECT tf.id, ({terms}) * %s AS score, idf.total AS ideal
FROM tf CROSS JOIN idf
ORDER BY score DESC, tf.id
LIMIT %s""",
}
WORD_ROWS_SQL = {
    "term_counts": """tf AS (
    SELECT x.id, """
    + NORM_SQL
    + """, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM matches x, unnest(ts_filter(setweight(x.sv, 'A', %s::text[]), '{a}')) AS u
)""",
    "document_counts": """df AS (
    SELECT array_agg(coalesce(c.n, 0)::float8 ORDER BY q.i) AS df
    FROM unnest(%s::text[]) WITH ORDINALITY AS q(lexeme, i)
    LEFT JOIN (SELECT lexeme, count(*) AS n FROM tf GROUP BY lexeme) AS c USING (lexeme)
)""",
    "bm25": """
SELECT tf.id, sum(idf.w[q.i] * tf.tf / (tf.tf + tf.norm)) * %s AS score, max(idf.total) AS ideal
FROM tf JOIN unnest(%s::text[]) WITH ORDINALITY AS q(lexeme, i) USING (lexeme) CROSS JOIN idf
GROUP BY tf.id
ORDER BY score DESC, tf.id
LIMIT %s""",
}
# Every memory holding a query word is scored, with document frequencies counted among them.
LEXICAL_SQL = """
WITH matches AS (
    SELECT q.id, q.search_vector AS sv, length(q.search_vector)::float8 AS dl FROM ({matches}) AS q
),
{term_counts},
{document_counts},
idf AS (
    -- The corpus size is cached per process (LEXICAL_STATS_SECONDS): after a burst of stores a word
    -- can be held by more memories than it counted, and the idf must not turn negative.
    SELECT array_agg(w ORDER BY i) AS w, sum(w) AS total
    FROM (
        SELECT i, ln(1 + (greatest(%s, d) - d + 0.5) / (d + 0.5)) AS w
        FROM df, unnest(df.df) WITH ORDINALITY AS t(d, i)
    ) AS words
){bm25}"""
# The bounded form, for queries whose words match more memories than LEXICAL_SCAN_ROWS: only the
# memories of two LIMITed index scans are scored (those holding every query word, and those
# holding the rarest ones), with corpus-wide document frequencies passed in. Both scans return the
# rows' lexemes: joining back to the table for them cost a quarter of the query. The rarest words'
# scan runs when its parameter says it is complete (not a sample), or when fewer than k memories
# hold every word (the count is a one-time filter: the scan is never started otherwise).
BOUNDED_LEXICAL_SQL = """
WITH idf AS (SELECT %s::float8[] AS w, %s::float8 AS total),
every_word AS MATERIALIZED ({every_word}),
pool AS (
    (SELECT * FROM every_word)
    UNION ALL
    (SELECT * FROM ({rarest_words}) AS r WHERE %s OR (SELECT count(*) FROM every_word) < %s)
),
matches AS (
    SELECT DISTINCT ON (id) id, search_vector AS sv, length(search_vector)::float8 AS dl FROM pool
),
{term_counts}{bm25}"""


@dataclass(frozen=True)
class Bm25Parts:
    """The parts of the lexical statements that count the query's words and score (SQL, and each
    part's parameters in order)."""

    sql: dict[str, str]
    params: dict[str, list]


def _bm25_sql(lexemes: list[str], *, k1: float, b: float, average: float, k: int) -> Bm25Parts:
    """BM25's parts for ``lexemes``: words counted per word or per row (BM25 comment above)."""
    norm = [k1, b, b, average]
    if len(lexemes) <= setting("LEXICAL_RANK_COUNT_MAX_WORDS"):
        words = range(1, len(lexemes) + 1)
        sql = {
            "term_counts": WORD_COLUMNS_SQL["term_counts"].format(
                counts=", ".join(f"{TERM_COUNT_SQL} AS tf{i}" for i in words)
            ),
            "document_counts": WORD_COLUMNS_SQL["document_counts"].format(
                counts=", ".join(f"count(*) FILTER (WHERE tf{i} > 0)" for i in words)
            ),
            "bm25": WORD_COLUMNS_SQL["bm25"].format(
                terms=" + ".join(f"idf.w[{i}] * tf.tf{i} / (tf.tf{i} + tf.norm)" for i in words)
            ),
        }
        # Each word's test takes its tsquery twice, read as it is (the ``::tsquery`` cast normalizes
        # nothing).
        tsqueries = [_quoted(lexeme) for lexeme in lexemes for _ in range(2)]
        params = {"term_counts": [*norm, *tsqueries], "document_counts": [], "bm25": [k1 + 1, k]}
    else:
        sql = WORD_ROWS_SQL
        params = {"term_counts": [*norm, lexemes], "document_counts": [lexemes], "bm25": [k1 + 1, lexemes, k]}
    return Bm25Parts(sql, params)


@dataclass
class CorpusStats:
    """What BM25 needs to know about a team's memories, kept per process (LEXICAL_STATS_SECONDS)."""

    memories: int = 0
    average_length: float = 1.0
    # pg_stats' most common lexemes of search_vector (of the whole table): lexeme → share of the rows
    # holding it, which a team's rows are taken to share.
    common: dict[str, float] = field(default_factory=dict)
    rows: float = 0.0  # the team's rows the shares are taken of (the planner's estimate)
    frequencies: dict[str, tuple[float, int]] = field(default_factory=dict)  # lexeme → (when, df)
    at: float = 0.0


_corpus: dict[int, CorpusStats] = {}  # by team id
_corpus_lock = threading.Lock()

# Whether the deployment has more than one team, (when it was counted, the answer), kept per process
# LEXICAL_STATS_SECONDS and forgotten when this process saves or deletes a team (several_teams).
_several_teams: tuple[float, bool] | None = None


def clear_corpus_stats() -> None:
    global _several_teams
    _corpus.clear()
    _several_teams = None


def several_teams() -> bool:
    """Whether the deployment holds more than one team: only then is a search's team a filter that
    leaves out rows (:func:`memory_search`). Counted once per LEXICAL_STATS_SECONDS per process, and
    again after this process creates or deletes a team; another process's new team is seen within
    that time (until then its searches keep the single-team plan, which still filters by team)."""
    global _several_teams
    now = time.monotonic()
    known = _several_teams
    if known is not None and now - known[0] <= setting("LEXICAL_STATS_SECONDS"):
        return known[1]
    answer = Team.objects.all()[:2].count() > 1
    _several_teams = (now, answer)
    return answer


def _forget_team_count(**kwargs) -> None:
    global _several_teams
    _several_teams = None


post_save.connect(_forget_team_count, sender=Team, dispatch_uid="search-team-count-save")
post_delete.connect(_forget_team_count, sender=Team, dispatch_uid="search-team-count-delete")


def corpus_stats(team_id: int) -> tuple[int, float]:
    """How many memories the team has and their average number of lexemes, for BM25's idf and
    length normalisation: a team's scores do not depend on what other teams hold. Recomputed every
    LEXICAL_STATS_SECONDS per process: both move slowly. Up to LEXICAL_STATS_EXACT_ROWS memories
    they are counted; above, the planner's row estimate and the newest LEXICAL_STATS_EXACT_ROWS
    memories stand in (counting millions of rows would cost a second)."""
    stats = _current_stats(team_id)
    return stats.memories, stats.average_length


def table_rows() -> float:
    """The planner's count of every team's memories: the rows the table's own HNSW index holds."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'memory_memory'::regclass")
        return max(float(cursor.fetchone()[0] or 0), 0.0)


def _current_stats(team_id: int) -> CorpusStats:
    now = time.monotonic()
    stats = _corpus.get(team_id) or CorpusStats()
    if stats.at and now - stats.at <= setting("LEXICAL_STATS_SECONDS"):
        return stats
    with _corpus_lock, connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) SELECT 1 FROM memory_memory WHERE team_id = %s", [team_id])
        plan = cursor.fetchone()[0]
        estimate = float((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]["Plan Rows"])
        exact_below = setting("LEXICAL_STATS_EXACT_ROWS")
        if estimate <= exact_below:
            cursor.execute(
                "SELECT count(*), avg(length(search_vector)) FROM memory_memory "
                "WHERE team_id = %s AND status = 'active'",
                [team_id],
            )
            count, average = cursor.fetchone()
        else:
            cursor.execute(
                "SELECT avg(length(s.search_vector)) FROM (SELECT search_vector FROM memory_memory "
                "WHERE team_id = %s AND status = 'active' ORDER BY created_at DESC LIMIT %s) AS s",
                [team_id, exact_below],
            )
            count, average = estimate, cursor.fetchone()[0]
        cursor.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'memory_memory' AND attname = 'search_vector'"
        )
        row = cursor.fetchone()
        common = dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}
        fresh = CorpusStats(
            memories=int(count),
            average_length=float(average or 1.0),
            common=common,
            rows=max(estimate, 1.0),
            at=now,
        )
        # Lexeme counts outlive a refresh of the totals only while they are young.
        fresh.frequencies = {
            lexeme: value
            for lexeme, value in stats.frequencies.items()
            if now - value[0] <= setting("LEXICAL_STATS_SECONDS")
        }
        _corpus[team_id] = fresh
    return fresh


def document_frequencies(lexemes: list[str], team_id: int) -> dict[str, int]:
    """How many of the team's memories (of any status) hold each lexeme. A lexeme among pg_stats'
    most common ones is estimated from its share; any other is rarer than those, so counting it
    through the GIN index (the team's own: team_indexes) is cheap (and capped at
    LEXICAL_DF_COUNT_MAX). Counts are kept LEXICAL_STATS_SECONDS."""
    stats = _current_stats(team_id)
    now = time.monotonic()
    found: dict[str, int] = {}
    missing = []
    for lexeme in lexemes:
        cached = stats.frequencies.get(lexeme)
        if cached and now - cached[0] <= setting("LEXICAL_STATS_SECONDS"):
            found[lexeme] = cached[1]
        elif lexeme in stats.common:
            found[lexeme] = round(stats.common[lexeme] * stats.rows)
        else:
            missing.append(lexeme)
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT t.lexeme, (SELECT count(*) FROM (SELECT 1 FROM memory_memory m "
                "WHERE m.team_id = %s AND m.search_vector @@ t.query LIMIT %s) AS s) "
                "FROM unnest(%s::text[], %s::tsquery[]) AS t(lexeme, query)",
                [
                    team_id,
                    setting("LEXICAL_DF_COUNT_MAX"),
                    missing,
                    [tsquery_any([lexeme]) for lexeme in missing],
                ],
            )
            for lexeme, count in cursor.fetchall():
                found[lexeme] = count
                stats.frequencies[lexeme] = (now, count)
    return found


def tsquery_any(lexemes: list[str]) -> str:
    """A tsquery that matches any of the (already normalized) lexemes."""
    return " | ".join(_quoted(lexeme) for lexeme in lexemes)


def tsquery_all(lexemes: list[str]) -> str:
    """A tsquery that matches a text holding every one of the (already normalized) lexemes."""
    return " & ".join(_quoted(lexeme) for lexeme in lexemes)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _query_lexemes(query: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(array_agg(DISTINCT lexeme), '{}') FROM unnest(to_tsvector('english', %s))",
            [query],
        )
        (lexemes,) = cursor.fetchone()
    return lexemes


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
        every filtered row is compared, planned as :func:`_exact_scan_plans` says). Call inside a
        transaction."""
        distance = "s.embedding <=> %s::vector"
        order = f"({distance}) + 0.0" if exact else distance
        with connection.cursor() as cursor, _exact_scan_plans(cursor) if exact else nullcontext():
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


def lexical_candidates(
    queryset, query: str, k: int, *, team_id: int, filtered_rows: int | None = None
) -> list[tuple]:
    """``(id, bm25, coverage)`` for the top ``k`` lexical matches of ``query`` among ``queryset``
    (memories of the team ``team_id``, whose statistics BM25 takes).

    BM25 over the query's stemmed, stop-word-free lexemes, any of which may match (the GIN index
    finds them). ``coverage`` divides the score by what a document holding every query term once
    would get: near 1 when a memory matches the question's informative words (an error code, a
    function name), near 0 when it shares only common ones.

    The work is bounded. When the query's words are held by at most LEXICAL_SCAN_ROWS memories in
    all (or the filter leaves at most that many, ``filtered_rows``), every match is scored, with
    document frequencies taken from the filtered matches. Otherwise only the memories that hold
    every query word and those that hold its rarest words (up to LEXICAL_SCAN_ROWS each) are
    scored, with corpus-wide document frequencies: a memory that shares only common words with the
    question cannot outscore those, except by holding a common word many times. When even the
    rarest word is held by more than LEXICAL_SCAN_ROWS memories, its scan is a sample (the first it
    meets), and it is skipped when the memories holding every word already fill the ``k``
    (LEXICAL_SKIP_SAMPLED_RAREST; bench/HISTORY.md, stop 39). Call inside a transaction (the
    bounded form sets planner switches for it)."""
    lexemes = _query_lexemes(query)
    if not lexemes:
        return []
    base = searched(queryset)
    budget = setting("LEXICAL_SCAN_ROWS")
    frequencies = document_frequencies(lexemes, team_id)
    corpus_size, average = corpus_stats(team_id)
    k1, b = setting("BM25_K1"), setting("BM25_B")
    bounded = sum(frequencies.values()) > budget and (filtered_rows is None or filtered_rows > budget)
    bm25 = _bm25_sql(lexemes, k1=k1, b=b, average=average, k=k)
    if not bounded:
        matches_sql, matches_params = base.matching(tsquery_any(lexemes))
        sql = LEXICAL_SQL.format(matches=matches_sql, **bm25.sql)
        params = [
            *matches_params,
            *bm25.params["term_counts"],
            *bm25.params["document_counts"],
            float(max(corpus_size, 1)),
            *bm25.params["bm25"],
        ]
    else:
        size = float(max(corpus_size, 1, *frequencies.values()))
        idf = [math.log(1 + (size - frequencies[lx] + 0.5) / (frequencies[lx] + 0.5)) for lx in lexemes]
        present = sorted((lx for lx in lexemes if frequencies[lx] > 0), key=lambda lx: (frequencies[lx], lx))
        rarest, held = [], 0
        for lexeme in present:
            if rarest and held + frequencies[lexeme] > budget:
                break
            rarest.append(lexeme)
            held += frequencies[lexeme]
        every_sql, every_params = base.matching(tsquery_all(present), limit=budget)
        rarest_sql, rarest_params = base.matching(tsquery_any(rarest), limit=budget)
        sql = BOUNDED_LEXICAL_SQL.format(every_word=every_sql, rarest_words=rarest_sql, **bm25.sql)
        params = [
            idf,
            math.fsum(idf),
            *every_params,
            *rarest_params,
            held <= budget or not setting("LEXICAL_SKIP_SAMPLED_RAREST"),  # a sample otherwise
            k,
            *bm25.params["term_counts"],
            *bm25.params["bm25"],
        ]
    with connection.cursor() as cursor, _word_index_plans(cursor) if bounded else nullcontext():
        cursor.execute(sql, params)
        # A memory the index matched that holds none of the words as they are (the pool's tsquery is
        # parsed again, the term counts' is not) scores 0 and is no lexical match.
        return [
            (pk, score, min(1.0, score / ideal) if ideal else 0.0)
            for pk, score, ideal in cursor.fetchall()
            if score > 0
        ]


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


def _exact_scan_plans(cursor):
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


def vector_candidates(
    base,
    vector,
    n: int,
    *,
    filtered: bool,
    rows: int | None = None,
    widest: bool = False,
    complete: bool = False,
    team_id: int | None = None,
) -> tuple[list, str]:
    """The ids of the ``n`` memories of ``base`` closest to ``vector``, and the plan that found them.

    pgvector 0.6's HNSW scan yields at most ``hnsw.ef_search`` rows and filters them afterwards, so a
    selective filter can leave fewer (or other) rows than the true nearest. Unfiltered: the index, at
    ef_search = max(n, HNSW_EF_SEARCH). Filtered: an exact scan when the planner expects at most
    VECTOR_EXACT_MAX_ROWS rows; otherwise the index with ef_search raised so that n ×
    VECTOR_OVERFETCH of the rows it yields should pass the filter (at most HNSW_EF_SEARCH_MAX), and
    an exact scan after all if it still yields fewer than n. ``widest``: the index at
    HNSW_EF_SEARCH_MAX whatever the filter (:func:`rescued_vector_candidates`). ``complete``: an
    unfiltered scan that yields fewer than n is followed by an exact scan too (a team's own index,
    team_indexes, that this process still takes to exist after it was dropped). ``team_id``: the
    team whose own HNSW index serves the scan (team_indexes), whose size then decides how far it
    must look past the filter; else the table's. Call inside a transaction (ef_search is set)."""
    base = searched(base)
    ef_search = setting("HNSW_EF_SEARCH_MAX") if widest else max(n, setting("HNSW_EF_SEARCH"))
    plan = "hnsw"
    if filtered:
        rows = estimated_rows(base) if rows is None else rows
        if rows <= setting("VECTOR_EXACT_MAX_ROWS"):
            plan = "exact"
        else:
            corpus = corpus_stats(team_id)[0] if team_id is not None else table_rows()
            wanted = math.ceil(n * setting("VECTOR_OVERFETCH") * max(corpus, rows) / max(rows, 1))
            ef_search = min(setting("HNSW_EF_SEARCH_MAX"), max(ef_search, wanted))
    if plan == "hnsw":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
    ids = base.nearest(vector, n, exact=plan == "exact")
    if (filtered or complete) and plan == "hnsw" and len(ids) < n:
        plan = "hnsw, then exact"
        ids = base.nearest(vector, n, exact=True)
    return ids, plan


def vector_list_stranded(vector_similarities: list[float], lexical_only_similarities: list[float]) -> bool:
    """Whether an index scan missed the question's neighbourhood, as the memories that only the words
    found show: one of them is more similar to the question than every memory the scan returned, or
    several are more similar than the least similar it returned (at least VECTOR_STRANDED_MISSES,
    and VECTOR_STRANDED_SHARE of the list).

    A healthy HNSW scan returns the nearest memory almost always, and nearly the exact list: a
    memory outside the list that is more similar than the list's last is one the scan missed, and
    the words show at most a few of those. A graph can strand a region, though (clustered vectors,
    README "Benchmarks"; the dead rows a purge leaves in it until a vacuum): the scan then returns
    far-off memories, and the lexical list, which does not go through the graph, still finds some of
    what it missed, often nearly all it found."""
    if not lexical_only_similarities:
        return False
    if not vector_similarities or max(lexical_only_similarities) > max(vector_similarities):
        return True
    least = min(vector_similarities)
    missed = sum(similarity > least for similarity in lexical_only_similarities)
    share = math.ceil(setting("VECTOR_STRANDED_SHARE") * len(vector_similarities))
    return missed >= max(setting("VECTOR_STRANDED_MISSES"), share)


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


def _validate(query, limit, memory_type, category, priority, mode) -> tuple[str, int]:
    errors: dict[str, list[str]] = {}
    if not isinstance(query, str) or not query.strip():
        errors["q"] = ["The query must be non-empty text."]
    elif len(query) > MAX_QUERY_CHARS:
        errors["q"] = [f"The query is at most {MAX_QUERY_CHARS} characters."]
    if limit is None:
        limit = setting("SEARCH_DEFAULT_LIMIT")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= setting("SEARCH_MAX_LIMIT"):
        errors["limit"] = [f"The limit is an integer from 1 to {setting('SEARCH_MAX_LIMIT')}."]
    for name, value, choices in (
        ("type", memory_type, MemoryType),
        ("category", category, Category),
        ("priority", priority, Priority),
    ):
        if value is not None and value not in choices.values:
            errors[name] = [f"'{value}' is not one of: {', '.join(choices.values)}."]
    if mode not in MODES:
        errors["mode"] = [f"The mode is one of: {', '.join(MODES)}."]
    if errors:
        raise InvalidInput(errors)
    return query.strip(), limit


def memory_search(
    *,
    team: Team,
    query: str,
    entities: list[str] | None = None,
    memory_type: str | None = None,
    category: str | None = None,
    priority: str | None = None,
    limit: int | None = None,
    session: Session | None = None,
    mode: str = "full",
    record: bool = True,
    exclude_ids: set | None = None,
    scope=None,
    allowed_projects: list[str] | None = None,
    now: datetime | None = None,
) -> SearchOutcome:
    """Find the memories of ``team`` that answer ``query``. Raises InvalidInput, AmbiguousEntity
    when an explicit entity reference matches several of the team's entities, or NotFound for a
    ``session`` of another team. Only servable memories are returned, only those in ``scope`` (a
    Memory queryset) when it is given, and with ``allowed_projects`` (project slugs: a token's
    allow-list) only those about one of these projects — none team-wide, none of another project;
    an empty list allows none. Entities resolve among the team's: a slug only another team knows
    is unknown, and matches nothing."""
    query, limit = _validate(query, limit, memory_type, category, priority, mode)
    query, _ = redact(query)  # a pasted key is neither embedded nor echoed back
    if session is not None and session.team_id != team.pk:
        raise NotFound(f"No session '{session.external_id}'.")
    now = now or timezone.now()
    resolution = entity_service.resolve_references(
        entities or [], team=team, create=False
    ).raise_if_ambiguous()
    outcome = SearchOutcome(
        query=query, results=[], entities=resolution.entities, unknown_entities=resolution.unknown
    )
    if resolution.unknown:
        return outcome  # a strict filter on an entity nobody has mentioned matches nothing
    if allowed_projects is not None and not allowed_projects:
        return outcome  # an allow-list of no project allows no memory

    plain = {
        name: value
        for name, value in (("memory_type", memory_type), ("category", category), ("priority", priority))
        if value
    }
    strict = bool(resolution.entities)
    limited = allowed_projects is not None
    if strict or exclude_ids or scope is not None or limited:
        base = Memory.objects.for_team(team).servable(now).filter(**plain)
        if limited:  # a token's project allow-list
            base = base.in_projects(allowed_projects)
        if strict:
            base = base.mentioning(entity.pk for entity in resolution.entities)
        if exclude_ids:
            base = base.exclude(pk__in=exclude_ids)
        if scope is not None:  # a caller's own restriction, e.g. a project's memories plus team-wide ones
            base = base.filter(pk__in=scope.values("pk"))
    else:
        base = servable_searched(now, team_id=team.pk, **plain)
    # The team is a filter the vector list plans for (vector_candidates: the HNSW graph holds every
    # team's memories) only when the deployment has more than one team and the team has no index of
    # its own (team_indexes): with a single team it leaves out nothing, and a team's own index holds
    # its memories only. Either keeps the unfiltered plan a single-team deployment had before teams.
    own_index = several_teams() and team_indexes.has_own_indexes(team.pk)
    filtered = (
        strict
        or limited
        or scope is not None
        or bool(memory_type or category or priority or exclude_ids)
        or (several_teams() and not own_index)
    )

    n = max(setting("SEARCH_CANDIDATES_MIN"), setting("SEARCH_CANDIDATES_PER_RESULT") * limit)
    detect = mode == "full" and not strict
    candidates, detected, outcome.vector_plan = gather_candidates(
        base,
        query,
        n,
        team=team,
        lists=("lexical",) if mode == "fts" else ("vector",) if mode == "vector" else ("vector", "lexical"),
        exact=filtered,
        detect=detect,
        own_index=own_index,
    )
    outcome.detected_entities = detected.entities
    outcome.intent_types = boosted = intent_types(query) if mode == "full" else []
    fusion = fusion_context(candidates, query)
    rules = {"mode": mode, "boosted": boosted, "strict": strict, "now": now, "fusion": fusion}
    # Every candidate is scored; only those shown are explained (building ~100 explanations cost more
    # than the scores: bench/HISTORY.md, stop 30).
    scored = []
    for candidate in candidates:
        if (result := score_candidate(candidate, **rules, explain=False)) is not None:
            scored.append((result[0], str(candidate.memory.pk), candidate))
    # One ordering: a memory about an entity the question names is boosted, not put in a group above.
    scored.sort(key=lambda item: (-item[0], item[1]))
    hits = [
        SearchHit(candidate.memory, *score_candidate(candidate, **rules))
        for _, _, candidate in scored[:limit]
    ]
    outcome.results = with_whole_rows(hits, team_id=team.pk)
    if record and outcome.results:
        record_retrieval(outcome.results, session, now, team=team)
    return outcome


# What a result shows of its author and session (the API's author and evidence, the dashboard's
# row): loading their whole rows cost more than the memories'.
RESULT_RELATED_FIELDS = (("author", ("username",)), ("session", ("external_id", "agent")))
# Columns of a memory a result does not carry: the vectors stay in the database.
RESULT_LEFT_OUT = ("embedding", "search_vector")


def with_whole_rows(hits: list[SearchHit], *, team_id: int | None = None) -> list[SearchHit]:
    """The hits with every column of their memories (the candidates were scored on a few) but
    RESULT_LEFT_OUT, and RESULT_RELATED_FIELDS of their author and session, as model instances (the
    other columns deferred). A memory deleted meanwhile (or, with ``team_id``, of another team) is
    left out. Read by one hand-written statement (:mod:`memory.rows`): through the ORM this was a
    tenth of the web processes' Python time under load (bench/HISTORY.md, stop 27)."""
    if not hits:
        return []
    whole = memories_as_shown([hit.memory.pk for hit in hits], team_id=team_id)
    return [SearchHit(whole[hit.memory.pk], hit.score, hit.explain) for hit in hits if hit.memory.pk in whole]


def memories_as_shown(ids: list, *, team_id: int | None = None) -> dict:
    """``{id: memory}`` for the memories ``ids`` as a result shows them (:func:`with_whole_rows`),
    read by one statement; a memory deleted meanwhile is missing, and with ``team_id`` so is a
    memory of another team."""
    reader = row_reader(Memory, RESULT_RELATED_FIELDS, many=True, left_out=RESULT_LEFT_OUT)
    return {
        memory.pk: memory
        for memory in reader.read([list(ids)])
        if team_id is None or memory.team_id == team_id
    }


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


@dataclass
class FusionContext:
    """What fusion needs to know about the whole candidate set of one query."""

    max_lexical: float = 0.0
    max_coverage: float = 0.0
    names_things: bool = False  # the query names a person, product or identifier
    min_similarity: float = 0.0
    max_similarity: float = 1.0

    @cached_property
    def alpha(self) -> float:
        """The weight of similarity for this query (worked out once per search). ``adaptive``: FUSION_ALPHA_MIN when the query
        names someone or something (a proper name, an identifier: exact words decide) that the
        memories' words know (the best match covers at least FUSION_NAME_MIN_COVERAGE of the
        question; a name no memory mentions gives the words nothing to decide with); otherwise
        FUSION_ALPHA_MAX when the best lexical match covers little of the question's informative
        words (the low end of FUSION_COVERAGE_RANGE: a paraphrase, meaning decides),
        FUSION_ALPHA_MIN when it covers most of them (the high end), linear in between."""
        if setting("FUSION_METHOD") != "adaptive":
            return setting("FUSION_ALPHA")
        high, low = setting("FUSION_ALPHA_MAX"), setting("FUSION_ALPHA_MIN")
        if self.names_things and self.max_coverage >= setting("FUSION_NAME_MIN_COVERAGE"):
            return low
        start, end = setting("FUSION_COVERAGE_RANGE")
        lexical_evidence = min(1.0, max(0.0, (self.max_coverage - start) / max(end - start, 1e-9)))
        return high - (high - low) * lexical_evidence


NAMES_THINGS = re.compile(
    r"`[^`]+`|(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+|\b[A-Za-z]+[_/:][A-Za-z0-9]|\b[A-Za-z]{2,}\.[A-Za-z]{2,}|\b[a-z]+[A-Z]\w*"
)


def names_things(query: str) -> bool:
    """Whether a question names someone or something exactly: a capitalized name inside the
    sentence, an identifier (snake_case, dotted.name, a/path, camelCase) or a code span. Acronyms
    (API, SDK), numbers and hyphenated words ("end-to-end", "single-bill") do not count: paraphrases
    use them too."""
    return bool(NAMES_THINGS.search(query.strip()))


def fusion_context(candidates: list[Candidate], query: str = "") -> FusionContext:
    if not candidates:
        return FusionContext()
    similarities = [c.similarity for c in candidates]
    return FusionContext(
        max_lexical=max((c.lexical_score or 0.0) for c in candidates),
        max_coverage=max(c.lexical_coverage for c in candidates),
        names_things=names_things(query),
        min_similarity=min(similarities),
        max_similarity=max(similarities),
    )


def fused_relevance(
    candidate: Candidate, fusion: FusionContext, *, explain: bool = True
) -> tuple[float, dict | None]:
    """The base relevance of a candidate from its two signals, and the parts it was made of
    (FUSION_METHOD, README "Ranking"; None unless ``explain``).

    - ``adaptive`` / ``convex``: α × the similarity min-max normalised over the candidates +
      (1 − α) × the BM25 score divided by the best BM25 score of the candidates, α from
      :attr:`FusionContext.alpha` (``convex``: FUSION_ALPHA for every query);
    - ``absolute``: FUSION_ALPHA × similarity + (1 − FUSION_ALPHA) × coverage, unnormalised;
    - ``rrf``: Σ 1 / (RRF_K + rank) over the two lists;
    - ``bonus``: similarity + LEXICAL_WEIGHT × coverage^LEXICAL_COVERAGE_POWER (the formula before
      issue 16)."""
    method = setting("FUSION_METHOD")
    if method == "rrf":
        k = setting("RRF_K")
        ranks = (candidate.vector_rank, candidate.lexical_rank)
        relevance = sum(1.0 / (k + rank) for rank in ranks if rank)
        return relevance, ({"method": method, "k": k} if explain else None)
    if method == "bonus":
        lexical = setting("LEXICAL_WEIGHT") * candidate.lexical_coverage ** setting("LEXICAL_COVERAGE_POWER")
        return max(candidate.similarity, 0.0) + lexical, ({"method": method} if explain else None)
    if method == "absolute":
        alpha = setting("FUSION_ALPHA")
        semantic, lexical = max(candidate.similarity, 0.0), candidate.lexical_coverage
    else:
        # A floor on the spread: two near-identical memories stay near-equal instead of 1 and 0, so
        # feedback and the other factors can still order them.
        spread = fusion.max_similarity - fusion.min_similarity
        semantic = (
            (candidate.similarity - fusion.min_similarity) / max(spread, setting("FUSION_MIN_SPREAD"))
            if spread > 1e-9
            else 1.0
        )
        lexical = (candidate.lexical_score or 0.0) / fusion.max_lexical if fusion.max_lexical > 0 else 0.0
        alpha = fusion.alpha
    relevance = alpha * semantic + (1.0 - alpha) * lexical
    if not explain:
        return relevance, None
    return relevance, {
        "method": method,
        "alpha": round(alpha, 4),
        "semantic": round(semantic, 4),
        "lexical": round(lexical, 4),
    }


def score_candidate(
    candidate: Candidate,
    *,
    mode: str,
    boosted: list[str],
    strict: bool,
    now: datetime,
    fusion: FusionContext | None = None,
    explain: bool = True,
) -> tuple[float, dict | None] | None:
    """``(score, explanation)`` for one candidate, or None when it falls below the similarity floor;
    the explanation is None unless ``explain``.

    The relevance fuses similarity and BM25 (:func:`fused_relevance`); in ``full`` mode it is
    multiplied by each factor raised to its RANKING_EXPONENTS entry, and by ENTITY_MATCH_BOOST for
    a memory about an entity the question names."""
    memory = candidate.memory
    parts: dict = {}
    if mode == "vector":
        score = candidate.similarity
    elif mode == "fts":
        score = candidate.lexical_score
    else:
        if candidate.lexical_rank is None:
            entity_filtered = strict or candidate.entity_match
            floor = setting("SIMILARITY_FLOOR_ENTITY") if entity_filtered else setting("SIMILARITY_FLOOR")
            if candidate.similarity < floor:
                return None
        score, parts["fusion"] = fused_relevance(
            candidate, fusion or fusion_context([candidate]), explain=explain
        )
        parts["relevance"] = score
        if mode == "full":
            factors = {
                "type_weight": type_weight(memory.memory_type),
                "intent_boost": setting("INTENT_BOOST") if memory.memory_type in boosted else 1.0,
                "feedback_score": memory.feedback_score,
                "decay": decay_factor(memory, now),
                "maturity_multiplier": maturity_multiplier(memory.maturity),
            }
            exponents = setting("RANKING_EXPONENTS")
            applied = {name: value ** exponents[name] for name, value in factors.items()}
            if candidate.entity_match:
                applied["entity_match"] = setting("ENTITY_MATCH_BOOST")
            for value in applied.values():
                score *= value
            parts["factors"], parts["applied"] = factors, applied
    if not explain:
        return score, None
    return score, explanation(candidate, parts, score)


def explanation(candidate: Candidate, parts: dict, score: float) -> dict:
    """What a result's ``explain`` shows of how :func:`score_candidate` scored it, rounded."""
    explained = {
        "vector_rank": candidate.vector_rank,
        "similarity": round(candidate.similarity, 4),
        "lexical_rank": candidate.lexical_rank,
        "lexical_score": round(candidate.lexical_score, 4) if candidate.lexical_score is not None else None,
        "lexical_coverage": round(candidate.lexical_coverage, 4),
        "entity_match": candidate.entity_match,
    }
    if "fusion" in parts:
        explained["fusion"], explained["relevance"] = parts["fusion"], round(parts["relevance"], 6)
    if "factors" in parts:
        explained.update({name: round(value, 4) for name, value in parts["factors"].items()})
        explained["applied"] = {name: round(value, 4) for name, value in parts["applied"].items()}
    explained["score"] = round(score, 6)
    return explained


def record_retrieval(hits: list[SearchHit], session: Session | None, now: datetime, *, team: Team) -> None:
    """Count the retrieval (it never changes a score) and remember what a session was shown: of
    ``team``'s memories only (the hits are; a memory of another team is neither counted nor
    recalled), for a ``session`` of ``team`` (NotFound otherwise), its Recall rows carrying the team."""
    if session is not None and session.team_id != team.pk:
        raise NotFound(f"No session '{session.external_id}'.")
    team_column = connection.ops.quote_name(Memory._meta.get_field("team").column)
    # The rows are locked in key order (MemoryQuerySet.locked_in_key_order's rule), in the same
    # statement: an UPDATE … WHERE id IN (…) locks them in the order it finds them, and under load
    # that deadlocked with a session's end rating the same memories.
    table = connection.ops.quote_name(Memory._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS m SET retrieval_count = m.retrieval_count + 1, last_retrieved_at = %s "
            f"FROM (SELECT id FROM {table} WHERE id = ANY(%s) AND {team_column} = %s "
            "ORDER BY id FOR NO KEY UPDATE) AS locked "
            "WHERE m.id = locked.id",
            [now, sorted(hit.memory.pk for hit in hits), team.pk],
        )
    for hit in hits:  # the rows were loaded before the count: what the caller shows includes this one
        hit.memory.retrieval_count += 1
        hit.memory.last_retrieved_at = now
    if session is not None:
        # Shown again (after a reset of the agent's history): when it was last shown is what counts.
        # One hand-written statement: through the ORM (a Recall instance per hit, the insert compiled)
        # counting and recalling ten results cost 1.1 ms of Python, 0.55 now (bench/HISTORY.md,
        # stop 29).
        recall = Recall._meta
        quote = connection.ops.quote_name
        team_id, session_id, memory_id, rank, score, surfaced_at = (
            quote(recall.get_field(name).column)
            for name in ("team", "session", "memory", "rank", "score", "surfaced_at")
        )
        with connection.cursor() as cursor:
            # Only the team's memories are recalled: a hit of another team (none, from a search of
            # the team) is left out as a missing one would be.
            cursor.execute(
                f"INSERT INTO {quote(recall.db_table)} "
                f"({team_id}, {session_id}, {memory_id}, {rank}, {score}, {surfaced_at}) "
                f"SELECT %s, %s, hit.memory, hit.rank, hit.score, %s "
                "FROM unnest(%s::uuid[], %s::integer[], %s::float8[]) AS hit(memory, rank, score) "
                f"JOIN {table} AS m ON m.id = hit.memory AND m.{team_column} = %s "
                f"ON CONFLICT ({session_id}, {memory_id}) DO UPDATE SET {surfaced_at} = EXCLUDED.{surfaced_at}",
                [
                    session.team_id,
                    session.pk,
                    now,
                    [hit.memory.pk for hit in hits],
                    list(range(1, len(hits) + 1)),
                    [hit.score for hit in hits],
                    team.pk,
                ],
            )
