"""Search, the "smart find" (DESIGN.md §4.4).

1. Resolve explicit entities (strict filter; ambiguity → CLARIFICATION_REQUIRED) and detect known
   entities named in the query (soft filter: their memories first, the rest fills the limit).
2. Candidates: top-N by cosine similarity (HNSW) and top-N by a BM25 ranking of the query's
   lexemes (any of them may match), N = max(50, 5 × limit), from servable memories only.
3. Reciprocal rank fusion (k = 60) of the two lists is the base relevance.
4. Vector-only candidates below the similarity floor are dropped.
5. ``final = base × type_weight × intent_boost × feedback_score × decay × maturity_multiplier``.
6. The top ``limit`` with an ``explain`` of every factor; retrieval counted; Recall rows written
   for a session.

``mode`` exists for the benchmark: ``fts`` lexical only, ``vector`` plain cosine, ``hybrid`` fused
without the re-ranking factors, ``full`` what the API does.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.postgres.search import SearchQuery
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from pgvector.django import CosineDistance

from memory import embeddings
from memory.conf import setting
from memory.models import Category, Entity, Memory, MemoryType, Priority, Recall, Session
from memory.services import entities as entity_service
from memory.services.decay import decay_factor
from memory.services.errors import InvalidInput
from memory.services.maturity import multiplier as maturity_multiplier
from memory.services.redaction import redact
from memory.services.taxonomy import type_weight

MODES = ("fts", "vector", "hybrid", "full")
_embedder_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedder")
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


def intent_types(query: str) -> list[str]:
    """The memory types the question asks for, from its cue words ("what mistake…" → correction, gap)."""
    text = query.lower()
    boosted = []
    for memory_type, cues in setting("INTENT_CUES").items():
        if any(re.search(rf"\b{re.escape(cue)}\b", text) for cue in cues):
            boosted.append(memory_type)
    return boosted


LEXICAL_SQL = """
WITH terms AS (SELECT unnest(%s::text[]) AS lexeme),
matches AS (
    SELECT m.id, m.search_vector, length(m.search_vector)::float8 AS dl
    FROM memory_memory m WHERE m.id IN ({matches})
),
tf AS (
    -- Keep only the query's lexemes before unnesting (weight them A, filter on A): a memory has
    -- dozens of lexemes and matches one or two.
    SELECT x.id, x.dl, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM matches x, unnest(ts_filter(setweight(x.search_vector, 'A', %s::text[]), '{{a}}')) AS u
),
df AS (SELECT lexeme, count(*)::float8 AS df FROM tf GROUP BY lexeme),
idf AS (
    SELECT terms.lexeme, ln(1 + (%s - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms LEFT JOIN df USING (lexeme)
),
ideal AS (SELECT sum(idf) AS total FROM idf)
SELECT tf.id,
       sum(idf.idf * tf.tf * (%s + 1) / (tf.tf + %s * (1 - %s + %s * tf.dl / %s))) AS score,
       max(ideal.total) AS ideal
FROM tf JOIN idf USING (lexeme) CROSS JOIN ideal
GROUP BY tf.id
ORDER BY score DESC, tf.id
LIMIT %s
"""
CORPUS_STATS_SECONDS = 300
_corpus_stats: tuple[float, int, float] | None = None  # (monotonic time, memories, average lexemes)


def corpus_stats() -> tuple[int, float]:
    """How many active memories there are and their average number of lexemes, for BM25's idf and
    length normalisation. Recomputed every five minutes per process: both move slowly, and
    scanning every row on each query would not."""
    global _corpus_stats
    now = time.monotonic()
    if _corpus_stats is None or now - _corpus_stats[0] > CORPUS_STATS_SECONDS:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), avg(length(search_vector)) FROM memory_memory WHERE status = 'active'"
            )
            count, average = cursor.fetchone()
        _corpus_stats = (now, int(count), float(average or 1.0))
    return _corpus_stats[1], _corpus_stats[2]


def tsquery_any(lexemes: list[str]) -> str:
    """A tsquery that matches any of the (already normalized) lexemes."""
    return " | ".join("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)


def lexical_candidates(queryset, query: str, k: int) -> list[tuple]:
    """``(id, bm25, coverage)`` for the top ``k`` lexical matches of ``query``.

    BM25 over the query's stemmed, stop-word-free lexemes, any of which may match (the GIN index
    finds them); document frequencies come from the filtered matches, the corpus size and average
    length from all active memories. ``coverage`` divides the
    score by what a document holding every query term once would get: near 1 when a memory
    matches the question's informative words (an error code, a function name), near 0 when it
    shares only common ones."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(array_agg(DISTINCT lexeme), '{}') FROM unnest(to_tsvector('english', %s))",
            [query],
        )
        (lexemes,) = cursor.fetchone()
    if not lexemes:
        return []
    # The lexemes are normalized already: the 'simple' configuration only lower-cases them again.
    matching = queryset.order_by().filter(
        search_vector=SearchQuery(tsquery_any(lexemes), config="simple", search_type="raw")
    )
    matches_sql, matches_params = matching.values("id").query.sql_with_params()
    corpus_size, average = corpus_stats()
    k1, b = setting("BM25_K1"), setting("BM25_B")
    with connection.cursor() as cursor:
        cursor.execute(
            LEXICAL_SQL.format(matches=matches_sql),
            [lexemes, *matches_params, lexemes, float(max(corpus_size, 1)), k1, k1, b, b, average, k],
        )
        return [
            (pk, score, min(1.0, score / ideal) if ideal else 0.0) for pk, score, ideal in cursor.fetchall()
        ]


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
    now: datetime | None = None,
) -> SearchOutcome:
    """Find the memories that answer ``query``. Raises InvalidInput, or AmbiguousEntity when an
    explicit entity reference matches several entities. Only servable memories are returned,
    and only those in ``scope`` (a Memory queryset) when it is given."""
    query, limit = _validate(query, limit, memory_type, category, priority, mode)
    query, _ = redact(query)  # a pasted key is neither embedded nor echoed back
    now = now or timezone.now()
    resolution = entity_service.resolve_references(entities or [], create=False).raise_if_ambiguous()
    outcome = SearchOutcome(
        query=query, results=[], entities=resolution.entities, unknown_entities=resolution.unknown
    )
    if resolution.unknown:
        return outcome  # a strict filter on an entity nobody has mentioned matches nothing

    base = Memory.objects.servable(now)
    if memory_type:
        base = base.filter(memory_type=memory_type)
    if category:
        base = base.filter(category=category)
    if priority:
        base = base.filter(priority=priority)
    strict = bool(resolution.entities)
    if strict:
        base = base.mentioning(entity.pk for entity in resolution.entities)
    if exclude_ids:
        base = base.exclude(pk__in=exclude_ids)
    if scope is not None:  # a caller's own restriction, e.g. a project's memories plus team-wide ones
        base = base.filter(pk__in=scope.values("pk"))
    filtered = strict or scope is not None or bool(memory_type or category or priority or exclude_ids)

    n = max(setting("SEARCH_CANDIDATES_MIN"), setting("SEARCH_CANDIDATES_PER_RESULT") * limit)
    detect = mode == "full" and not strict
    candidates, detected = gather_candidates(
        base,
        query,
        n,
        lists=("lexical",) if mode == "fts" else ("vector",) if mode == "vector" else ("vector", "lexical"),
        exact=filtered,
        detect=detect,
    )
    outcome.detected_entities = detected.entities
    outcome.intent_types = boosted = intent_types(query) if mode == "full" else []
    hits = []
    for candidate in candidates:
        scored = score_candidate(candidate, mode=mode, boosted=boosted, strict=strict, now=now)
        if scored is not None:
            hits.append(SearchHit(candidate.memory, *scored))
    hits.sort(key=lambda hit: (-hit.score, str(hit.memory.pk)))
    if any(candidate.entity_match for candidate in candidates):
        # Memories about the entities the question names come first; the rest fill the limit.
        hits.sort(key=lambda hit: not hit.explain["entity_match"])
    outcome.results = hits[:limit]
    if record and outcome.results:
        record_retrieval(outcome.results, session, now)
    return outcome


