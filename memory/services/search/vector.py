"""The vector candidate list: the memories nearest the question's vector, through the HNSW index
(ef_search raised so that enough rows pass a filter; at its widest for a rescue) or an exact scan
when a filter leaves few memories, and the check that tells an index scan stranded in the wrong
region of the graph from a healthy one (the rescue itself runs where both lists meet:
:mod:`candidates`)."""

from __future__ import annotations

import math

from django.db import connection

from memory.conf import setting
from memory.services.search.corpus import corpus_stats, table_rows
from memory.services.search.statements import estimated_rows, searched


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
