"""What a search returns: its hits in score order, each with its ``explain``, read as whole memories
(with what a result shows of their author and session) by one statement."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.models import Entity, Memory
from memory.rows import row_reader


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
