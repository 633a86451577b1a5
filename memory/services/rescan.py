"""Re-apply today's detectors to what is already stored (``manage.py rescan``), for when the rules
improve: secrets found now are redacted in memories (content, source chunk, tags), session
messages, feedback notes and the audit log; memories whose served text now trips the injection
screen are quarantined. Each change is audited; a second run changes nothing.

A rescan works on one team's rows (``team``), or on every team's, one team after another
(DESIGN.md §11): each change is made within the row's team.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from memory import embeddings
from memory.models import Action, FeedbackEvent, Memory, MemoryEvent, SessionMessage, Status, Team
from memory.services.audit import record_event
from memory.services.injection import screen_fields
from memory.services.redaction import redact, redact_value
from memory.services.upsert import content_hash

BATCH = 500


@dataclass
class RescanReport:
    teams: list[str] = field(default_factory=list)
    memories: int = 0
    messages: int = 0
    notes: int = 0
    events: int = 0
    redacted_memories: list[str] = field(default_factory=list)
    quarantined: list[str] = field(default_factory=list)
    redacted_messages: int = 0
    redacted_notes: int = 0
    redacted_events: int = 0
    dry_run: bool = False


def _memory_changes(memory: Memory) -> tuple[dict, list[str], list[str]]:
    """What today's rules would change in one memory: new field values, kinds of secrets found,
    injection reasons (only for a memory that is served or waiting to be)."""
    changes, kinds = {}, []
    for name in ("content", "source_chunk"):
        text, found = redact(getattr(memory, name) or "")
        if found:
            changes[name], kinds = text, kinds + found
    tags = []
    for tag in memory.tags:
        text, found = redact(tag)
        tags.append(text)
        kinds += found
    if tags != memory.tags:
        changes["tags"] = tags
    reasons = []
    if memory.status in (Status.ACTIVE, Status.PENDING_REVIEW) and memory.reviewed_by_id is None:
        reasons = screen_fields(
            content=changes.get("content", memory.content),
            source_chunk=changes.get("source_chunk", memory.source_chunk),
            tags=changes.get("tags", memory.tags),
        )
    return changes, kinds, reasons


def rescan_run(
    *,
    team: Team | None = None,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RescanReport:
    """Rescan what ``team`` stored, or with None every team's, one team after another (see the
    module docstring). With ``dry_run`` nothing is written."""
    report = RescanReport(dry_run=dry_run)
    teams = [team] if team is not None else list(Team.objects.order_by("pk"))
    total = sum(
        model.objects.for_team(current).count()
        for current in teams
        for model in (Memory, SessionMessage, FeedbackEvent, MemoryEvent)
    )
    done = 0

    def tick(n: int = 1) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    for current in teams:
        report.teams.append(current.slug)
        _rescan_team(current, report, dry_run=dry_run, tick=tick)
    return report


def _rescan_team(team: Team, report: RescanReport, *, dry_run: bool, tick: Callable[..., None]) -> None:
    memories = Memory.objects.for_team(team).order_by("pk").select_related("author")
    for memory in memories.iterator(chunk_size=BATCH):
        report.memories += 1
        changes, kinds, reasons = _memory_changes(memory)
        if changes:
            report.redacted_memories.append(str(memory.pk))
        if reasons:
            report.quarantined.append(str(memory.pk))
        if not dry_run and (changes or reasons):
            _apply_memory(memory, changes, kinds, reasons)
        tick()
    messages = SessionMessage.objects.for_team(team)
    for message in messages.order_by("pk").iterator(chunk_size=BATCH):
        report.messages += 1
        text, found = redact(message.content)
        if found:
            report.redacted_messages += 1
            if not dry_run:
                messages.filter(pk=message.pk).update(content=text)
        tick()
    feedback = FeedbackEvent.objects.for_team(team)
    for event in feedback.exclude(note="").order_by("pk").iterator(chunk_size=BATCH):
        report.notes += 1
        text, found = redact(event.note)
        if found:
            report.redacted_notes += 1
            if not dry_run:
                feedback.filter(pk=event.pk).update(note=text)
        tick()
    tick(feedback.filter(note="").count())
    events = MemoryEvent.objects.for_team(team)
    for event in events.order_by("pk").iterator(chunk_size=BATCH):
        report.events += 1
        diff = redact_value(event.diff)
        if diff != event.diff:
            report.redacted_events += 1
            if not dry_run:
                events.filter(pk=event.pk).update(diff=diff)
        tick()


@transaction.atomic
def _apply_memory(memory: Memory, changes: dict, kinds: list[str], reasons: list[str]) -> None:
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    fields = []
    for name, value in changes.items():
        setattr(memory, name, value)
        fields.append(name)
    if "content" in changes:
        memory.content_hash = content_hash(memory.content)
        memory.embedding = embeddings.encode_one(memory.content)
        fields += ["content_hash", "embedding"]
    if changes:
        record_event(memory, Action.UPDATED, redactions=kinds, reason="rescan: secrets redacted")
    if reasons:
        memory.status = Status.QUARANTINED
        memory.status_reason = "Quarantined by rescan: " + "; ".join(reasons)
        fields += ["status", "status_reason"]
        record_event(memory, Action.QUARANTINED, quarantine_reasons=reasons, reason="rescan")
    memory.save(update_fields=[*fields, "updated_at"])
