"""Every memory has a history (DESIGN.md §4.3): the versions of its text and its timeline — edits,
supersessions, reinforcements (with the incoming text and who sent it), proposals, feedback and
reviews — read from the audit log, the feedback events and the changed facts; and a curator's
restore of an earlier version, audited like any other edit.

A memory's *versions* run across its supersession chain: the texts of the memories it replaced
(transitively, each with its own edits), then its own earlier texts, then its current text. A memory
another one was merged into is not an earlier version of it (the merge is on the timeline instead).
Every read is of the memory's team.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.db import transaction
from django.db.models import Q

from memory.models import Action, FactChange, FactChangeKind, FeedbackEvent, Memory, MemoryEvent
from memory.services import curation
from memory.services.audit import record_event
from memory.services.errors import InvalidInput, InvalidTransition

# How far back a supersession chain is followed: far beyond any real chain, short of a loop.
MAX_CHAIN = 100


@dataclass(frozen=True)
class Version:
    """One text a memory (or one it replaced) had: ``number`` from 1, oldest first."""

    number: int
    text: str | None  # None: a text the reader may not see (a memory outside ``readable``)
    memory: uuid.UUID  # the memory that had this text
    at: datetime  # when it got this text
    current: bool = False


@dataclass(frozen=True)
class HistoryEntry:
    """One thing that happened to a memory. ``memory``: the other memory it concerns (a successor,
    predecessor, proposal, merge partner), if any; ``details``: what matters for its kind."""

    at: datetime
    kind: str
    actor: str | None
    summary: str
    memory: uuid.UUID | None = None
    details: dict = field(default_factory=dict)


def memory_versions(memory: Memory, *, readable=None) -> list[Version]:
    """The texts ``memory`` has had, oldest first and numbered from 1; the last is its current text.
    With ``readable`` (a queryset of the memories the reader may see), the texts of replaced
    memories outside it are withheld (``text`` None) but keep their number."""
    chain = _predecessors(memory)
    hidden = _unreadable(readable, [m.pk for m in chain])
    texts: list[tuple[str | None, uuid.UUID, datetime]] = []
    edits = _edits(memory.team_id, [m.pk for m in [*chain, memory]])
    for owner in [*chain, memory]:
        for text, at in _texts_of(owner, edits.get(owner.pk, [])):
            texts.append((None if owner.pk in hidden else text, owner.pk, at))
    last = len(texts)
    return [
        Version(number, text, owner, at, current=number == last)
        for number, (text, owner, at) in enumerate(texts, start=1)
    ]


def memory_history(memory: Memory, *, readable=None) -> list[HistoryEntry]:
    """``memory``'s timeline, oldest first. With ``readable`` (a queryset of the memories the reader
    may see), the text of another memory outside it — a pending proposal, a quarantined one — is
    withheld, and so is its id."""
    team = memory.team_id
    entries: list[HistoryEntry] = []
    events = (
        MemoryEvent.objects.for_team(team)
        .filter(memory=memory)
        # Feedback comes from its own events (with the note and session); proposals from the changed
        # facts (with their state): their audit entries would say the same twice.
        .exclude(action__in=[Action.FEEDBACK, Action.PROPOSED])
        .select_related("actor")
        .order_by("created_at", "pk")
    )
    merged_in: set[str] = set()
    for event in events:
        entry = _entry(event)
        if event.action == Action.CREATED and memory.created_at < entry.at:
            # Stored when the memory says (an import keeps its date), before what storing it caused.
            entry = replace(entry, at=memory.created_at)
        entries.append(entry)
        if event.action == Action.MERGED and event.diff.get("merged_from"):
            merged_in.add(str(event.diff["merged_from"]))
    entries += _supersedes(memory, merged_in)
    entries += _proposals(memory)
    entries += [_feedback(event) for event in _feedback_events(memory)]
    others = {entry.memory for entry in entries if entry.memory is not None}
    hidden = _unreadable(readable, others)
    if hidden:
        entries = [_withheld(entry) if entry.memory in hidden else entry for entry in entries]
    # Stable: entries of the same instant keep the order above (an event before what it caused).
    return sorted(entries, key=lambda entry: entry.at)


@transaction.atomic
def memory_restore_version(*, memory: Memory, version: int, actor) -> Memory:
    """A curator sets ``memory``'s text back to its version ``version`` (memory_versions): an edit
    like any other (redacted, re-hashed, re-embedded, audited as UPDATED), plus a RESTORED event with
    the version. Raises InvalidInput for a version that does not exist, InvalidTransition when it is
    the current text already or another live memory has it; then nothing changed."""
    memory = Memory.objects.for_team(memory.team_id).select_for_update().get(pk=memory.pk)
    versions = memory_versions(memory)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= len(versions):
        raise InvalidInput({"version": [f"Choose a version from 1 to {len(versions)}."]})
    chosen = versions[version - 1]
    if chosen.text == memory.content:
        raise InvalidTransition(f"Version {version} is the current text already.")
    try:
        with transaction.atomic():
            memory = curation.memory_update(memory=memory, actor=actor, content=chosen.text)
    except InvalidInput as exc:
        raise InvalidTransition(f"Version {version} cannot be restored: {exc.message}") from None
    record_event(memory, Action.RESTORED, actor=actor, version=version, from_memory=str(chosen.memory))
    return memory


# --- versions -------------------------------------------------------------------------------------


def _predecessors(memory: Memory) -> list[Memory]:
    """The memories ``memory`` replaced, transitively, oldest first; not those merged into it."""
    team = memory.team_id
    chain: list[Memory] = []
    seen = {memory.pk}
    frontier = [memory.pk]
    while frontier and len(chain) < MAX_CHAIN:
        # A memory merged into another is superseded by it too; the survivor's MERGED event names it.
        merged = _merged_into(team, frontier)
        older = [
            m
            for m in Memory.objects.for_team(team).filter(superseded_by__in=frontier).order_by("created_at")
            if m.pk not in seen and str(m.pk) not in merged
        ]
        seen.update(m.pk for m in older)
        chain = older + chain
        frontier = [m.pk for m in older]
    return sorted(chain, key=lambda m: m.created_at)[-MAX_CHAIN:]


def _merged_into(team_id, memory_ids: list) -> set[str]:
    """The ids (as text) of the memories merged into any of ``memory_ids``."""
    diffs = (
        MemoryEvent.objects.for_team(team_id)
        .filter(memory_id__in=memory_ids, action=Action.MERGED, diff__has_key="merged_from")
        .values_list("diff", flat=True)
    )
    return {str(diff["merged_from"]) for diff in diffs}


def _edits(team_id, memory_ids: list) -> dict:
    """memory id → its UPDATED events that changed the text, oldest first."""
    found: dict = {}
    events = (
        MemoryEvent.objects.for_team(team_id)
        .filter(memory_id__in=memory_ids, action=Action.UPDATED, diff__has_key="content")
        .order_by("created_at", "pk")
    )
    for event in events:
        found.setdefault(event.memory_id, []).append(event)
    return found


def _texts_of(memory: Memory, edits: list[MemoryEvent]) -> list[tuple[str, datetime]]:
    """The texts one memory had, with when it got each: as stored, after each edit, and now."""
    texts: list[tuple[str, datetime]] = []
    for event in edits:
        old, new = event.diff["content"]
        if not texts:
            texts.append((old, memory.created_at))
        texts.append((new, event.created_at))
    if not texts or texts[-1][0] != memory.content:
        # Never edited, or changed without a recorded text (a rescan's redaction): what it says now.
        texts.append((memory.content, memory.updated_at if texts else memory.created_at))
    return texts


def _unreadable(readable, ids) -> set:
    ids = set(ids)
    if readable is None or not ids:
        return set()
    return ids - set(readable.filter(pk__in=ids).values_list("pk", flat=True))


# --- the timeline ---------------------------------------------------------------------------------


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


def _uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value)) if value else None
    except ValueError:
        return None


def _reason(diff: dict) -> str:
    decision = diff.get("decision") or {}
    return decision.get("reason", "") if isinstance(decision, dict) else ""


def _with_reason(text: str, reason: str) -> str:
    return f"{text} ({reason})" if reason else text


KINDS = {Action.UPDATED: "edited"}


def _entry(event: MemoryEvent) -> HistoryEntry:
    """An audit event as a timeline entry."""
    diff = event.diff or {}
    kind = KINDS.get(event.action, event.action)
    actor = _username(event.actor)
    summary, other, details = _describe(event.action, diff)
    return HistoryEntry(event.created_at, kind, actor, summary, other, details)


def _describe(action: str, diff: dict) -> tuple[str, uuid.UUID | None, dict]:
    """What an audit event says, in words, the other memory it concerns and its details."""
    if action == Action.CREATED:
        operation = diff.get("operation") or "ADD"
        if diff.get("supersedes"):
            summary = _with_reason("Stored, replacing an earlier memory", _reason(diff))
        elif diff.get("proposal_for"):
            summary = _with_reason("Stored as a proposed change of a settled memory", _reason(diff))
        else:
            summary = f"Stored ({operation}{', ' + diff['source'] if diff.get('source') else ''})"
        other = _uuid(diff.get("supersedes") or diff.get("proposal_for"))
        details = {"operation": operation, "source": diff.get("source"), "reason": _reason(diff)}
        if diff.get("provenance"):
            details["provenance"] = diff["provenance"]
        return summary, other, details
    if action == Action.QUARANTINED:
        reasons = diff.get("quarantine_reasons") or []
        return (
            "Quarantined until a curator approves it" + (f": {'; '.join(reasons)}" if reasons else ""),
            None,
            {"reasons": reasons},
        )
    if action == Action.UPDATED:
        changed = [name for name in diff if name not in ("reason", "redactions")]
        details: dict = {"fields": changed}
        if "content" in diff:
            details["old_text"], details["new_text"] = diff["content"]
        if diff.get("redactions"):
            details["redactions"] = diff["redactions"]
            return (
                "Secrets redacted from the text" + (f" ({diff['reason']})" if diff.get("reason") else ""),
                None,
                details,
            )
        if changed == ["content"]:
            return "Text edited", None, details
        return f"Edited: {', '.join(name.replace('_', ' ') for name in changed)}", None, details
    if action == Action.SUPERSEDED:
        other = _uuid(diff.get("superseded_by"))
        decision = diff.get("decision") or {}
        how = decision.get("how") if isinstance(decision, dict) else None
        return (
            _with_reason("Replaced by a newer memory", how or _reason(diff)),
            other,
            {"reason": how or _reason(diff)},
        )
    if action == Action.REINFORCED:
        sender = diff.get("author")
        via = f" via {diff['agent_name']}" if diff.get("agent_name") else ""
        return (
            f"Reinforced by {sender or 'an agent'}{via}: the same fact stored again",
            None,
            {
                "text": diff.get("text"),
                "sender": sender,
                "agent_name": diff.get("agent_name") or "",
                "session": diff.get("session"),
                "source": diff.get("source"),
                "reason": _reason(diff),
                **({"provenance": diff["provenance"]} if diff.get("provenance") else {}),
            },
        )
    if action == Action.APPROVED:
        return "Approved", None, {"status": diff.get("status")}
    if action == Action.REJECTED:
        reason = diff.get("reason") or ""
        return "Rejected" + (f": {reason}" if reason else ""), None, {"reason": reason}
    if action == Action.REVIEWED:
        resolution = diff.get("resolution")
        words = {
            "confirm": "Change confirmed",
            "undo": "Change undone",
            "both_true": "Kept both as true",
        }.get(resolution, "Reviewed")
        if diff.get("restored"):
            words += ": this memory is current again"
        elif diff.get("how"):
            words += f" ({diff['how']})"
        return (
            words,
            _uuid(diff.get("old")),
            {"resolution": resolution, "fact_change": diff.get("fact_change")},
        )
    if action in (Action.PROMOTED, Action.DEPRECATED, Action.MATURITY, Action.RESET):
        before, after = (diff.get("maturity") or [None, None])[:2]
        reason = diff.get("reason") or ""
        words = {
            Action.PROMOTED: "Promoted to proven",
            Action.DEPRECATED: "Deprecated" + (f": {reason}" if reason else ""),
            Action.RESET: f"Maturity reset: follows feedback again ({after})",
            Action.MATURITY: f"Maturity {before} → {after}",
        }[action]
        return words, None, {"maturity": [before, after], **({"reason": reason} if reason else {})}
    if action == Action.MERGED:
        if diff.get("merged_into"):
            return "Merged into another memory", _uuid(diff["merged_into"]), {}
        if diff.get("merged_from"):
            return "Another memory was merged into this one", _uuid(diff["merged_from"]), {}
        return "Merged from several memories", None, {"sources": diff.get("sources") or []}
    if action == Action.SPLIT:
        return (
            "A reinforcement was split out into a memory of its own",
            _uuid(diff.get("into")),
            {"reinforcement": diff.get("reinforcement")},
        )
    if action == Action.RESTORED:
        return f"Version {diff.get('version')} restored", None, {"version": diff.get("version")}
    if action == Action.INVERTED:
        return "Inverted into an anti-pattern", _uuid(diff.get("anti_pattern")), {}
    if action == Action.CONDENSED:
        return "Condensed into a reflection", None, {"sources": diff.get("sources") or []}
    return action.replace("_", " ").capitalize(), None, {}


def _supersedes(memory: Memory, merged_in: set[str]) -> list[HistoryEntry]:
    """The memories this one replaced (not those merged into it), at the moment each was replaced."""
    older = {
        m.pk: m
        for m in Memory.objects.for_team(memory.team_id).filter(superseded_by=memory)
        if str(m.pk) not in merged_in
    }
    if not older:
        return []
    events = {
        event.memory_id: event
        for event in MemoryEvent.objects.for_team(memory.team_id)
        .filter(memory_id__in=list(older), action=Action.SUPERSEDED, diff__superseded_by=str(memory.pk))
        .select_related("actor")
        .order_by("created_at")
    }
    entries = []
    for pk, old in older.items():
        event = events.get(pk)
        diff = event.diff if event else {}
        decision = diff.get("decision") or {}
        reason = (decision.get("how") if isinstance(decision, dict) else None) or _reason(diff)
        entries.append(
            HistoryEntry(
                event.created_at if event else old.valid_until or old.updated_at,
                "supersedes",
                _username(event.actor) if event else None,
                _with_reason("Replaced an earlier memory", reason),
                pk,
                {"text": old.content, "reason": reason},
            )
        )
    return entries


def _proposals(memory: Memory) -> list[HistoryEntry]:
    """Proposed changes of this memory, and — when it is a proposal — the memory it would change."""
    changes = (
        FactChange.objects.for_team(memory.team_id)
        .filter(Q(old=memory) | Q(new=memory), kind=FactChangeKind.PROPOSAL)
        .select_related("old", "new", "new__author")
    )
    entries = []
    for change in changes:
        proposer = _username(change.new.author)
        details = {"status": change.status, "reason": change.reason, "fact_change": change.pk}
        if change.old_id == memory.pk:
            summary = f"{proposer or 'An agent'} proposed a change ({change.reason}): {change.status}"
            other, text = change.new_id, change.new.content
        else:
            summary = f"Proposed as a change of a settled memory ({change.reason}): {change.status}"
            other, text = change.old_id, change.old.content
        entries.append(
            HistoryEntry(change.created_at, "proposed", proposer, summary, other, {**details, "text": text})
        )
    return entries


def _feedback_events(memory: Memory):
    return (
        FeedbackEvent.objects.for_team(memory.team_id)
        .filter(memory=memory)
        .select_related("user", "session")
        .order_by("created_at", "pk")
    )


def _feedback(event: FeedbackEvent) -> HistoryEntry:
    who = "a session's outcome" if event.source == "implicit" else _username(event.user) or "someone"
    summary = f"Rated {event.signal} by {who}" + (f": “{event.note}”" if event.note else "")
    return HistoryEntry(
        event.created_at,
        "feedback",
        _username(event.user),
        summary,
        None,
        {
            "signal": event.signal,
            "source": event.source,
            "value": event.value,
            "note": event.note,
            "session": str(event.session.external_id) if event.session else None,
        },
    )


WITHHELD = {
    "proposed": "A change was proposed by someone; it awaits a curator",
    "supersedes": "Replaced an earlier memory",
    "superseded": "Replaced by a newer memory",
}


def _withheld(entry: HistoryEntry) -> HistoryEntry:
    """The entry without the other memory's id, text and reason, for a reader who may not see that
    memory (a pending proposal, a quarantined text)."""
    details = {k: v for k, v in entry.details.items() if k not in ("text", "reason")}
    summary = WITHHELD.get(entry.kind, entry.summary)
    return HistoryEntry(entry.at, entry.kind, entry.actor, summary, None, {**details, "withheld": True})
