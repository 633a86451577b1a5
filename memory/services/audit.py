"""The append-only audit log (MemoryEvent): who did what to which memory."""

from __future__ import annotations

from memory.models import Memory, MemoryEvent


def record_event(memory: Memory, action: str, *, actor=None, **diff) -> MemoryEvent:
    return MemoryEvent.objects.create(
        memory=memory,
        memory_ref=memory.pk,
        action=action,
        actor=actor if getattr(actor, "pk", None) else None,
        diff=diff,
    )
