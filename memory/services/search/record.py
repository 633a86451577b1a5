"""The retrieval record: a search counts each result's retrieval (which never changes a score) and,
for a session, remembers what the session was shown (its Recall rows), of the team's memories
only."""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from memory.models import Memory, Recall, Session, Team
from memory.services.errors import NotFound
from memory.services.search.results import SearchHit


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
