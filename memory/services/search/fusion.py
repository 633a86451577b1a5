"""Fusion: a candidate's base relevance from its similarity and its BM25 score (FUSION_METHOD,
docs/ranking.md). The default, ``adaptive``, mixes the two with a weight α read from the question and
the candidates: words decide when the question names something the memories' words know, meaning
decides when no memory covers much of the question (a paraphrase), and in between α follows the best
word match's coverage."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from memory.conf import setting
from memory.services.search.candidates import Candidate


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
