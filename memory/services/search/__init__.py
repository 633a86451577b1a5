"""Search, the "smart find" (DESIGN.md §4.4), in the order it runs (:func:`memory_search`):

1. ``query``: the input is checked. Explicit entities resolve (strict filter; ambiguity →
   CLARIFICATION_REQUIRED); known entities named in the query are detected (their memories get
   ENTITY_MATCH_BOOST within the one ordering).
2. ``candidates``: top-N by cosine similarity (``vector``: HNSW) and top-N by a BM25 ranking of the
   query's lexemes, any of which may match (``lexical``), N = max(SEARCH_CANDIDATES_MIN,
   SEARCH_CANDIDATES_PER_RESULT × limit), from servable memories only; a vector list the lexical
   one shows stranded is run again (the rescue). Both lists are written around one compiled
   statement (``statements``), and BM25 reads what the team's corpus holds (``corpus``).
3. ``fusion``: the base relevance fuses the two (FUSION_METHOD, default ``adaptive``):
   ``α × similarity min-max normalised over the candidates + (1 − α) × BM25 / best BM25``, where α
   leans lexical (FUSION_ALPHA_MIN) when the question names someone or something exactly that the
   memories' words know, and semantic (FUSION_ALPHA_MAX) when no memory covers much of the
   question's words — a paraphrase; in between it follows the best match's coverage
   (FUSION_COVERAGE_RANGE), reaching FUSION_ALPHA_MIN only when a memory holds every word.
4. ``scoring``: vector-only candidates below the similarity floor are dropped;
   ``final = relevance × Π factor^RANKING_EXPONENTS[factor]`` over type weight, intent boost,
   feedback score, decay and maturity, × ENTITY_MATCH_BOOST for a memory about a named entity.
5. ``late`` (LATE_RERANK_ENABLED, on by default): in ``full`` mode, when words decide the fusion (α
   at most LATE_RERANK_MAX_ALPHA), the question's token vectors score each of the
   LATE_RERANK_CANDIDATES most relevant memories' kept token vectors (MaxSim), which reorders them
   within the span of relevance they had; the factors multiply the new relevance. ``rerank``
   (RERANK_ENABLED, off by default) does the same with a cross-encoder reading question and memory
   together, in its place when on: better ordered, ten times the cost — or, with RERANK_AFTER_LATE,
   after it, rereading only the first few of the late stage's order (:func:`second_stage`).
6. ``results``: the top ``limit`` in score order with an ``explain`` of every factor, read whole.
7. ``record``: retrieval counted; Recall rows written for a session.

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

import logging
from dataclasses import replace
from datetime import datetime

from django.utils import timezone

from memory.conf import setting
from memory.models import Memory, Session, Team
from memory.services import entities as entity_service
from memory.services import team_indexes
from memory.services.errors import NotFound
from memory.services.redaction import redact
from memory.services.search import late
from memory.services.search.candidates import gather_candidates, rescued_vector_candidates
from memory.services.search.corpus import (
    CorpusStats,
    _corpus,
    clear_corpus_stats,
    corpus_stats,
    document_frequencies,
    several_teams,
)
from memory.services.search.fusion import FusionContext, fused_relevance, fusion_context, names_things
from memory.services.search.lexical import TERM_COUNT_SQL, lexical_candidates
from memory.services.search.query import MODES, _validate, intent_types
from memory.services.search.record import record_retrieval
from memory.services.search.rerank import Reranked, RerankerUnavailable, rerank, reranked_relevance
from memory.services.search.results import SearchHit, SearchOutcome, memories_as_shown, with_whole_rows
from memory.services.search.scoring import score_candidate
from memory.services.search.statements import (
    Searched,
    _word_index_plans,
    estimated_rows,
    searched,
    servable_searched,
    tsquery_any,
    vector_text,
)
from memory.services.search.vector import vector_candidates, vector_list_stranded

logger = logging.getLogger(__name__)

# What callers import from ``memory.services.search`` (the API, the dashboard, context, backup, the
# benchmarks and the tests, which also reach into the corpus cache and the lexical plan settings).
__all__ = [
    "MODES",
    "TERM_COUNT_SQL",
    "CorpusStats",
    "FusionContext",
    "SearchHit",
    "SearchOutcome",
    "Searched",
    "_corpus",
    "_word_index_plans",
    "clear_corpus_stats",
    "corpus_stats",
    "document_frequencies",
    "estimated_rows",
    "gather_candidates",
    "intent_types",
    "lexical_candidates",
    "memories_as_shown",
    "memory_search",
    "names_things",
    "record_retrieval",
    "rescued_vector_candidates",
    "searched",
    "servable_searched",
    "several_teams",
    "tsquery_any",
    "vector_candidates",
    "vector_list_stranded",
    "vector_text",
    "with_whole_rows",
]


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
    reranked = (
        second_stage(query, [candidate for _, _, candidate in scored], fusion, team) if mode == "full" else {}
    )
    if reranked:
        scored = [
            (score_candidate(candidate, **rules, explain=False, reranked=reranked[pk])[0], pk, candidate)
            if pk in reranked
            else (score, pk, candidate)
            for score, pk, candidate in scored
        ]
    # One ordering: a memory about an entity the question names is boosted, not put in a group above.
    scored.sort(key=lambda item: (-item[0], item[1]))
    hits = [
        SearchHit(candidate.memory, *score_candidate(candidate, **rules, reranked=reranked.get(pk)))
        for _, pk, candidate in scored[:limit]
    ]
    outcome.results = with_whole_rows(hits, team_id=team.pk)
    if record and outcome.results:
        record_retrieval(outcome.results, session, now, team=team)
    return outcome


def second_stage(query: str, candidates: list, fusion: FusionContext, team: Team) -> dict[str, Reranked]:
    """The new relevance of the candidates the second stage rereads, by memory id. The
    cross-encoder (RERANK_ENABLED; rerank.py) when it is on, else — or when it cannot be loaded —
    the late-interaction stage (LATE_RERANK_ENABLED; late.py). With both on and RERANK_AFTER_LATE
    set, the late stage orders its candidates and the cross-encoder rereads only the first
    RERANK_AFTER_LATE of that order: most of the cross-encoder's ordering for a fraction of its cost
    (docs/ranking.md)."""
    cross, late_on = setting("RERANK_ENABLED"), setting("LATE_RERANK_ENABLED")
    after_late = setting("RERANK_AFTER_LATE") if cross and late_on else 0
    if cross and not after_late and (reranked := reranked_candidates(query, candidates, fusion, team)):
        return reranked
    if not late_on:
        return {}
    reranked = late_reranked_candidates(query, candidates, fusion, team)
    if reranked and after_late:
        return reread_after_late(query, reranked, after_late, team)
    return reranked


def reread_after_late(
    query: str, late_order: dict[str, Reranked], depth: int, team: Team
) -> dict[str, Reranked]:
    """``late_order`` with its first ``depth`` candidates reordered by the cross-encoder within the
    span of relevance the late stage gave them, each keeping the late stage's record (``earlier``)
    for its explain. A cross-encoder that cannot be loaded leaves the late stage's order."""
    chosen = sorted(late_order, key=lambda pk: (-late_order[pk].relevance, pk))[:depth]
    texts = _contents(chosen, team)
    chosen = [pk for pk in chosen if pk in texts]
    if len(chosen) < 2:
        return late_order
    try:
        decided = rerank(query, [late_order[pk].relevance for pk in chosen], [texts[pk] for pk in chosen])
    except RerankerUnavailable as exc:
        logger.warning("search without its cross-encoder after the late stage: %s", exc)
        return late_order
    return late_order | {
        pk: replace(found, earlier=late_order[pk]) for pk, found in zip(chosen, decided, strict=True)
    }


