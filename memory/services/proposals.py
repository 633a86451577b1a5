"""Superseding a memory, and proposals of change to settled knowledge (DESIGN.md §4.3).

A proposal is a memory stored *pending review*, linked by a FactChange of kind ``proposal`` to the
settled memory it would change, which stays served meanwhile. It takes effect (:func:`proposal_accept`)
when a curator confirms it, or when ``PROPOSAL_CONFIRMATIONS`` distinct people propose the same change
— the later proposals are reinforcements of the first (:func:`proposal_after_reinforcement`). Whether it
does is the pure :func:`memory.services.governance.proposal_carried`; this module writes.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memory.models import (
    Action,
    Entity,
    EntityMention,
    FactChange,
    FactChangeKind,
    FactChangeStatus,
    Memory,
    MemoryEvent,
    Status,
)
from memory.services.audit import record_event
from memory.services.errors import InvalidTransition
from memory.services.governance import proposal_carried


def supersede(old: Memory, new: Memory, *, actor, now, decision: dict) -> list[Entity]:
    """``new`` replaces ``old`` (locked and saved here): ``old`` stops being valid and points to ``new``,
    which is recorded as a SUPERSEDED event. Returns ``old``'s entities, for ``new`` to carry over."""
    entities = list(
        Entity.objects.for_team(old.team_id).filter(mentions__memory=old, mentions__resolved=True)
    )
    old.valid_until = max(now, old.valid_from)
    old.superseded_by = new
    old.save(update_fields=["valid_until", "superseded_by", "updated_at"])
    record_event(old, Action.SUPERSEDED, actor=actor, superseded_by=str(new.pk), decision=decision)
    return entities


def open_proposals(old_ids, *, team_id) -> dict:
    """The open proposals against each of ``old_ids``: old id → [proposed memory], oldest first."""
    found: dict = {}
    changes = (
        FactChange.objects.for_team(team_id)
        .filter(kind=FactChangeKind.PROPOSAL, status=FactChangeStatus.OPEN, old_id__in=list(old_ids))
        .select_related("new")
        .order_by("created_at")
    )
    for change in changes:
        found.setdefault(change.old_id, []).append(change.new)
    return found


def proposers(change: FactChange) -> set:
    """The people who proposed ``change``: the proposal's author and everyone whose write of the same
    change reinforced it."""
    reinforcing = MemoryEvent.objects.for_team(change.team_id).filter(
        memory_id=change.new_id, action=Action.REINFORCED, actor__isnull=False
    )
    return {change.new.author_id, *reinforcing.values_list("actor_id", flat=True)} - {None}


def proposal_after_reinforcement(memory: Memory, *, actor, curator: bool) -> FactChange | None:
    """After a write reinforced ``memory``: if it is an open proposal that now carries (a curator wrote
    it, or enough distinct people), it takes effect. Returns the accepted change, else None."""
    if memory.status != Status.PENDING_REVIEW:
        return None
    change = (
        FactChange.objects.for_team(memory.team_id)
        .filter(kind=FactChangeKind.PROPOSAL, status=FactChangeStatus.OPEN, new=memory)
        .select_related("new")
        .first()
    )
    if change is None or not proposal_carried(proposers(change), by_curator=curator):
        return None
    how = "confirmed by a curator's write" if curator else "proposed by enough people"
    try:
        return proposal_accept(change, actor=actor if curator else None, how=how)
    except InvalidTransition:
        return None  # the memory it would change was changed since: a curator declines it


@transaction.atomic
def proposal_accept(change: FactChange, *, actor, how: str) -> FactChange:
    """The proposal takes effect: its memory becomes active and supersedes the one it would change.
    Raises InvalidTransition when that memory was superseded meanwhile (resolve the newer change)."""
    memories = Memory.objects.for_team(change.team_id).select_for_update()
    old, new = memories.get(pk=change.old_id), memories.get(pk=change.new_id)
    if old.superseded_by_id is not None or (old.valid_until and old.valid_until <= timezone.now()):
        raise InvalidTransition(
            "The memory this proposal would change was changed since; it no longer applies."
        )
    now = timezone.now()
    entities = supersede(old, new, actor=actor, now=now, decision={"proposal": change.pk, "how": how})
    EntityMention.objects.bulk_create(
        [
            EntityMention(team_id=new.team_id, memory=new, entity=entity, raw=entity.slug, resolved=True)
            for entity in entities
        ],
        ignore_conflicts=True,
    )
    new.status, new.status_reason = Status.ACTIVE, ""
    fields = ["status", "status_reason", "updated_at"]
    if getattr(actor, "pk", None):
        new.reviewed_by, new.reviewed_at = actor, now
        fields += ["reviewed_by", "reviewed_at"]
    new.save(update_fields=fields)
    record_event(new, Action.REVIEWED, actor=actor, fact_change=change.pk, resolution="confirm", how=how)
    return change_close(change, FactChangeStatus.CONFIRMED, actor=actor)


def change_close(change: FactChange, status: str, *, actor) -> FactChange:
    """Record how a changed fact or proposal was resolved, and by whom (None: by its proposers)."""
    change.status = status
    change.resolved_by = actor if getattr(actor, "pk", None) else None
    change.resolved_at = timezone.now()
    change.save(update_fields=["status", "resolved_by", "resolved_at"])
    return change
