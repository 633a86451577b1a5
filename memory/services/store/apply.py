"""Writing what the decisions say: new memories, supersessions and proposals, reinforcements,
entity mentions, fact changes for review and the audit events, each item in its own savepoint."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import F

from memory.models import (
    Action,
    Entity,
    EntityMention,
    EntityType,
    FactChange,
    FactChangeKind,
    Memory,
    MemoryEvent,
    Session,
    Status,
    Team,
)
from memory.services import entities as entity_service
from memory.services.governance import PROPOSED
from memory.services.intent import intent_reasons
from memory.services.proposals import proposal_after_reinforcement, supersede
from memory.services.store.decision import Plan, side_of
from memory.services.store.neighbours import entity_scope
from memory.services.upsert import (
    NOOP,
    Decision,
    scope_key,
)


@dataclass
class StoreResult:
    operation: str
    memory: Memory
    superseded: Memory | None = None
    decision: Decision | None = None
    proposal_for: Memory | None = None  # PROPOSED: the settled memory it would change
    redactions: list[str] = field(default_factory=list)
    quarantine_reasons: list[str] = field(default_factory=list)


def new_memory(plan: Plan, vector, *, team: Team, author, session, now) -> Memory:
    item = plan.prepared
    created_at = item.created_at or now
    status, status_reason = item.status, item.status_reason
    if plan.operation == PROPOSED:
        status = Status.PENDING_REVIEW
        status_reason = f"Proposed change of settled memory {plan.propose.pk}: {plan.decision.reason}"[:1000]
    return Memory(
        team=team,
        kind=item.kind,
        content=item.content,
        content_hash=item.content_hash,
        scope_key=scope_key(entity_scope(plan.entities)),
        memory_type=item.memory_type,
        category=item.category,
        priority=item.priority,
        is_negative=item.is_negative,
        embedding=vector,
        tags=item.tags,
        confidence=item.confidence,
        status=status,
        status_reason=status_reason,
        source=item.source,
        source_chunk=item.source_chunk,
        evidence_seq_start=item.evidence[0] if item.evidence else None,
        evidence_seq_end=item.evidence[1] if item.evidence else None,
        session=session,
        author=author,
        agent_name=item.agent_name,
        valid_from=item.valid_from or created_at,
        last_validated_at=created_at,
        created_at=created_at,
    )


def screen_intent(plans: list[Plan], part: range, matrix) -> None:
    """The screen of intent on the vectors just embedded (memory/services/intent.py): a memory it
    flags is quarantined like one the wording screen flagged in ``prepare``."""
    for index in part:
        item = plans[index].prepared
        if item.status == Status.QUARANTINED:
            continue
        reasons = intent_reasons(matrix[index], item.content)
        if reasons:
            item.status = Status.QUARANTINED
            item.quarantine_reasons = [*item.quarantine_reasons, *reasons]
            item.status_reason = "Quarantined: " + "; ".join(item.quarantine_reasons)


def glued(target: Memory, entities: list[Entity]) -> list[Entity]:
    """The entities a NOOP adds to the memory it reinforces: all of them, except that a team-wide
    memory (about no project) repeated inside one project stays team-wide."""
    if (
        any(e.type == EntityType.PROJECT for e in entities)
        and EntityType.PROJECT not in side_of(target).entities
    ):
        return [e for e in entities if e.type != EntityType.PROJECT]
    return entities


def apply_plans(
    plans: list[Plan], *, author, session: Session | None, now, curator: bool
) -> list[StoreResult]:
    """Write what the decisions say: reinforce NOOP targets (keeping the incoming text; an open
    proposal so reinforced may take effect), supersede changed facts and queue them for review, link
    proposals to the memories they would change, and record mentions and audit events."""
    mentions, events, changed, results, reinforced = [], [], [], [], []
    for plan in plans:
        item = plan.prepared
        if plan.operation == NOOP:
            target = plan.existing if plan.batch_twin is None else plans[plan.batch_twin].memory
            tags = list(dict.fromkeys([*target.tags, *item.tags]))
            Memory.objects.for_team(target.team_id).filter(pk=target.pk).update(
                tags=tags, reinforcement_count=F("reinforcement_count") + 1
            )
            target.tags = tags
            target.reinforcement_count += 1
            reinforced.append(target)
            mentions += [(target, entity) for entity in glued(target, plan.entities)]
            plan.decision.compared_with = target
            events.append(
                MemoryEvent(
                    team_id=target.team_id,
                    memory=target,
                    memory_ref=target.pk,
                    action=Action.REINFORCED,
                    actor=author,
                    diff={
                        "source": item.source,
                        "text": item.content,
                        "type": item.memory_type,
                        "category": item.category,
                        "priority": item.priority,
                        "tags": item.tags,
                        "entities": [e.slug for e in plan.entities],
                        "author": getattr(author, "username", None),
                        "agent_name": item.agent_name,
                        "session": str(session.pk) if session else None,
                        "decision": plan.decision.as_dict(),
                        **({"provenance": item.provenance} if item.provenance else {}),
                    },
                )
            )
            results.append(
                StoreResult(
                    NOOP,
                    target,
                    decision=plan.decision,
                    redactions=item.redactions,
                    quarantine_reasons=item.quarantine_reasons,
                )
            )
            continue
        memory, entities = plan.memory, list(plan.entities)
        if plan.supersede is not None:
            old = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=plan.supersede.pk)
            carried = supersede(old, memory, actor=author, now=now, decision=plan.decision.as_dict())
            entities += [e for e in carried if e not in entities]
            plan.supersede = old
        old = plan.supersede or plan.propose
        if old is not None and plan.decision.changed_fact:
            changed.append(
                FactChange(
                    team_id=old.team_id,
                    kind=FactChangeKind.PROPOSAL if plan.propose is not None else FactChangeKind.CHANGED,
                    old=old,
                    new=memory,
                    reason=plan.decision.reason[:1000],
                    changes=plan.decision.as_dict()["changes"],
                    cosine=plan.decision.cosine,
                )
            )
        if plan.propose is not None:
            events.append(
                MemoryEvent(
                    team_id=old.team_id,
                    memory=old,
                    memory_ref=old.pk,
                    action=Action.PROPOSED,
                    actor=author,
                    diff={
                        "proposal": str(memory.pk),
                        "text": memory.content,
                        "author": getattr(author, "username", None),
                        "decision": plan.decision.as_dict(),
                    },
                )
            )
        mentions += [(memory, entity) for entity in entities]
        events.append(
            MemoryEvent(
                team_id=memory.team_id,
                memory=memory,
                memory_ref=memory.pk,
                action=Action.QUARANTINED if item.status == Status.QUARANTINED else Action.CREATED,
                actor=author,
                diff={
                    "operation": plan.operation,
                    "source": item.source,
                    "redactions": item.redactions,
                    "quarantine_reasons": item.quarantine_reasons,
                    "supersedes": str(plan.supersede.pk) if plan.supersede else None,
                    "proposal_for": str(plan.propose.pk) if plan.propose else None,
                    "decision": plan.decision.as_dict(),
                    **({"provenance": item.provenance} if item.provenance else {}),
                },
            )
        )
        results.append(
            StoreResult(
                plan.operation,
                memory,
                superseded=plan.supersede,
                decision=plan.decision,
                proposal_for=plan.propose,
                redactions=item.redactions,
                quarantine_reasons=item.quarantine_reasons,
            )
        )
    EntityMention.objects.bulk_create(
        [
            EntityMention(
                team_id=memory.team_id, memory=memory, entity=entity, raw=entity.slug, resolved=True
            )
            for memory, entity in mentions
        ],
        ignore_conflicts=True,
    )
    for plan in plans:
        if plan.operation != NOOP and (plan.ambiguities or plan.unknown):
            entity_service.record_unresolved(plan.memory, plan.ambiguities, plan.unknown)
    MemoryEvent.objects.bulk_create(events)
    FactChange.objects.bulk_create(changed, ignore_conflicts=True)
    for target in dict.fromkeys(reinforced):
        if proposal_after_reinforcement(target, actor=author, curator=curator) is not None:
            target.refresh_from_db()
    return results
