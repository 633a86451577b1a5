"""A team's own search indexes (memory.services.team_indexes): decided by a pure rule, built and
dropped by the beat's task or ``manage.py team_indexes``, picked by PostgreSQL for the team's search,
and never holding another team's memory."""

from __future__ import annotations

import io
import random

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory import embeddings
from memory.models import Memory, Team
from memory.services import search, team_indexes
from memory.services.search import memory_search
from memory.services.store import memory_store_batch
from memory.services.team_indexes import (
    IndexPlan,
    existing_team_indexes,
    index_name,
    planned_team_indexes,
    team_indexes_ensure,
)
from memory.tasks import team_indexes_task


@pytest.fixture(autouse=True)
def fresh_caches():
    search.clear_corpus_stats()
    team_indexes.forget_indexed_teams()
    yield
    search.clear_corpus_stats()
    team_indexes.forget_indexed_teams()


def tune(settings, **values) -> None:
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, **values}


# --- the rule ------------------------------------------------------------------------------------


def test_a_team_gets_its_own_indexes_at_the_minimum_only_when_there_are_several_teams():
    rule = {"min_rows": 100, "keep_rows": 50}
    assert planned_team_indexes({1: 500}, set(), **rule) == IndexPlan()
    assert planned_team_indexes({1: 500, 2: 10}, set(), **rule) == IndexPlan(create=(1,))
    assert planned_team_indexes({1: 100, 2: 99}, set(), **rule) == IndexPlan(create=(1,))


def test_a_team_keeps_its_indexes_until_it_falls_below_the_keeping_line_or_is_alone_or_gone():
    rule = {"min_rows": 100, "keep_rows": 50}
    assert planned_team_indexes({1: 60, 2: 10}, {1}, **rule) == IndexPlan()  # between the lines: kept
    assert planned_team_indexes({1: 49, 2: 10}, {1}, **rule) == IndexPlan(drop=(1,))
    assert planned_team_indexes({1: 5000}, {1}, **rule) == IndexPlan(drop=(1,))  # the only team
    assert planned_team_indexes({1: 5000, 2: 5000}, {1, 3}, **rule) == IndexPlan(create=(2,), drop=(3,))


@hypothesis_settings(max_examples=2000, deadline=None)
@given(
    sizes=st.dictionaries(st.integers(1, 40), st.integers(0, 300), max_size=12),
    indexed=st.sets(st.integers(1, 45), max_size=12),
    min_rows=st.integers(1, 250),
    gap=st.integers(0, 250),
)
def test_the_rule_on_thousands_of_deployments(sizes, indexed, min_rows, gap):
    keep_rows = max(0, min_rows - gap)
    plan = planned_team_indexes(sizes, indexed, min_rows=min_rows, keep_rows=keep_rows)
    after = (set(indexed) - set(plan.drop)) | set(plan.create)
    assert not set(plan.create) & set(indexed) and set(plan.drop) <= set(indexed)
    assert list(plan.create) == sorted(plan.create) and list(plan.drop) == sorted(plan.drop)
    for team in after:  # every team left with indexes exists, is big enough, and is not alone
        assert team in sizes and sizes[team] >= keep_rows and len(sizes) > 1
    for team, rows in sizes.items():  # every team big enough, in a deployment of several, has them
        if rows >= min_rows and len(sizes) > 1:
            assert team in after
    # Applying the plan is a fixed point: the next run changes nothing.
    assert planned_team_indexes(sizes, after, min_rows=min_rows, keep_rows=keep_rows) == IndexPlan()


# --- the database --------------------------------------------------------------------------------

TOPICS = ["caching", "retries", "migrations", "feature flags", "logging", "on-call", "billing", "exports"]
QUESTION = "How long do we keep the webhook retries before giving up?"


def fill(team, count: int, *, marker: str) -> None:
    rng = random.Random(marker)
    memory_store_batch(
        [
            {
                "content": f"For {rng.choice(TOPICS)} in {marker} service {i}, the rule is number {i * 7 + 3}.",
            }
            for i in range(count)
        ],
        team=team,
        dedupe=False,
    )


def used_indexes(sql: str, params) -> set[str]:
    """The indexes PostgreSQL plans ``sql`` with, planned as a search plans it at scale: on a table
    this small it would rather read every row (search._word_index_plans prices a row's test as
    the lexical search does)."""
    with connection.cursor() as cursor, search._word_index_plans(cursor):
        cursor.execute("ANALYZE memory_memory")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
        cursor.execute("RESET enable_sort")
    found = set()

    def walk(node):
        if "Index Name" in node:
            found.add(node["Index Name"])
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return found


@pytest.fixture
def big_and_small(settings, team, other_team):
    """``team`` past the minimum, ``other_team`` below it, with memories nearer the question."""
    tune(settings, TEAM_INDEX_MIN_MEMORIES=30, TEAM_INDEX_KEEP_MEMORIES=15)
    fill(team, 32, marker="acme")
    memory_store_batch(
        [{"content": f"{QUESTION[:-1]}, variant {i} of our answer?"} for i in range(10)],
        team=other_team,
        dedupe=False,
    )
    return team, other_team


