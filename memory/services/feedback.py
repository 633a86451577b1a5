"""Feedback (DESIGN.md §4.5): helpful, harmful and irrelevant signals, explicit or from outcomes.

FeedbackEvents are the truth. :func:`memory_recompute` derives every aggregate on a memory —
score, counts, decay clock, maturity — from its events, so they can always be rebuilt. Recording
locks the memory row, so concurrent feedback on one memory loses no update. Every event is of its
memory's team; a session of another team is answered as a missing one (DESIGN.md §11).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db import connection, transaction
from django.utils import timezone

from memory.conf import setting
from memory.models import (
    Action,
    FeedbackEvent,
    FeedbackSource,
    Maturity,
    Memory,
    Session,
    Signal,
    Status,
)
from memory.services import maturity as maturity_service
from memory.services.audit import record_each, record_event, record_events
from memory.services.errors import InvalidInput, NotFound
from memory.services.injection import injection_reasons
from memory.services.redaction import redact
from memory.services.taxonomy import is_prescriptive

MAX_NOTE_CHARS = 2000


def clamp_score(score: float) -> float:
    return min(setting("SCORE_MAX"), max(setting("SCORE_MIN"), score))


def score_multiplier(event: FeedbackEvent) -> float:
    """explicit helpful ×1.1 · implicit helpful ×(1 + 0.1 × value) · explicit harmful ×0.5 ·
    implicit harmful ×0.7 · irrelevant ×1."""
    if event.signal == Signal.HELPFUL:
        boost = setting("HELPFUL_MULTIPLIER") - 1.0
        return 1.0 + boost * (1.0 if event.source == FeedbackSource.EXPLICIT else event.value)
    if event.signal == Signal.HARMFUL:
        if event.source == FeedbackSource.EXPLICIT:
            return setting("HARMFUL_MULTIPLIER")
        return setting("IMPLICIT_HARMFUL_MULTIPLIER")
    return 1.0


def score_from_events(events: list[FeedbackEvent]) -> float:
    score = 1.0
    for event in sorted(events, key=lambda e: (e.created_at, e.pk or 0)):
        score = clamp_score(score * score_multiplier(event))
    return score


@dataclass
class FeedbackResult:
    memory: Memory
    event: FeedbackEvent
    inverted: Memory | None = None


class EventRow(NamedTuple):
    """What the aggregates are derived from, of one FeedbackEvent (read without building a model)."""

    pk: int
    signal: str
    source: str
    value: float
    user_id: object
    created_at: datetime


EVENT_ROW_FIELDS = EventRow._fields


def recomputed_aggregates(
    memory: Memory, events, now: datetime
) -> tuple[dict, maturity_service.FeedbackCounts]:
    """The aggregates of ``memory`` that its ``events`` (FeedbackEvents or EventRows) change, by
    name, and the counts they were derived from. Pure: nothing is read or written. An aggregate
    that already holds its value is left out: recomputing is idempotent."""
    counts = maturity_service.count_feedback(events, now)
    validations = [
        e.created_at for e in events if e.signal == Signal.HELPFUL and e.source == FeedbackSource.EXPLICIT
    ]
    derived = {
        "feedback_score": round(score_from_events(events), 6),
        "helpful_count": counts.helpful,
        "harmful_count": counts.harmful,
        "irrelevant_count": counts.irrelevant,
        "last_validated_at": max([memory.created_at, *validations]),
    }
    if not memory.maturity_pinned:
        derived["maturity"] = maturity_service.maturity_for(counts, vouched=memory.reviewed_by_id is not None)
    return {name: value for name, value in derived.items() if getattr(memory, name) != value}, counts


def memory_recompute(memory: Memory, *, now: datetime | None = None, actor=None) -> Memory | None:
    """Rebuild a memory's aggregates from its events (the caller holds the row lock).
    Returns the anti-pattern when this recompute inverted the memory."""
    now = now or timezone.now()
    changes, counts = recomputed_aggregates(memory, list(memory.feedback_events.all()), now)
    before = memory.maturity
    if changes:
        for name, value in changes.items():
            setattr(memory, name, value)
        memory.save(update_fields=[*changes, "updated_at"])
    if memory.maturity != before:
        record_event(memory, Action.MATURITY, actor=actor, maturity=[before, memory.maturity])
    return invert_if_harmful(memory, counts, actor=actor)


# What recomputed_aggregates derives, as write_aggregates writes them.
AGGREGATES = (
    "feedback_score",
    "helpful_count",
    "harmful_count",
    "irrelevant_count",
    "last_validated_at",
    "maturity",
)


def write_aggregates(memories: list[Memory], now: datetime) -> None:
    """Write the AGGREGATES of ``memories`` (rows the caller has locked) as they are on the
    instances, and ``now`` as their ``updated_at``, in one statement. Django's bulk_update builds a
    CASE per column with a branch per row: for a session's thousand memories that took seconds of
    Python while the rows stayed locked."""
    if not memories:
        return
    quote = connection.ops.quote_name
    # The key: each row's id and team (a memory is only ever written as one of its team's).
    keys = [Memory._meta.pk, Memory._meta.get_field("team")]
    fields = [*keys, *(Memory._meta.get_field(name) for name in AGGREGATES)]
    columns = [quote(field.column) for field in fields]
    arrays = ", ".join(f"%s::{field.db_type(connection)}[]" for field in fields)
    sql = (
        f"UPDATE {quote(Memory._meta.db_table)} AS m SET "
        + ", ".join(f"{column} = v.{column}" for column in columns[len(keys) :])
        + f", {quote(Memory._meta.get_field('updated_at').column)} = %s "
        f"FROM unnest({arrays}) AS v({', '.join(columns)}) "
        f"WHERE m.{columns[0]} = v.{columns[0]} AND m.{columns[1]} = v.{columns[1]}"
    )
    values = [[getattr(memory, field.attname) for memory in memories] for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, *values])


def invert_if_harmful(
    memory: Memory, counts: maturity_service.FeedbackCounts, *, actor=None
) -> Memory | None:
    """A prescriptive memory that mostly harms becomes deprecated, and its advice an "AVOID:" memory."""
    if (
        memory.is_negative
        or memory.maturity_pinned  # a curator's promote or deprecate stands until reset
        or not is_prescriptive(memory.memory_type)
        or counts.events < setting("MATURITY_MIN_EVENTS")
        or counts.harmful_ratio < setting("INVERSION_HARMFUL_RATIO")
        or memory.inversions.exists()
    ):
        return None
    from memory.services.store import memory_store  # store imports feedback's neighbours; avoid a cycle

    if memory.maturity != Maturity.DEPRECATED:
        memory.maturity = Maturity.DEPRECATED
        memory.save(update_fields=["maturity", "updated_at"])
    percent = round(100 * counts.harmful / counts.events)
    content = f"AVOID: {memory.content.rstrip('. ')}. Harmful in {counts.harmful} of {counts.events} uses ({percent}%)"
    content = content[: setting("MAX_CONTENT_CHARS")]
    result = memory_store(
        team=memory.team,
        content=content,
        memory_type=memory.memory_type,
        category=memory.category,
        priority=memory.priority,
        entities=[m.entity.slug for m in memory.mentions.filter(resolved=True).select_related("entity")],
        tags=memory.tags,
        source=memory.source,
        is_negative=True,
        status=Status.ACTIVE,
        dedupe=False,
        author=actor,
    )
    anti_pattern = result.memory
    anti_pattern.inverted_from = memory
    anti_pattern.save(update_fields=["inverted_from"])
    record_event(memory, Action.INVERTED, actor=actor, anti_pattern=str(anti_pattern.pk))
    return anti_pattern


def feedback_record(
    *,
    memory: Memory,
    signal: str,
    user=None,
    session: Session | None = None,
    note: str = "",
    source: str = FeedbackSource.EXPLICIT,
    value: float = 1.0,
    created_at: datetime | None = None,
) -> FeedbackResult:
    """Record one signal on a memory and update its aggregates, maturity and, if it mostly harms,
    invert it into an anti-pattern. The event is of the memory's team; a ``session`` of another team
    raises NotFound."""
    note = _validated(signal=signal, source=source, value=value, note=note)
    if session is not None and session.team_id != memory.team_id:
        raise NotFound(f"No session {str(session.pk)!r}.")
    with transaction.atomic():
        locked = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
        event = FeedbackEvent.objects.create(
            team_id=locked.team_id,
            memory=locked,
            signal=signal,
            value=float(value),
            source=source,
            user=user if getattr(user, "pk", None) else None,
            session=session,
            note=note,
            created_at=created_at or timezone.now(),
        )
        record_event(locked, Action.FEEDBACK, actor=user, signal=signal, source=source, value=float(value))
        inverted = memory_recompute(locked, actor=user)
    return FeedbackResult(locked, event, inverted)


def feedback_record_many(
    *,
    team,
    memory_ids,
    signal: str,
    user=None,
    session: Session | None = None,
    source: str = FeedbackSource.EXPLICIT,
    value: float = 1.0,
) -> list[FeedbackResult]:
    """The same signal on the memories ``memory_ids`` (a session's end rates every memory it was
    shown), with the rules of :func:`feedback_record`: the rows are locked in key order (two
    sessions ending at once that were shown the same memories do not deadlock), and the events are
    written, read back and the changed memories written together rather than one memory at a time
    (the locks are held for as short a time as can be). Memories deleted in the meantime are
    skipped, and so are those of another team than ``team`` (a Team or its id). Raises NotFound for
    a ``session`` of another team."""
    _validated(signal=signal, source=source, value=value, note="")
    team_id = getattr(team, "pk", team)
    if session is not None and session.team_id != team_id:
        raise NotFound(f"No session '{session.external_id}'.")
    user = user if getattr(user, "pk", None) else None
    memories = Memory.objects.for_team(team_id)
    with transaction.atomic():
        locked = list(
            memories.filter(pk__in=set(memory_ids)).defer("embedding", "search_vector").locked_in_key_order()
        )
        now = timezone.now()
        events = FeedbackEvent.objects.bulk_create(
            [
                FeedbackEvent(
                    team_id=memory.team_id,
                    memory=memory,
                    signal=signal,
                    value=float(value),
                    source=source,
                    user=user,
                    session=session,
                    created_at=now,
                )
                for memory in locked
            ]
        )
        record_events(locked, Action.FEEDBACK, actor=user, signal=signal, source=source, value=float(value))
        history: dict = {memory.pk: [] for memory in locked}
        for row in FeedbackEvent.objects.filter(memory__in=locked).values_list(
            "memory_id", *EVENT_ROW_FIELDS
        ):
            history[row[0]].append(EventRow(*row[1:]))
        counts, changed, moved = {}, [], []
        for memory in locked:
            changes, counts[memory.pk] = recomputed_aggregates(memory, history[memory.pk], now)
            if "maturity" in changes:
                moved.append((memory, {"maturity": [memory.maturity, changes["maturity"]]}))
            for name, value in changes.items():
                setattr(memory, name, value)
            if changes:
                memory.updated_at = now
                changed.append(memory)
        write_aggregates(changed, now)
        record_each(moved, Action.MATURITY, actor=user)
        return [
            FeedbackResult(memory, event, invert_if_harmful(memory, counts[memory.pk], actor=user))
            for memory, event in zip(locked, events, strict=True)
        ]


def _validated(*, signal: str, source: str, value, note) -> str:
    """The note, redacted, once every argument is valid; raises InvalidInput otherwise."""
    errors = {}
    if signal not in Signal.values:
        errors["signal"] = [f"'{signal}' is not one of: {', '.join(Signal.values)}."]
    if source not in FeedbackSource.values:
        errors["source"] = [f"'{source}' is not one of: {', '.join(FeedbackSource.values)}."]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        errors["value"] = ["The value is a number from 0 to 1."]
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        errors["note"] = [f"The note is text of at most {MAX_NOTE_CHARS} characters."]
    if not errors and (reasons := injection_reasons(note)):
        errors["note"] = [
            f"The note reads as instructions to agents ({'; '.join(reasons)}); say what happened instead."
        ]
    if errors:
        raise InvalidInput(errors)
    return redact(note)[0]
