"""The second wall (issue 41, point 4): a raw query that forgets the team filter, run while acting
for a team, returns and changes nothing of another team."""

from __future__ import annotations

import uuid

import pytest
from django.db import DatabaseError, connection, transaction

from memory.models import Memory
from memory.services.store import memory_store
from memory.services.teams import acting_for, row_security_available


@pytest.fixture
def two_teams(embedder, team, other_team, member, outsider):
    ours = memory_store(team=team, author=member, content="Acme rotates the vault key on the 3rd.").memory
    theirs = memory_store(
        team=other_team, author=outsider, content="Globex rotates the vault key on the 5th."
    ).memory
    return ours, theirs


def raw(sql: str, params=()) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else cursor.rowcount


def test_the_database_has_the_wall(db):
    assert row_security_available()
    rows = raw("SELECT relname FROM pg_class WHERE relrowsecurity AND relname LIKE 'memory_%%' ORDER BY 1")
    assert {name for (name,) in rows} >= {
        "memory_memory",
        "memory_entity",
        "memory_session",
        "memory_feedbackevent",
        "memory_tokenvectors",
    }


def test_a_raw_query_without_a_team_filter_sees_only_the_team_acted_for(two_teams, team):
    ours, theirs = two_teams
    with acting_for(team):
        seen = raw("SELECT id FROM memory_memory")
        mentions = raw("SELECT count(*) FROM memory_memory WHERE content LIKE '%%Globex%%'")
    assert [pk for (pk,) in seen] == [ours.pk]
    assert mentions == [(0,)]
    # The owner account (commands, migrations) is not bound: both rows are there.
    assert {pk for (pk,) in raw("SELECT id FROM memory_memory")} == {ours.pk, theirs.pk}


def test_a_raw_update_or_delete_of_another_teams_rows_changes_nothing(two_teams, team):
    _, theirs = two_teams
    with acting_for(team):
        assert raw("UPDATE memory_memory SET content = 'pwned' WHERE id = %s", [theirs.pk]) == 0
        assert raw("DELETE FROM memory_memory WHERE id = %s", [theirs.pk]) == 0
    assert Memory.objects.get(pk=theirs.pk).content.startswith("Globex")


def test_a_raw_insert_into_another_team_is_refused(two_teams, team, other_team):
    ours, _ = two_teams
    with acting_for(team), pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
        raw(
            "UPDATE memory_memory SET team_id = %s WHERE id = %s",
            [other_team.pk, ours.pk],
        )
    assert Memory.objects.get(pk=ours.pk).team_id == team.pk


def test_the_application_can_still_work_inside_the_wall(two_teams, team, member, embedder):
    from memory.services.search import memory_search

    with acting_for(team):
        stored = memory_store(team=team, author=member, content="Acme deploys on Tuesdays only.").memory
        found = memory_search(team=team, query="vault key rotation day")
    assert stored.team_id == team.pk
    assert [hit.memory.content for hit in found.results][:1] == ["Acme rotates the vault key on the 3rd."]
    assert uuid.UUID(str(stored.pk))


def test_the_search_reads_as_the_owner_and_hands_the_wall_back(two_teams, team):
    """A search's candidate statements run outside the policy (the words' GIN index serves them only
    there), written around the team's memories; the wall is back for the next statement, also
    after one of them failed."""
    from memory.services.search import memory_search
    from memory.services.teams import WALL_ROLE, as_table_owner

    ours, _ = two_teams
    with transaction.atomic(), acting_for(team):
        found = memory_search(team=team, query="when is the vault key rotated?", record=False)
        assert [hit.memory.pk for hit in found.results] == [ours.pk]
        assert raw("SELECT current_user")[0][0] == WALL_ROLE
        with as_table_owner():
            assert raw("SELECT current_user")[0][0] != WALL_ROLE
        assert raw("SELECT current_user")[0][0] == WALL_ROLE
        with pytest.raises(DatabaseError), transaction.atomic(), as_table_owner():
            raw("SELECT 1 / 0")
        assert raw("SELECT current_user")[0][0] == WALL_ROLE
        assert [pk for (pk,) in raw("SELECT id FROM memory_memory")] == [ours.pk]