def test_the_task_builds_a_big_teams_indexes_and_only_over_its_memories(big_and_small, embedder):
    team, other_team = big_and_small
    result = team_indexes_task()

    assert result["created"] == [team.pk] and result["dropped"] == []
    assert existing_team_indexes() == ({team.pk}, set())
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN (%s, %s) ORDER BY indexname",
            [index_name(team.pk, "hnsw"), index_name(team.pk, "words")],
        )
        definitions = dict(cursor.fetchall())
    assert len(definitions) == 2
    assert all(f"WHERE (team_id = {team.pk})" in text for text in definitions.values())
    assert "hnsw" in definitions[index_name(team.pk, "hnsw")]
    assert "gin" in definitions[index_name(team.pk, "words")]


def test_the_teams_search_reads_its_own_indexes_and_finds_only_its_memories(
    big_and_small, embedder, settings
):
    team, other_team = big_and_small
    team_indexes_ensure()
    base = search.servable_searched(timezone.now(), team_id=team.pk)
    vector = search.vector_text(embeddings.encode_one(QUESTION))
    nearest = f"SELECT s.id FROM ({base.sql}) AS s ORDER BY s.embedding <=> %s::vector LIMIT 10"
    assert index_name(team.pk, "hnsw") in used_indexes(nearest, [*base.params, vector])
    words_sql, words_params = base.matching(search.tsquery_any(["retri"]))
    assert index_name(team.pk, "words") in used_indexes(words_sql, words_params)
    theirs = search.servable_searched(timezone.now(), team_id=other_team.pk)
    assert not {index_name(team.pk, "hnsw"), index_name(team.pk, "words")} & used_indexes(
        f"SELECT s.id FROM ({theirs.sql}) AS s ORDER BY s.embedding <=> %s::vector LIMIT 10",
        [*theirs.params, vector],
    )

    # The team's search plans no team filter for its vectors: its index holds its memories only.
    tune(settings, SEARCH_CANDIDATES_MIN=10, SEARCH_CANDIDATES_PER_RESULT=3)
    outcome = memory_search(team=team, query=QUESTION, limit=3, record=False)
    assert outcome.vector_plan == "hnsw"
    assert outcome.results and {hit.memory.team_id for hit in outcome.results} == {team.pk}
    expected = list(
        Memory.objects.for_team(team).servable().nearest(embeddings.encode_one(QUESTION), 5, exact=True)
    )
    found = memory_search(team=team, query=QUESTION, mode="vector", limit=5, record=False)
    assert [hit.memory.pk for hit in found.results] == [memory.pk for memory in expected]
    # The small team still compares its few memories exactly.
    assert memory_search(team=other_team, query=QUESTION, record=False).vector_plan == "exact"


def test_a_team_that_shrinks_or_is_left_alone_loses_them(big_and_small, settings):
    team, other_team = big_and_small
    team_indexes_ensure()
    Memory.objects.for_team(team).filter(pk__in=Memory.objects.for_team(team).values("pk")[:20]).delete()
    assert team_indexes_ensure().dropped == [team.pk]  # 12 left, below 15
    assert existing_team_indexes() == (set(), set())

    fill(team, 20, marker="acme-again")
    assert team_indexes_ensure().created == [team.pk]
    other_team.delete()
    assert team_indexes_ensure().dropped == [team.pk]  # the only team: the table's indexes serve it


def test_a_dropped_index_the_process_still_believes_in_costs_no_results(big_and_small, embedder):
    team, _ = big_and_small
    team_indexes_ensure()
    assert team_indexes.has_own_indexes(team.pk)
    with connection.cursor() as cursor:  # dropped by another process: this one has not looked again
        cursor.execute(f"DROP INDEX {index_name(team.pk, 'hnsw')}")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
    assert team_indexes.has_own_indexes(team.pk)
    outcome = memory_search(team=team, query=QUESTION, mode="vector", limit=5, record=False)
    expected = list(
        Memory.objects.for_team(team).servable().nearest(embeddings.encode_one(QUESTION), 5, exact=True)
    )
    assert [hit.memory.pk for hit in outcome.results] == [memory.pk for memory in expected]


def test_an_index_a_failed_build_left_invalid_is_built_again(big_and_small):
    team, _ = big_and_small
    team_indexes_ensure()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            [index_name(team.pk, "words")],
        )
    team_indexes.forget_indexed_teams()
    assert existing_team_indexes() == (set(), {index_name(team.pk, "words")})
    assert not team_indexes.has_own_indexes(team.pk)

    report = team_indexes_ensure()
    assert report.repaired == [index_name(team.pk, "words")] and report.created == [team.pk]
    assert existing_team_indexes() == ({team.pk}, set())


def test_the_command_says_what_it_did(big_and_small):
    out = io.StringIO()
    call_command("team_indexes", stdout=out)
    assert out.getvalue().startswith("Own indexes built for 1 teams, dropped for 0")
    out = io.StringIO()
    call_command("team_indexes", stdout=out)
    assert out.getvalue().startswith("Own indexes built for 0 teams, dropped for 0")


def test_a_team_created_empty_has_none(settings, team):
    tune(settings, TEAM_INDEX_MIN_MEMORIES=1, TEAM_INDEX_KEEP_MEMORIES=1)
    Team.objects.create(slug="initech", name="Initech")
    assert team_indexes_ensure().created == []
