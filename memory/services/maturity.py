"""Maturity (DESIGN.md §4.5): candidate → established → proven, or deprecated, from decayed feedback.

Each feedback event weighs ``value × 0.5^(age_days / FEEDBACK_HALF_LIFE_DAYS)``. The number of
helpful and harmful events (raw) decides whether there is a track record at all; the decayed sums
decide how good it is. Irrelevant events count toward staleness, not maturity.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from memory.conf import setting
from memory.models import Action, FeedbackEvent, Maturity, Memory, Signal
from memory.services.audit import record_event
from memory.services.errors import InvalidInput, InvalidTransition

SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class FeedbackCounts:
    helpful: int
    harmful: int
    irrelevant: int
    decayed_helpful: float
    decayed_harmful: float
    voters: int = 0  # distinct people behind the helpful events

    @property
    def events(self) -> int:
        return self.helpful + self.harmful

    @property
    def harmful_ratio(self) -> float:
        total = self.decayed_helpful + self.decayed_harmful
        return self.decayed_harmful / total if total > 0 else 0.0


def event_weight(event: FeedbackEvent, now: datetime) -> float:
    age_days = max(0.0, (now - event.created_at).total_seconds() / SECONDS_PER_DAY)
    return event.value * 0.5 ** (age_days / setting("FEEDBACK_HALF_LIFE_DAYS"))


def count_feedback(events: list[FeedbackEvent], now: datetime | None = None) -> FeedbackCounts:
    now = now or timezone.now()
    helpful = [e for e in events if e.signal == Signal.HELPFUL]
    harmful = [e for e in events if e.signal == Signal.HARMFUL]
    return FeedbackCounts(
        helpful=len(helpful),
        harmful=len(harmful),
        irrelevant=sum(1 for e in events if e.signal == Signal.IRRELEVANT),
        # Rounded so events from moments ago count whole: five fresh helpful events make 5, not 4.99999.
        decayed_helpful=round(sum(event_weight(e, now) for e in helpful), 4),
        decayed_harmful=round(sum(event_weight(e, now) for e in harmful), 4),
        voters=len({e.user_id for e in helpful if e.user_id is not None}),
    )


def maturity_for(counts: FeedbackCounts, *, vouched: bool = False) -> str:
    """The maturity feedback earns. Promotion (established, proven — and so the export) needs
    helpful feedback from ``MATURITY_MIN_VOTERS`` distinct people, or a curator's review
    (``vouched``): one token's votes cannot put a memory into every teammate's MEMORY.md."""
    if counts.events < setting("MATURITY_MIN_EVENTS"):
        return Maturity.CANDIDATE
    if counts.harmful_ratio > setting("DEPRECATE_HARMFUL_RATIO"):
        return Maturity.DEPRECATED
    if not vouched and counts.voters < setting("MATURITY_MIN_VOTERS"):
        return Maturity.CANDIDATE
    if counts.decayed_helpful >= setting("PROVEN_MIN_HELPFUL") and counts.harmful_ratio < setting(
        "PROVEN_MAX_HARMFUL_RATIO"
    ):
        return Maturity.PROVEN
    return Maturity.ESTABLISHED


def multiplier(maturity: str) -> float:
    return setting("MATURITY_MULTIPLIERS")[maturity]


def _set_maturity(memory: Memory, maturity: str, *, pinned: bool, actor, action: str, **diff) -> Memory:
    before = memory.maturity
    memory.maturity = maturity
    memory.maturity_pinned = pinned
    memory.save(update_fields=["maturity", "maturity_pinned", "updated_at"])
    record_event(memory, action, actor=actor, maturity=[before, maturity], **diff)
    return memory


@transaction.atomic
def memory_promote(*, memory: Memory, actor) -> Memory:
    """A curator vouches for a memory: proven, whatever its feedback says, until reset."""
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    if memory.maturity == Maturity.DEPRECATED:
        raise InvalidTransition("A deprecated memory must be reset before it can be promoted.")
    return _set_maturity(memory, Maturity.PROVEN, pinned=True, actor=actor, action=Action.PROMOTED)


@transaction.atomic
def memory_deprecate(*, memory: Memory, actor, reason: str) -> Memory:
    """A curator retires a memory: left out of search, context and export until reset."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput({"reason": ["Say why the memory is deprecated."]})
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    memory.status_reason = reason[:1000]
    memory.save(update_fields=["status_reason"])
    return _set_maturity(
        memory, Maturity.DEPRECATED, pinned=True, actor=actor, action=Action.DEPRECATED, reason=reason
    )


@transaction.atomic
def memory_reset(*, memory: Memory, actor) -> Memory:
    """Undo a curator's promote or deprecate: maturity follows the feedback again."""
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    counts = count_feedback(list(memory.feedback_events.all()))
    maturity = maturity_for(counts, vouched=memory.reviewed_by_id is not None)
    return _set_maturity(memory, maturity, pinned=False, actor=actor, action=Action.RESET)
