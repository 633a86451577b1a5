"""The lexical candidate list: BM25 over the question's stemmed, stop-word-free words, any of which
may match (the GIN index finds them), written in SQL around the memories searched. Every match is
scored while the words' memories are few; otherwise only two bounded scans (the memories holding
every word, and those holding the rarest words) are, with corpus-wide document frequencies
(:mod:`corpus`). ``coverage`` says how much of the question's informative words a memory holds,
which fusion reads."""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass

from django.db import connection

from memory.conf import setting
from memory.services.search.corpus import corpus_stats, document_frequencies
from memory.services.search.statements import _quoted, _word_index_plans, searched, tsquery_all, tsquery_any

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


def _query_lexemes(query: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(array_agg(DISTINCT lexeme), '{}') FROM unnest(to_tsvector('english', %s))",
            [query],
        )
        (lexemes,) = cursor.fetchone()
    return lexemes


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