@dataclass
class Candidate:
    memory: Memory
    similarity: float
    vector_rank: int | None
    lexical_rank: int | None
    lexical_score: float | None
    lexical_coverage: float = 0.0
    entity_match: bool = False


def gather_candidates(
    base, query: str, n: int, *, lists=("vector", "lexical"), exact: bool = False, detect: bool = False
) -> tuple[list[Candidate], entity_service.Detected]:
    """The top ``n`` of each candidate list, with every feature the scoring needs."""
    # The query is embedded on another thread while the database ranks it lexically.
    pending_vector = _embedder_thread.submit(embeddings.encode_one, query)
    with transaction.atomic():
        lexical = lexical_candidates(base, query, n) if "lexical" in lists else []
        vector = pending_vector.result()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true)", [str(max(n, setting("HNSW_EF_SEARCH")))]
            )
        vector_ids = (
            list(base.nearest(vector, n, exact=exact).values_list("pk", flat=True))
            if "vector" in lists
            else []
        )
    vector_rank = {pk: rank for rank, pk in enumerate(vector_ids, start=1)}
    lexical_rank = {pk: rank for rank, (pk, _, _) in enumerate(lexical, start=1)}
    lexical_score = {pk: (score, coverage) for pk, score, coverage in lexical}
    # Similarity is computed by the database: shipping 384 floats per candidate back costs more.
    memories = {
        m.pk: m
        for m in Memory.objects.filter(pk__in=set(vector_rank) | set(lexical_rank))
        .defer("embedding", "search_vector")
        .annotate(distance=CosineDistance("embedding", vector))
    }
    detected = entity_service.detect_in_text(query) if detect else entity_service.Detected()
    if not memories:
        return [], detected
    ids = list(memories)
    similarity = {pk: 1.0 - memories[pk].distance for pk in ids}
    entity_matched: set = set()
    if detected.entities:
        entity_matched = set(
            Memory.objects.filter(pk__in=ids, mentions__entity__in=detected.entities).values_list(
                "pk", flat=True
            )
        )
    candidates = [
        Candidate(
            memory=memories[pk],
            similarity=similarity[pk],
            vector_rank=vector_rank.get(pk),
            lexical_rank=lexical_rank.get(pk),
            lexical_score=lexical_score[pk][0] if pk in lexical_score else None,
            lexical_coverage=lexical_score[pk][1] if pk in lexical_score else 0.0,
            entity_match=pk in entity_matched,
        )
        for pk in ids
    ]
    return candidates, detected


