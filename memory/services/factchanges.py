"""Curating what the upsert decided (DESIGN.md §4.3): changed facts and reinforcements.

A changed fact is an UPDATE whose content-bearing tokens differ from the memory it superseded
("Node 18" → "Node 20"). It waits in the review queue until a curator:
- **confirms** it (the new memory stays, the old one stays history);
- **undoes** it (the old memory is restored; the new one is rejected);
- says **both are true** (the old memory is restored beside the new one: two ADDs).

A NOOP keeps the incoming text on its REINFORCED event; a curator can **split** it out into a
memory of its own when the two were not the same after all. Every action is atomic and audited.
A *proposal* (a non-curator's change of settled knowledge) waits instead, pending review, while the old
memory stays served: confirming it makes it take effect (memory/services/proposals.py), undoing it
declines it, "both true" activates it beside the old one.
A changed fact is of one team, as both its memories (DESIGN.md §11).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memory.models import (
    Action,
    FactChange,
    FactChangeKind,
    FactChangeStatus,
    Memory,
    MemoryEvent,
    Status,
    Team,
)
from memory.services.audit import record_event
from memory.services.errors import InvalidTransition, NotFound
from memory.services.proposals import change_close, proposal_accept
from memory.services.store import NOOP, memory_store

RESOLUTIONS = {
    "confirm": FactChangeStatus.CONFIRMED,
    "undo": FactChangeStatus.UNDONE,
    "both_true": FactChangeStatus.BOTH_TRUE,
}


def open_fact_changes(*, team: Team):
    """``team``'s changed facts waiting for a curator, newest first, with both memories."""
    return (
        FactChange.objects.for_team(team)
        .filter(status=FactChangeStatus.OPEN)
        .select_related("old", "new", "new__author")
    )


def _restore(old: Memory, *, actor, change: FactChange, action: str) -> None:
    if old.superseded_by_id not in (None, change.new_id):
        raise InvalidTransition(
            "The old memory was superseded again since; resolve the newer change first.",
        )
    old.superseded_by = None
    old.valid_until = None
    old.save(update_fields=["superseded_by", "valid_until", "updated_at"])
    record_event(old, Action.REVIEWED, actor=actor, fact_change=change.pk, resolution=action, restored=True)


@transaction.atomic
def fact_change_resolve(*, change: FactChange, action: str, actor) -> FactChange:
    """Apply a curator's verdict on a changed fact (``confirm``, ``undo`` or ``both_true``).
    Raises InvalidTransition when it was resolved already or history moved on."""
    if action not in RESOLUTIONS:
        raise InvalidTransition(f"Unknown action '{action}'; use one of: {', '.join(RESOLUTIONS)}.")
    change = (
        FactChange.objects.for_team(change.team_id)
        .select_for_update()
        .select_related("old", "new")
        .get(pk=change.pk)
    )
    if change.status != FactChangeStatus.OPEN:
        raise InvalidTransition(f"This change was resolved already ({change.status}).")
    if change.kind == FactChangeKind.PROPOSAL:
        return _resolve_proposal(change, action=action, actor=actor)
    memories = Memory.objects.for_team(change.team_id).select_for_update()
    old = memories.get(pk=change.old_id)
    new = memories.get(pk=change.new_id)
    if action in ("undo", "both_true"):
        _restore(old, actor=actor, change=change, action=action)
    if action == "undo" and new.status != Status.REJECTED:
        new.status = Status.REJECTED
        new.status_reason = "Undone: the fact it changed was restored."
        new.reviewed_by, new.reviewed_at = actor, timezone.now()
        new.save(update_fields=["status", "status_reason", "reviewed_by", "reviewed_at", "updated_at"])
    record_event(new, Action.REVIEWED, actor=actor, fact_change=change.pk, resolution=action, old=str(old.pk))
    return change_close(change, RESOLUTIONS[action], actor=actor)


def _resolve_proposal(change: FactChange, *, action: str, actor) -> FactChange:
    """A proposal is confirmed (it takes effect), undone (declined: the old memory was served all
    along) or both true (the proposed memory is activated beside the old one)."""
    if action == "confirm":
        return proposal_accept(change, actor=actor, how="confirmed by a curator")
    new = Memory.objects.for_team(change.team_id).select_for_update().get(pk=change.new_id)
    if action == "undo":
        new.status, new.status_reason = Status.REJECTED, "Declined: the proposed change did not take effect."
    else:
        new.status, new.status_reason = Status.ACTIVE, ""
    new.reviewed_by, new.reviewed_at = actor, timezone.now()
    new.save(update_fields=["status", "status_reason", "reviewed_by", "reviewed_at", "updated_at"])
    record_event(
        new, Action.REVIEWED, actor=actor, fact_change=change.pk, resolution=action, old=str(change.old_id)
    )
    return change_close(change, RESOLUTIONS[action], actor=actor)


def fact_change_get(pk, *, team: Team) -> FactChange:
    """``team``'s changed fact ``pk``; NotFound when it is missing or another team's."""
    change = FactChange.objects.for_team(team).select_related("old", "new").filter(pk=pk).first()
    if change is None:
        raise NotFound(f"No changed fact {pk}.")
    return change


def reinforcements(memory: Memory) -> list[MemoryEvent]:
    """The NOOP stores a memory absorbed, each with the text it came with; ``split_into`` is set on
    those a curator already split out."""
    events = list(
        memory.events.filter(action=Action.REINFORCED).select_related("actor").order_by("created_at")
    )
    splits = {
        event.diff.get("reinforcement"): event.diff.get("into")
        for event in memory.events.filter(action=Action.SPLIT)
    }
    for event in events:
        event.split_into = splits.get(event.pk)
    return events


@transaction.atomic
def reinforcement_split(*, memory: Memory, event_id: int, actor):
    """Store the text a NOOP absorbed as a memory of its own (an ADD, not compared again), with the
    type, category, priority, tags and entities it was sent with. Returns the StoreResult."""
    event = (
        MemoryEvent.objects.for_team(memory.team_id)
        .select_for_update()
        .filter(pk=event_id, memory=memory, action=Action.REINFORCED)
        .first()
    )
    if event is None:
        raise NotFound(f"No reinforcement {event_id} on this memory.")
    if memory.events.filter(action=Action.SPLIT, diff__reinforcement=event.pk).exists():
        raise InvalidTransition("This reinforcement was split out already.")
    text = (event.diff or {}).get("text")
    if not text:
        raise InvalidTransition("This reinforcement kept no text (it was stored before texts were kept).")
    diff = event.diff
    result = memory_store(
        team=memory.team,
        author=actor,
        dedupe=False,
        content=text,
        memory_type=diff.get("type"),
        category=diff.get("category"),
        priority=diff.get("priority"),
        tags=diff.get("tags") or [],
        entities=diff.get("entities") or [],
        source="manual",
        agent_name=diff.get("agent_name") or "",
    )
    if result.operation == NOOP:
        raise InvalidTransition("The text is the memory's own text; there is nothing to split out.")
    record_event(memory, Action.SPLIT, actor=actor, reinforcement=event.pk, into=str(result.memory.pk))
    return result
