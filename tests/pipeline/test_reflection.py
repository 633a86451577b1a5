"""Reflection (§4.9): near-duplicate observations become one playbook bullet with sources."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory.models import Kind, Memory, TaskRun
from memory.services.context import context_build
from memory.services.reflection import clusters_of, lock_key, reflection_queue, reflection_run
from memory.services.store import memory_store_batch
from tests.llm_server import fake_llm

pytestmark = pytest.mark.usefixtures("embedder")

MIGRATIONS = [
    "Run the database migrations before starting the web server.",
    "Always run database migrations before you start the web server.",
    "Apply the database migrations first, then start the web server.",
]
UNRELATED = [
    "The billing worker retries failed charges three times with exponential backoff.",
    "Use the design system's Button component instead of raw button elements.",
]


def store(team, contents, **fields):
    return [
        r.memory
        for r in memory_store_batch(
            [{"content": c, "category": "workflow", **fields} for c in contents], team=team, dedupe=False
        )
    ]


@pytest.fixture
def observations(team):
    cluster = store(team, MIGRATIONS[:1], entities=["project:shop"], tags=["db"], priority="critical")
    cluster += store(team, MIGRATIONS[1:], entities=["feature:deploy"], tags=["deploy"])
    unrelated = store(team, UNRELATED)
    return cluster, unrelated


def test_a_cluster_of_near_duplicates_becomes_one_reflection_and_unrelated_ones_stay(observations, team):
    cluster, unrelated = observations
    report = reflection_run(team=team)
    assert report.observations == 5 and report.clusters == 1 and len(report.created) == 1
    reflection = Memory.objects.get(pk=report.created[0])
    assert reflection.kind == Kind.REFLECTION and reflection.content in MIGRATIONS  # the medoid
    assert set(reflection.sources.all()) == set(cluster)
    assert reflection.priority == "critical" and set(reflection.tags) == {"db", "deploy"}
    assert reflection.team == team and report.teams == ["acme"]
    slugs = set(reflection.mentions.values_list("entity__slug", flat=True))
    assert {"project:shop", "feature:deploy"} <= slugs
    assert set(reflection.mentions.values_list("team_id", flat=True)) == {team.pk}
    for memory in cluster:
        memory.refresh_from_db()
        assert memory.condensed_into == reflection and memory.status == "active"  # still searchable
    for memory in unrelated:
        memory.refresh_from_db()
        assert memory.condensed_into is None
    assert report.condensed == 3


def test_a_second_run_changes_nothing(observations):
    reflection_run()
    before = list(Memory.objects.order_by("pk").values_list("pk", "condensed_into", "updated_at"))
    again = reflection_run()
    assert again.clusters == 0 and again.created == [] and again.merged == []
    assert list(Memory.objects.order_by("pk").values_list("pk", "condensed_into", "updated_at")) == before


def test_a_new_cluster_matching_an_existing_reflection_is_merged_into_it(observations, team):
    (first,) = reflection_run().created
    later = store(
        team,
        [
            "Run the database migrations before starting the web server!",
            "Always run the database migrations before starting the web server.",
        ],
        tags=["ops"],
    )
    report = reflection_run()
    assert report.created == [] and report.merged == [first]
    reflection = Memory.objects.get(pk=first)
    assert set(later) <= set(reflection.sources.all()) and "ops" in reflection.tags
    assert Memory.objects.reflections().count() == 1


def test_the_earlier_of_two_rewordings_becomes_the_bullet_whatever_the_rounding():
    # Two members are always tied (each is the other's neighbour): a norm off by 1e-6 must not decide.
    import numpy as np

    first = np.array([1.0, 0.0], dtype=np.float32)
    second = np.array([0.9, 0.43589], dtype=np.float32)
    for vectors in (np.stack([first, second * (1 + 1e-6)]), np.stack([first * (1 + 1e-6), second])):
        (cluster,) = clusters_of(["first", "second"], vectors, threshold=0.8, min_size=2)
        assert cluster.members[cluster.medoid] == "first"


def test_observations_older_than_the_window_are_left_alone(team):
    old = store(team, MIGRATIONS)
    Memory.objects.filter(pk__in=[m.pk for m in old]).update(created_at=timezone.now() - timedelta(days=30))
    assert reflection_run().observations == 0


def test_the_llm_summary_becomes_the_bullet_and_garbage_falls_back_to_the_medoid(observations, settings):
    summary = "Run the database migrations before starting the web server (every environment)."
    with fake_llm([{"summary": summary}]) as server:
        settings.LLM_URL = server.url
        report = reflection_run()
    assert report.summarizer == "llm" and Memory.objects.get(pk=report.created[0]).content == summary
    assert "Always run database migrations" in server.requests[0]["body"]["messages"][1]["content"]

    Memory.objects.reflections().delete()
    Memory.objects.update(condensed_into=None)
    with fake_llm([{"answer": 42}]) as server:
        settings.LLM_URL = server.url
        report = reflection_run()
    assert report.summarizer == "medoid" and "summary" in report.llm_error
    assert Memory.objects.get(pk=report.created[0]).content in MIGRATIONS


def test_context_prefers_the_reflection_over_its_observations(observations, team):
    cluster, _ = observations
    (reflection_id,) = reflection_run().created
    result = context_build(team=team, query="migrations before the web server", record=False)
    ids = [str(item.memory.pk) for item in result.items]
    assert reflection_id in ids
    assert not {str(m.pk) for m in cluster} & set(ids)


def test_the_reflect_command_reports_and_records_a_run(observations, capsys):
    call_command("reflect")
    out = capsys.readouterr().out
    assert "Looked at 5 observations: 1 clusters, 1 new reflections" in out and "Teams: acme." in out
    run = TaskRun.objects.get()
    assert run.task == "reflect" and run.status == "done" and run.percent == 100
    assert run.team is None  # no --team: every team
    assert run.summary["condensed"] == 3


def test_run_now_queues_a_run_the_dashboard_can_follow(db, curator, team):
    run = reflection_queue(team=team, user=curator)
    assert run.status == "queued" and run.triggered_by == curator and run.percent == 0
    assert run.team == team


@pytest.mark.django_db(transaction=True)
def test_a_second_run_while_one_is_in_progress_does_nothing(test_database_url, team):
    import psycopg

    store(team, MIGRATIONS)
    with psycopg.connect(test_database_url) as other:  # another worker's run holds the team's lock
        other.execute("SELECT pg_advisory_lock(%s)", [lock_key(team)])
        report = reflection_run(team=team)
        assert report.skipped == "another reflection run is in progress" and report.created == []
        other.execute("SELECT pg_advisory_unlock(%s)", [lock_key(team)])
    assert len(reflection_run(team=team).created) == 1


def test_the_decay_command_records_its_run(team, capsys):
    store(team, MIGRATIONS[:1])
    call_command("decay")
    assert "Examined 1 memories" in capsys.readouterr().out
    run = TaskRun.objects.get(task="decay")
    assert run.status == "done" and run.summary["examined"] == 1 and run.finished_at is not None