def score_candidate(candidate: Candidate, *, mode: str, boosted: list[str], strict: bool, now: datetime):
    """``(score, explain)`` for one candidate, or None when it falls below the similarity floor.

    relevance = similarity + LEXICAL_WEIGHT × coverage^LEXICAL_COVERAGE_POWER; in ``full`` mode it
    is multiplied by each factor raised to its RANKING_EXPONENTS entry."""
    memory = candidate.memory
    explain = {
        "vector_rank": candidate.vector_rank,
        "similarity": round(candidate.similarity, 4),
        "lexical_rank": candidate.lexical_rank,
        "lexical_score": round(candidate.lexical_score, 4) if candidate.lexical_score is not None else None,
        "lexical_coverage": round(candidate.lexical_coverage, 4),
        "entity_match": candidate.entity_match,
    }
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
        lexical = setting("LEXICAL_WEIGHT") * candidate.lexical_coverage ** setting("LEXICAL_COVERAGE_POWER")
        score = max(candidate.similarity, 0.0) + lexical
        explain["relevance"] = round(score, 6)
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
            for name, value in factors.items():
                explain[name] = round(value, 4)
                score *= applied[name]
            explain["applied"] = {name: round(value, 4) for name, value in applied.items()}
    explain["score"] = round(score, 6)
    return score, explain


def record_retrieval(hits: list[SearchHit], session: Session | None, now: datetime) -> None:
    """Count the retrieval (it never changes a score) and remember what a session was shown."""
    ids = [hit.memory.pk for hit in hits]
    Memory.objects.filter(pk__in=ids).update(retrieval_count=F("retrieval_count") + 1, last_retrieved_at=now)
    if session is not None:
        Recall.objects.bulk_create(
            [
                Recall(session=session, memory=hit.memory, rank=rank, score=hit.score, surfaced_at=now)
                for rank, hit in enumerate(hits, start=1)
            ],
            ignore_conflicts=True,  # shown before in this session: the first showing stands
        )
