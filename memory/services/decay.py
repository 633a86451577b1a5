"""Decay (DESIGN.md §4.7): memories nobody validates fade with their priority's half-life.

``decay = 0.5^(days since last_validated_at / half_life(priority))``. Search computes it live;
:func:`decay_run` (weekly, Celery beat) materializes it for sorting, recomputes maturity from the
decayed feedback, deprecates and inverts harmful memories, and flags stale ones. It is idempotent:
a second run at the same moment changes nothing. It works within one team, or every team one after
another (DESIGN.md §11).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from memory.conf import setting
from memory.models import Memory, Status, Team
from memory.services import feedback as feedback_service
from memory.services.maturity import SECONDS_PER_DAY
from memory.services.taxonomy import half_life_days

DECAY_DECIMALS = 4  # finer than ranking needs; coarse enough that re-runs minutes apart are no-ops
CHUNK = 500


def decay_factor(memory: Memory, now: datetime | None = None) -> float:
    now = now or timezone.now()
    age_days = max(0.0, (now - memory.last_validated_at).total_seconds() / SECONDS_PER_DAY)
    return 0.5 ** (age_days / half_life_days(memory.priority))


def is_stale(memory: Memory, now: datetime | None = None) -> bool:
    """Not retrieved or validated for two half-lives, or judged irrelevant more often than helpful."""
    now = now or timezone.now()
    window = timedelta(days=setting("STALE_HALF_LIVES") * half_life_days(memory.priority))
    last_seen = max(filter(None, [memory.last_validated_at, memory.last_retrieved_at]))
    return now - last_seen > window or memory.irrelevant_count > memory.helpful_count


@dataclass
class DecayReport:
    examined: int = 0
    updated: int = 0
    maturity_changed: int = 0
    inverted: list[str] = field(default_factory=list)
    stale: int = 0


def decay_run(*, team: Team | None = None, now: datetime | None = None, progress=None) -> DecayReport:
    """Materialize decay, maturity, inversion and staleness on every active, current memory of
    ``team``, or (None) of every team, one team after another."""
    now = now or timezone.now()
    report = DecayReport()
    teams = [team] if team is not None else list(Team.objects.order_by("pk"))
    work = [
        (each, pk)
        for each in teams
        for pk in Memory.objects.for_team(each)
        .active()
        .filter(superseded_by__isnull=True)
        .values_list("pk", flat=True)
    ]
    for start in range(0, len(work), CHUNK):
        for each, pk in work[start : start + CHUNK]:
            with transaction.atomic():
                memory = (
                    Memory.objects.for_team(each)
                    .select_for_update()
                    .filter(pk=pk, status=Status.ACTIVE)
                    .first()
                )
                if memory is None:
                    continue  # changed since we listed it
                report.examined += 1
                before = (memory.decay_factor, memory.is_stale, memory.maturity, memory.feedback_score)
                inverted = feedback_service.memory_recompute(memory, now=now)
                factor, stale = round(decay_factor(memory, now), DECAY_DECIMALS), is_stale(memory, now)
                if (factor, stale) != (memory.decay_factor, memory.is_stale):
                    memory.decay_factor, memory.is_stale = factor, stale
                    memory.save(update_fields=["decay_factor", "is_stale"])
                after = (memory.decay_factor, memory.is_stale, memory.maturity, memory.feedback_score)
                report.updated += before != after
                report.maturity_changed += before[2] != after[2]
                report.stale += memory.is_stale
                if inverted is not None:
                    report.inverted.append(str(inverted.pk))
            if progress:
                progress(report.examined, len(work))
    return report
