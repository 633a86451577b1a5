"""What BM25 and the vector plan know of a team's corpus, kept per process (LEXICAL_STATS_SECONDS):
how many memories the team has and their average number of lexemes, the table's most common words
(pg_stats), how many memories hold each word, and whether the deployment has more than one team.
Counted over the team's memories: another team's words move neither its scores nor its plans."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from django.db import connection
from django.db.models.signals import post_delete, post_save

from memory.conf import setting
from memory.models import Team
from memory.services.search.statements import tsquery_any


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
