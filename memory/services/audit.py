"""The append-only audit log (MemoryEvent): who did what to which memory. Each event is of its
memory's team."""

from __future__ import annotations

from memory.models import Memory, MemoryEvent
from memory.services.redaction import redact_value


def record_events(memories: list[Memory], action: str, *, actor=None, **diff) -> list[MemoryEvent]:
    """Append the same event to each of ``memories``, in one statement."""
    diff = redact_value(diff)
    return _append([(memory, diff) for memory in memories], action, actor)


def record_each(entries: list[tuple[Memory, dict]], action: str, *, actor=None) -> list[MemoryEvent]:
    """Append an event to each memory of ``entries`` with its own diff, in one statement."""
    return _append([(memory, redact_value(diff)) for memory, diff in entries], action, actor)


def _append(entries: list[tuple[Memory, dict]], action: str, actor) -> list[MemoryEvent]:
    actor = actor if getattr(actor, "pk", None) else None
    return MemoryEvent.objects.bulk_create(
        [
            MemoryEvent(
                team_id=memory.team_id,
                memory=memory,
                memory_ref=memory.pk,
                action=action,
                actor=actor,
                diff=diff,
            )
            for memory, diff in entries
        ]
    )


def record_event(memory: Memory, action: str, *, actor=None, **diff) -> MemoryEvent:
    """Append one event. Its diff is redacted: the audit log never keeps a secret either."""
    return MemoryEvent.objects.create(
        team_id=memory.team_id,
        memory=memory,
        memory_ref=memory.pk,
        action=action,
        actor=actor if getattr(actor, "pk", None) else None,
        diff=redact_value(diff),
    )
