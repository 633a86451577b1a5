"""Re-apply today's detectors to what is already stored (``manage.py rescan``), for when the rules
improve: secrets found now are redacted in memories (content, source chunk, tags), session
messages, feedback notes and the audit log; memories whose served text now trips the injection
screen are quarantined. Each change is audited; a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from memory import embeddings
from memory.models import Action, FeedbackEvent, Memory, MemoryEvent, SessionMessage, Status
from memory.services.audit import record_event
from memory.services.injection import screen_fields
from memory.services.redaction import redact, redact_value
from memory.services.upsert import content_hash

BATCH = 500


@dataclass
class RescanReport:
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


def rescan_run(*, dry_run: bool = False, progress: Callable[[int, int], None] | None = None) -> RescanReport:
    """Rescan everything stored (see the module docstring). With ``dry_run`` nothing is written."""
    report = RescanReport(dry_run=dry_run)
    total = Memory.objects.count() + SessionMessage.objects.count() + FeedbackEvent.objects.count()
    total += MemoryEvent.objects.count()
    done = 0

    def tick(n: int = 1) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    for memory in Memory.objects.order_by("pk").select_related("author").iterator(chunk_size=BATCH):
        report.memories += 1
        changes, kinds, reasons = _memory_changes(memory)
        if changes:
            report.redacted_memories.append(str(memory.pk))
        if reasons:
            report.quarantined.append(str(memory.pk))
        if not dry_run and (changes or reasons):
            _apply_memory(memory, changes, kinds, reasons)
        tick()
    for message in SessionMessage.objects.order_by("pk").iterator(chunk_size=BATCH):
        report.messages += 1
        text, found = redact(message.content)
        if found:
            report.redacted_messages += 1
            if not dry_run:
                SessionMessage.objects.filter(pk=message.pk).update(content=text)
        tick()
    for event in FeedbackEvent.objects.exclude(note="").order_by("pk").iterator(chunk_size=BATCH):
        report.notes += 1
        text, found = redact(event.note)
        if found:
            report.redacted_notes += 1
            if not dry_run:
                FeedbackEvent.objects.filter(pk=event.pk).update(note=text)
        tick()
    tick(FeedbackEvent.objects.filter(note="").count())
    for event in MemoryEvent.objects.order_by("pk").iterator(chunk_size=BATCH):
        report.events += 1
        diff = redact_value(event.diff)
        if diff != event.diff:
            report.redacted_events += 1
            if not dry_run:
                MemoryEvent.objects.filter(pk=event.pk).update(diff=diff)
        tick()
    return report


@transaction.atomic
def _apply_memory(memory: Memory, changes: dict, kinds: list[str], reasons: list[str]) -> None:
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
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