def _contents(ids: list[str], team: Team) -> dict[str, str]:
    """The text of each of the team's memories ``ids``, by id (another team's are not found)."""
    rows = Memory.objects.for_team(team).filter(pk__in=ids).values_list("pk", "content")
    return {str(pk): content for pk, content in rows}


def _most_relevant(candidates: list, fusion: FusionContext, depth: int) -> tuple[list[str], dict[str, float]]:
    """The ``depth`` candidates of highest fused relevance (their ids, best first) and every
    candidate's fused relevance by id."""
    relevance = {str(c.memory.pk): fused_relevance(c, fusion, explain=False)[0] for c in candidates}
    return sorted(relevance, key=lambda pk: (-relevance[pk], pk))[:depth], relevance


def late_reranked_candidates(
    query: str, candidates: list, fusion: FusionContext, team: Team
) -> dict[str, Reranked]:
    """The late-interaction stage for the LATE_RERANK_CANDIDATES candidates of highest fused
    relevance: their new relevance by memory id, their MaxSim scores mapped onto the span of
    relevance they had (:func:`rerank.reranked_relevance`, all weight on the scores). Like the
    cross-encoder it runs only where words decide the fusion (α at most LATE_RERANK_MAX_ALPHA). A
    model that cannot be loaded leaves the first stage's order, with a warning in the log."""
    if fusion.alpha > setting("LATE_RERANK_MAX_ALPHA"):
        return {}
    chosen, relevance = _most_relevant(candidates, fusion, setting("LATE_RERANK_CANDIDATES"))
    if len(chosen) < 2:
        return {}
    try:
        scores = late.candidate_scores(query, chosen, team.pk)
    except late.LateModelUnavailable as exc:
        logger.warning("search without its late-interaction stage: %s", exc)
        return {}
    chosen = [pk for pk in chosen if pk in scores]
    if len(chosen) < 2:
        return {}
    before = [relevance[pk] for pk in chosen]
    after = reranked_relevance(before, [scores[pk] for pk in chosen], 1.0)
    return {
        pk: Reranked(new, scores[pk], old, stage="late")
        for pk, new, old in zip(chosen, after, before, strict=True)
    }


def reranked_candidates(
    query: str, candidates: list, fusion: FusionContext, team: Team
) -> dict[str, Reranked]:
    """The second stage for the RERANK_CANDIDATES candidates of highest fused relevance: their new
    relevance by memory id (:mod:`memory.services.search.rerank`). It runs only where words decide
    the fusion (α at most RERANK_MAX_ALPHA): the cross-encoder reads the words question and memory
    share, and on paraphrases, which share few, it ordered worse than meaning alone. A model that
    cannot be loaded leaves the first stage's order, with a warning in the log."""
    if fusion.alpha > setting("RERANK_MAX_ALPHA"):
        return {}
    chosen, relevance = _most_relevant(candidates, fusion, setting("RERANK_CANDIDATES"))
    if len(chosen) < 2:
        return {}
    texts = _contents(chosen, team)
    chosen = [pk for pk in chosen if pk in texts]
    try:
        decided = rerank(query, [relevance[pk] for pk in chosen], [texts[pk] for pk in chosen])
    except RerankerUnavailable as exc:
        logger.warning("search without its second stage: %s", exc)
        return {}
    return dict(zip(chosen, decided, strict=True))
