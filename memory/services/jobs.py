"""Runs of the background jobs (reflection, decay): queued, running with progress, done or failed.

A ``TaskRun`` row is what the dashboard polls for a progress bar and what ``/api/v1/health``
reports on. Progress writes are throttled so a fast loop does not become a write storm.

A run has a team when it was started for one (a team's Run now, a command's ``--team``): the job
then works on that team only. The scheduled run (beat) has none and works on every team, one after
another, never comparing two. A task is given the run's id, and the run's row says the team.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta

from django.db.models import Count, Min
from django.utils import timezone

from memory.conf import setting
from memory.models import ExtractionStatus, Session, TaskName, TaskRun, TaskRunStatus, Team

PROGRESS_WRITE_SECONDS = 0.5


def run_create(task: str, *, team: Team | None = None, user=None) -> TaskRun:
    """A queued run of ``task`` over ``team`` (None: every team), triggered by ``user``."""
    return TaskRun.objects.create(
        task=task, team=team, triggered_by=user if getattr(user, "pk", None) else None
    )


def run_start(task: str, run_id: int | None = None, *, team: Team | None = None) -> TaskRun | None:
    """The run a task works on: the queued one it was given (over its own team, whatever ``team``
    says), or a new one over ``team`` (beat: every team; a command: its ``--team``). None when the
    queued run is gone (its team was deleted): the job then does nothing rather than run over every
    team."""
    if run_id:
        run = TaskRun.objects.filter(pk=run_id, task=task).select_related("team").first()
        if run is None:
            return None
    else:
        run = TaskRun(task=task, team=team)
    run.status, run.started_at, run.error = TaskRunStatus.RUNNING, timezone.now(), ""
    run.save()
    return run


def progress_recorder(run: TaskRun) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback that saves at most every PROGRESS_WRITE_SECONDS."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < PROGRESS_WRITE_SECONDS:
            return
        last[0] = now
        TaskRun.objects.filter(pk=run.pk).update(progress_done=done, progress_total=total)

    return progress


def run_finish(run: TaskRun, summary: dict) -> TaskRun:
    run.refresh_from_db(fields=["progress_done", "progress_total"])
    run.status, run.summary, run.finished_at = TaskRunStatus.DONE, summary, timezone.now()
    run.progress_done = max(run.progress_done, run.progress_total)
    run.save()
    return run


def run_fail(run: TaskRun, error: Exception | str) -> TaskRun:
    run.status, run.finished_at = TaskRunStatus.FAILED, timezone.now()
    run.error = str(error) if isinstance(error, str) else f"{error.__class__.__name__}: {error}"
    run.save()
    return run


def run_job(
    task: str,
    body: Callable,
    *,
    run_id: int | None = None,
    team: Team | None = None,
    on_progress=None,
) -> tuple[TaskRun | None, object]:
    """Run ``body(progress, team)`` as a recorded run of ``task`` (:func:`run_start`; ``team`` is the
    run's: None for every team): progress saved as it goes (and passed on to ``on_progress``, e.g. a
    command's progress bar), the report's fields as the run's summary, a failure recorded and raised.
    Returns the run and the report; ``(None, None)`` when the queued run ``run_id`` is gone."""
    run = run_start(task, run_id, team=team)
    if run is None:
        return None, None
    record = progress_recorder(run)

    def progress(done: int, total: int) -> None:
        record(done, total)
        if on_progress:
            on_progress(done, total)

    try:
        report = body(progress, run.team)
    except Exception as exc:
        run_fail(run, exc)
        raise
    return run_finish(run, asdict(report)), report


def _describe(run: TaskRun | None, every_seconds: int, now) -> dict:
    if run is None:
        return {"status": "never run", "late": False}
    finished = run.finished_at or run.started_at or run.queued_at
    late = now - finished > timedelta(seconds=every_seconds * setting("TASK_LATE_FACTOR"))
    return {
        "status": run.status,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "late": late,
    }


def task_health(now=None) -> dict:
    """The pipeline at a glance: the extraction queue and the periodic jobs' last runs.
    ``status`` is "ok", or "degraded" with the reasons (a stuck backlog, a failed or late job).
    Deployment-wide (the server's health, not a team's): counts and states only, nothing of any
    team's content."""
    now = now or timezone.now()
    counts = dict(
        Session.objects.filter(ended_at__isnull=False)
        .values_list("extraction_status")
        .annotate(n=Count("pk"))
        .values_list("extraction_status", "n")
    )
    oldest = Session.objects.filter(
        ended_at__isnull=False, extraction_status__in=[ExtractionStatus.PENDING, ExtractionStatus.RUNNING]
    ).aggregate(oldest=Min("ended_at"))["oldest"]
    backlog_seconds = round((now - oldest).total_seconds()) if oldest else 0
    latest = TaskRun.objects.latest_per_task()
    jobs = {
        TaskName.REFLECT: _describe(latest.get(TaskName.REFLECT), setting("REFLECTION_EVERY_SECONDS"), now),
        TaskName.DECAY: _describe(latest.get(TaskName.DECAY), setting("DECAY_EVERY_SECONDS"), now),
    }
    problems = []
    if backlog_seconds > setting("TASK_BACKLOG_WARN_SECONDS"):
        problems.append(f"extraction backlog is {backlog_seconds} s old")
    for name, job in jobs.items():
        if job["status"] == TaskRunStatus.FAILED:
            problems.append(f"the last {name} run failed")
        elif job["late"]:
            problems.append(f"{name} is late")
    return {
        "status": "degraded" if problems else "ok",
        "problems": problems,
        "extraction": {
            **{status: counts.get(status, 0) for status in ExtractionStatus.values},
            "oldest_waiting_seconds": backlog_seconds,
        },
        "jobs": jobs,
    }
