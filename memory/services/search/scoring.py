"""Scoring: a candidate's final score and its ``explain``. A vector-only candidate below the
similarity floor is dropped; the fused relevance is, in ``full`` mode, multiplied by the re-ranking
factors (type weight, intent boost, feedback score, decay, maturity, each raised to its
RANKING_EXPONENTS entry) and by ENTITY_MATCH_BOOST for a memory about an entity the question
names."""

from __future__ import annotations

from datetime import datetime

from memory.conf import setting
from memory.services.decay import decay_factor
from memory.services.maturity import multiplier as maturity_multiplier
from memory.services.search.candidates import Candidate
from memory.services.search.fusion import FusionContext, fused_relevance, fusion_context
from memory.services.search.rerank import Reranked
from memory.services.taxonomy import type_weight


def score_candidate(
    candidate: Candidate,
    *,
    mode: str,
    boosted: list[str],
    strict: bool,
    now: datetime,
    fusion: FusionContext | None = None,
    explain: bool = True,
    reranked: Reranked | None = None,
) -> tuple[float, dict | None] | None:
    """``(score, explanation)`` for one candidate, or None when it falls below the similarity floor;
    the explanation is None unless ``explain``.

    The relevance fuses similarity and BM25 (:func:`fused_relevance`), or is the second stage's
    (``reranked``, :mod:`memory.services.search.rerank`) for a reranked candidate; in ``full`` mode it is
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
        if reranked is not None:
            score = reranked.relevance
            for stage in (reranked.earlier, reranked):
                if stage is not None and stage.stage == "late":
                    parts["late"] = {"maxsim": stage.logit, "relevance_before": stage.before}
                elif stage is not None:
                    parts["rerank"] = {"logit": stage.logit, "relevance_before": stage.before}
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
    for stage in ("rerank", "late"):
        if stage in parts:
            explained[stage] = {name: round(value, 4) for name, value in parts[stage].items()}
    if "factors" in parts:
        explained.update({name: round(value, 4) for name, value in parts["factors"].items()})
        explained["applied"] = {name: round(value, 4) for name, value in parts["applied"].items()}
    explained["score"] = round(score, 6)
    return explained
