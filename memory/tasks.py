"""Celery entry points: ids in, one service call, safe to run twice (STYLE.md).

Each task works inside one team, named by what it is given (DESIGN.md §11): extraction by the
session's team (the message carries it), reflection and decay by their run's row (``TaskRun.team``;
the scheduled run has none and works on every team, one after another, never comparing two).

Extraction retries transient failures (the database or the embedder unavailable) with exponential
backoff and jitter, and gives up as ``failed`` with the error kept. Every worker sweeps for lost
extractions when it starts, so a worker killed mid-task is made good by the next one, and each
process that runs tasks loads the models, screens and lexicons in the background as it starts.
"""

from __future__ import annotations

import logging
from dataclasses import asdict

from celery import shared_task
from celery.signals import worker_process_init, worker_ready
from django.db import DatabaseError, InterfaceError, OperationalError

from memory.conf import setting
from memory.embeddings import EmbedderUnavailable

logger = logging.getLogger(__name__)

# Failures that another attempt may not meet: the database, the embedder or the disk.
TRANSIENT = (OperationalError, InterfaceError, EmbedderUnavailable, OSError)


@shared_task
def ping() -> dict:
    """A round trip through the broker and the database, for health checks and tests."""
    from memory.models import Memory

    return {"pong": True, "memories": Memory.objects.count()}


@shared_task(bind=True, max_retries=None)
def extract_session_task(self, session_id: str, team_id: int | None = None) -> dict:
    """Turn an ended session into memories (DESIGN.md §4.8), inside its team (``team_id``; a message
    queued before teams carries none, and the session's row says it)."""
    from memory.services import extraction

    try:
        report = extraction.extraction_run(session_id, team_id)
    except TRANSIENT as exc:
        outage = extraction.is_outage(exc)
        delay = (
            setting("EXTRACTION_OUTAGE_RETRY_SECONDS")
            if outage
            else extraction.retry_delay(self.request.retries)
        )
        logger.warning(
            "extraction of %s failed (%s; retry in %.0f s): %s",
            session_id,
            "database unreachable" if outage else f"attempt {self.request.retries + 1}",
            delay,
            exc,
        )
        try:
            again = extraction.extraction_release(session_id, exc, due_in=delay, team_id=team_id)
        except TRANSIENT:
            # The database is still away: the claim stays ours, and the retry resumes it (no attempt spent).
            again, delay = True, setting("EXTRACTION_OUTAGE_RETRY_SECONDS")
        if again:
            raise self.retry(exc=exc, countdown=delay) from exc
        return {"session_id": session_id, "status": "failed", "error": str(exc)}
    except DatabaseError as exc:  # a constraint or data error: another attempt would meet it again
        logger.exception("extraction of %s failed", session_id)
        extraction.extraction_fail(session_id, exc, team_id=team_id)
        return {"session_id": session_id, "status": "failed", "error": str(exc)}
    except Exception as exc:  # a bug: keep it on the session rather than retrying forever
        logger.exception("extraction of %s failed", session_id)
        extraction.extraction_fail(session_id, exc, team_id=team_id)
        raise
    if report.status == "not claimed (running)" and self.request.retries > 0:
        # A retry after an outage, while the claim of the interrupted attempt (another process's) has
        # not lapsed yet: look again soon rather than wait for the sweep.
        raise self.retry(countdown=setting("EXTRACTION_OUTAGE_RETRY_SECONDS"))
    logger.info("extraction of %s: %s", session_id, report)
    return asdict(report)


@shared_task
def extraction_sweep_task() -> list[str]:
    """Every minute (beat) and at worker start: queue extractions that were lost or abandoned."""
    from memory.services.extraction import extraction_sweep

    return extraction_sweep()


@worker_ready.connect
def _sweep_at_start(sender=None, **kwargs) -> None:
    extraction_sweep_task.delay()


@worker_process_init.connect
def _warm_up_at_start(**kwargs) -> None:
    """Each process that runs tasks (a prefork child, or the solo worker itself) loads the model,
    screens and lexicons in the background, so its first extraction does not pay for them."""
    if setting("WARM_UP"):
        from memory.services.warmup import warm_up_in_background

        warm_up_in_background("worker")


def _run_job(task: str, run_id: int | None, body) -> dict:
    """``body(progress, team)`` as the run ``run_id`` (over its team), or a new run over every team."""
    from memory.services.jobs import run_job

    run, _ = run_job(task, body, run_id=run_id)
    if run is None:  # the queued run is gone with its team: nothing to do
        logger.warning("%s run %s no longer exists; nothing done", task, run_id)
        return {"run": run_id, "skipped": "no such run"}
    return {"run": run.pk, **({"team": run.team.slug} if run.team else {}), **run.summary}


@shared_task(
    autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, retry_jitter=True, max_retries=3
)
def reflect_task(run_id: int | None = None) -> dict:
    """Daily (beat), or on demand: condense the week's observations into reflections (§4.9), of the
    run's team or (beat) of every team in turn."""
    from memory.models import TaskName
    from memory.services.reflection import reflection_run

    return _run_job(
        TaskName.REFLECT, run_id, lambda progress, team: reflection_run(team=team, progress=progress)
    )


@shared_task(
    autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, retry_jitter=True, max_retries=3
)
def decay_task(run_id: int | None = None) -> dict:
    """Weekly (beat), or on demand: materialize decay, maturity, deprecation and inversion
    (DESIGN.md §4.7), of the run's team or (beat) of every team in turn."""
    from memory.models import TaskName
    from memory.services.decay import decay_run

    return _run_job(TaskName.DECAY, run_id, lambda progress, team: decay_run(team=team, progress=progress))


@shared_task(
    autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, retry_jitter=True, max_retries=3
)
def team_indexes_task() -> dict:
    """Every TEAM_INDEX_EVERY_SECONDS (beat): give each team that has grown large enough its own
    search indexes, and take them from those that no longer need them (memory.services.team_indexes).
    The indexes are built concurrently: stores and searches go on meanwhile."""
    from memory.services.team_indexes import team_indexes_ensure

    return asdict(team_indexes_ensure())


@shared_task(
    autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, retry_jitter=True, max_retries=3
)
def token_vectors_task() -> dict:
    """Every LATE_VECTORS_EVERY_SECONDS (beat): compute the token vectors of up to
    LATE_VECTORS_PER_RUN memories no search has needed yet, newest first, across every team
    (memory.services.search.late). Nothing to do when the late-interaction stage is off."""
    from memory.services.search.late import catch_up

    return catch_up()
