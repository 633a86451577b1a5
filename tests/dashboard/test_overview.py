"""The overview: counts, helpful rate, activity, job health, and the figures its charts draw."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from dashboard import charts, stats
from memory.models import MemoryEvent, TaskRun
from memory.services.feedback import feedback_record
from tests.conftest import voter

pytestmark = pytest.mark.usefixtures("embedder")


def test_a_new_install_explains_how_memories_arrive(clients, db):
    html = clients["member"].get("/").content.decode()
    assert "No memories yet" in html and "/api/v1/observations" in html
    assert "No active memories yet." in html and "never" in html  # empty charts and jobs


def test_the_overview_counts_rates_and_lists_activity(clients, team, member, active_memory, quarantined):
    feedback_record(memory=active_memory, signal="helpful", user=member)
    feedback_record(memory=active_memory, signal="irrelevant", user=member)
    TaskRun.objects.create(task="decay", status="failed", error="disk full", team=team)
    html = clients["member"].get("/").content.decode()
    assert "50%" in html and "1 of 2 ratings" in html
    assert "disk full" in html and "quarantined" in html
    assert "<svg" in html and 'role="img"' in html and "Show the numbers" in html
    assert active_memory.content[:40] in html  # recent activity


def test_helpful_rate_counts_the_last_30_days(team, member, active_memory):
    feedback_record(memory=active_memory, signal="helpful", user=member)
    feedback_record(
        memory=active_memory, signal="harmful", user=member, created_at=timezone.now() - timedelta(days=40)
    )
    rate = stats.helpful_rate(team)
    assert (rate["total"], rate["helpful"], rate["rate"]) == (1, 1, 100)


def test_feedback_by_day_buckets_signals(team, member, active_memory):
    feedback_record(
        memory=active_memory, signal="helpful", user=member, created_at=timezone.now() - timedelta(days=2)
    )
    feedback_record(memory=active_memory, signal="harmful", user=member)
    labels, series = stats.feedback_by_day(team, days=30)
    assert len(labels) == 30 and series["helpful"][27] == 1 and series["harmful"][29] == 1


def test_maturity_by_week_replays_the_audit_log(team, member, active_memory):
    just_after_three_weeks_ago = timezone.now() - timedelta(weeks=3) + timedelta(days=1)
    type(active_memory).objects.filter(pk=active_memory.pk).update(
        created_at=timezone.now() - timedelta(weeks=5)
    )
    for index in range(3):
        feedback_record(memory=active_memory, signal="helpful", user=voter(index, team))
    MemoryEvent.objects.filter(memory=active_memory, action="maturity").update(
        created_at=just_after_three_weeks_ago
    )
    labels, series = stats.maturity_by_week(team, weeks=6)
    assert series["candidate"] == [1, 1, 1, 0, 0, 0]
    assert series["established"] == [0, 0, 0, 1, 1, 1]


def test_nice_axis_maxima():
    assert [charts.nice_max(v) for v in (0, 1, 3, 7, 12, 480)] == [1, 1, 5, 10, 20, 500]


def test_stacked_columns_are_proportional_and_stack_upwards():
    chart = charts.stacked_columns(["a", "b"], {"x": [2, 0], "y": [2, 5]}, width=200, height=100)
    a, b = chart.columns
    assert a.total == 4 and b.total == 5 and not chart.empty
    x, y = a.segments
    assert x.height == pytest.approx(y.height) and y.y < x.y  # the second series sits on the first
    assert b.segments[0].height == pytest.approx(2.5 * x.height)
    assert [s.name for s in b.segments] == ["y"]  # zero values draw nothing


def test_an_all_zero_chart_is_empty():
    assert charts.stacked_columns(["a"], {"x": [0]}).empty
    assert charts.horizontal_bars([("gotcha", 0)]).empty
