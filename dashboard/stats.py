"""Read-only figures for the overview page: counts, rates and the series its charts draw — each of
one team's rows only."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.db.models import Count, Q
from django.utils import timezone

from memory.models import (
    Category,
    ExtractionStatus,
    FeedbackEvent,
    Maturity,
    Memory,
    MemoryEvent,
    Session,
    Signal,
    Status,
    TaskName,
    TaskRun,
)


def counts_by(queryset, field: str, choices) -> list[tuple[str, int]]:
    found = dict(queryset.values_list(field).annotate(n=Count("pk")).values_list(field, "n"))
    return [(value, found.get(value, 0)) for value in choices.values]


def helpful_rate(team, days: int = 30, now: datetime | None = None) -> dict:
    """Share of the team's feedback in the last ``days`` that was helpful (explicit and implicit)."""
    since = (now or timezone.now()) - timedelta(days=days)
    counts = dict(
        FeedbackEvent.objects.for_team(team)
        .filter(created_at__gte=since)
        .values_list("signal")
        .annotate(n=Count("pk"))
        .values_list("signal", "n")
    )
    total = sum(counts.values())
    helpful = counts.get(Signal.HELPFUL, 0)
    return {
        "days": days,
        "total": total,
        "helpful": helpful,
        "harmful": counts.get(Signal.HARMFUL, 0),
        "irrelevant": counts.get(Signal.IRRELEVANT, 0),
        "rate": round(100 * helpful / total) if total else None,
    }


def feedback_by_day(
    team, days: int = 30, now: datetime | None = None
) -> tuple[list[str], dict[str, list[int]]]:
    today = (now or timezone.now()).date()
    start = today - timedelta(days=days - 1)
    dates = [start + timedelta(days=i) for i in range(days)]
    index = {d: i for i, d in enumerate(dates)}
    series = {signal: [0] * days for signal in Signal.values}
    events = (
        FeedbackEvent.objects.for_team(team)
        .filter(created_at__date__gte=start)
        .values_list("created_at", "signal")
    )
    for created_at, signal in events:
        day = timezone.localtime(created_at).date()
        if day in index:
            series[signal][index[day]] += 1
    return [d.strftime("%b %d") for d in dates], series


def maturity_by_week(
    team, weeks: int = 12, now: datetime | None = None
) -> tuple[list[str], dict[str, list[int]]]:
    """How many of the team's active memories of today were at each maturity at the end of each of the last
    ``weeks`` weeks, replayed from the audit log's maturity changes."""
    now = now or timezone.now()
    ends = [now - timedelta(weeks=weeks - 1 - i) for i in range(weeks)]
    memories = list(Memory.objects.for_team(team).active().values_list("pk", "created_at", "maturity"))
    changes: dict = defaultdict(list)
    for memory_id, created_at, diff in (
        MemoryEvent.objects.for_team(team)
        .filter(memory__status=Status.ACTIVE, diff__has_key="maturity")
        .order_by("created_at", "pk")
        .values_list("memory_id", "created_at", "diff")
    ):
        before_after = diff.get("maturity")
        if isinstance(before_after, list) and len(before_after) == 2:
            changes[memory_id].append((created_at, before_after[0], before_after[1]))
    series = {maturity: [0] * weeks for maturity in Maturity.values}
    for memory_id, created_at, current in memories:
        history = changes.get(memory_id, [])
        for i, end in enumerate(ends):
            if created_at > end:
                continue
            state = history[0][1] if history else current
            for at, _, after in history:
                if at > end:
                    break
                state = after
            if state in series:
                series[state][i] += 1
    return [end.strftime("%b %d") for end in ends], series


def task_health(team) -> dict:
    """The latest run of each job the team sees (its own, or a scheduled one over every team) and
    the extraction status of the team's sessions."""
    latest = TaskRun.objects.filter(Q(team=team) | Q(team__isnull=True)).latest_per_task()
    sessions = counts_by(Session.objects.for_team(team), "extraction_status", ExtractionStatus)
    return {
        "runs": [(task, latest.get(task)) for task in TaskName.values],
        "sessions": dict(sessions),
    }


def overview(team, now: datetime | None = None) -> dict:
    memories = Memory.objects.for_team(team)
    active = memories.active()
    return {
        "total": memories.count(),
        "active": active.count(),
        "by_maturity": counts_by(active, "maturity", Maturity),
        "by_category": counts_by(active, "category", Category),
        "by_status": counts_by(memories, "status", Status),
        "feedback": helpful_rate(team, now=now),
    }


def recent_activity(team, limit: int = 8):
    return (
        MemoryEvent.objects.for_team(team)
        .select_related("actor", "memory")
        .order_by("-created_at", "-pk")[:limit]
    )
