"""Celery entry points: ids in, one service call, safe to run twice (STYLE.md)."""

from __future__ import annotations

import logging

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


@shared_task
def decay_task() -> dict:
    """Weekly (beat): materialize decay, maturity, deprecation and inversion (DESIGN.md §4.7)."""
    logger.warning("decay is not implemented yet (issue 3); nothing done")
    return {"updated": 0, "implemented": False}
