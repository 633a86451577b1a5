"""Celery entry points: ids in, one service call, safe to run twice (STYLE.md)."""

from __future__ import annotations

import logging
from dataclasses import asdict

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task
def ping() -> dict:
    """A round trip through the broker and the database, for health checks and tests."""
    from memory.models import Memory

    return {"pong": True, "memories": Memory.objects.count()}


@shared_task
def reflect_task() -> dict:
    """Daily (beat): condense the week's observations into reflections (DESIGN.md §4.9)."""
    logger.warning("reflection is not implemented yet (issue 5); nothing done")
    return {"reflections": 0, "implemented": False}


@shared_task(autoretry_for=(OSError,), retry_backoff=True, retry_jitter=True, max_retries=3)
def decay_task() -> dict:
    """Weekly (beat): materialize decay, maturity, deprecation and inversion (DESIGN.md §4.7)."""
    from memory.services.decay import decay_run

    report = decay_run()
    logger.info("decay: %s", report)
    return asdict(report)
