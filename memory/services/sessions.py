"""Agent sessions (DESIGN.md §4.6): registered, fed messages, ended with an outcome.

Messages are idempotent by ``seq`` and redacted before storage. Ending a session records its
outcome, scores it (§4.6), gives every memory the session was shown an implicit helpful or
harmful event, and queues extraction (§4.8, ``services/extraction/``) once that commits.

A session belongs to a team (DESIGN.md §11): an agent's own session id is unique per team and user,
a session is found only inside the caller's team (another team's id answers NotFound like a missing
one), and its messages and recalls carry its team.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from memory.conf import setting
from memory.models import (
    Agent,
    ExtractionStatus,
    FeedbackSource,
    ImplicitLabel,
    Role,
    Session,
    SessionMessage,
    Signal,
    Team,
)
from memory.rows import row_reader
from memory.services import entities as entity_service
from memory.services.errors import InvalidInput, NotFound
from memory.services.extraction import extraction_queue
from memory.services.feedback import feedback_record_many
from memory.services.redaction import redact

MAX_EXTERNAL_ID = 200
MAX_METADATA_CHARS = 10_000
MAX_FILES_TOUCHED = 500
MAX_OUTCOME_TEXT = 8000


def session_resolve(
    *, team: Team, user, reference: str, create: bool = True, agent: str | None = None
) -> Session:
    """A session of ``user`` in ``team`` by our id or by the agent's own session id; an unknown agent
    session id starts a session (agents often ask for context before they register the session).
    A session of another team, by either id, is unknown here: NotFound with ``create=False``, a new
    session of this team otherwise."""
    return _find_or_start(team=team, user=user, reference=reference, create=create, agent=agent)[0]


def _find_or_start(
    *, team: Team, user, reference: str, create: bool, agent: str | None
) -> tuple[Session, bool]:
    if (
        not isinstance(reference, str)
        or not reference.strip()
        or len(reference) > MAX_EXTERNAL_ID
        or "\x00" in reference
    ):
        raise InvalidInput({"session_id": [f"A session id is 1 to {MAX_EXTERNAL_ID} characters."]})
    reference = reference.strip()
    # Read by hand-written statements (memory/rows.py): every search and store of an agent's session
    # looks its session up, and through the ORM that cost 0.7–0.8 ms of Python, 0.2 now
    # (bench/HISTORY.md, stop 29).
    # Both statements are keyed by the team first (rule 3 of the teams plan): a session of another
    # team is never read.
    team_id = team.pk
    try:
        found = row_reader(Session, key=("team", "pk", "user")).read([team_id, uuid.UUID(reference), user.pk])
    except ValueError:
        found = []
    found = found or row_reader(Session, key=("team", "user", "external_id")).read(
        [team_id, user.pk, reference]
    )
    if found:
        return found[0], False
    if not create:
        raise NotFound(f"No session {reference!r}.")
    try:
        with transaction.atomic():
            session = Session.objects.create(
                team=team, user=user, external_id=reference, agent=agent or Agent.OTHER
            )
            return session, True
    except IntegrityError:  # started concurrently by another request of the same agent
        return Session.objects.for_team(team).get(user=user, external_id=reference), False


def _storable_text(value) -> bool:
    """Whether every string inside a JSON value can be stored (no NUL, no lone surrogate)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return "\x00" not in value
    if isinstance(value, dict):
        return all(_storable_text(k) and _storable_text(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_storable_text(item) for item in value)
    return True


@transaction.atomic
def session_start(
    *,
    team: Team,
    user,
    external_id: str,
    agent: str = Agent.OTHER,
    project: str | None = None,
    metadata: dict | None = None,
) -> tuple[Session, bool]:
    """Register an agent session of ``team``; returns it and whether this call created it.
    Idempotent: the same agent session id (of this team and user) gives the same session. The
    project is an entity of the team."""
    errors: dict[str, list[str]] = {}
    if agent not in Agent.values:
        errors["agent"] = [f"'{agent}' is not one of: {', '.join(Agent.values)}."]
    if metadata is not None and (
        not isinstance(metadata, dict)
        or len(json.dumps(metadata)) > MAX_METADATA_CHARS
        or not _storable_text(metadata)
    ):
        errors["metadata"] = [
            f"Metadata is a JSON object of at most {MAX_METADATA_CHARS} characters of text."
        ]
    slug = None
    if project:
        slug = entity_service.normalize_slug(project if ":" in project else f"project:{project}")
        if slug is None:
            errors["project"] = ["A project is a slug (project:name) or a name."]
    if errors:
        raise InvalidInput(errors)
    session, created = _find_or_start(team=team, user=user, reference=external_id, create=True, agent=agent)
    changed = []
    if slug and session.project_id is None:
        session.project = entity_service.entity_get_or_create(slug, team=team)
        changed.append("project")
    if metadata:
        session.metadata = {**session.metadata, **metadata}
        changed.append("metadata")
    if agent != Agent.OTHER and session.agent != agent:
        session.agent = agent
        changed.append("agent")
    if changed:
        session.save(update_fields=[*changed, "updated_at"])
    return session, created


@dataclass(frozen=True)
class AppendResult:
    stored: int
    already_stored: int


def messages_append(*, session: Session, messages: list[dict]) -> AppendResult:
    """Store messages by ``seq``. Re-sending a message (same seq) changes nothing; secrets are
    redacted first. All or nothing: one invalid message stores none."""
    errors: dict[str, list[str]] = {}
    if len(messages) > setting("MAX_MESSAGES_PER_REQUEST"):
        raise InvalidInput(
            {"messages": [f"At most {setting('MAX_MESSAGES_PER_REQUEST')} messages per request."]}
        )
    rows, seen = [], set()
    for index, message in enumerate(messages):
        seq, role, content = message.get("seq"), message.get("role"), message.get("content")
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= 2**31 - 1:
            errors[f"messages[{index}].seq"] = ["seq is a non-negative integer."]
        elif seq in seen:
            errors[f"messages[{index}].seq"] = [f"seq {seq} appears twice in this request."]
        seen.add(seq)
        if role not in Role.values:
            errors[f"messages[{index}].role"] = [f"The role is one of: {', '.join(Role.values)}."]
        if not isinstance(content, str) or len(content) > setting("MAX_MESSAGE_CHARS"):
            errors[f"messages[{index}].content"] = [
                f"Content is text of at most {setting('MAX_MESSAGE_CHARS')} characters."
            ]
        if not errors:
            rows.append(
                SessionMessage(
                    team_id=session.team_id,
                    session=session,
                    seq=seq,
                    role=role,
                    content=redact(content)[0],
                    created_at=message.get("created_at") or timezone.now(),
                )
            )
    if errors:
        raise InvalidInput(errors)
    with transaction.atomic():
        # One appender at a time per session.
        Session.objects.for_team(session.team_id).select_for_update().get(pk=session.pk)
        existing = set(
            session.messages.filter(seq__in=[row.seq for row in rows]).values_list("seq", flat=True)
        )
        new = [row for row in rows if row.seq not in existing]
        if session.messages.count() + len(new) > setting("MAX_SESSION_MESSAGES"):
            raise InvalidInput(
                {"messages": [f"A session keeps at most {setting('MAX_SESSION_MESSAGES')} messages."]}
            )
        SessionMessage.objects.bulk_create(new, ignore_conflicts=True)
    return AppendResult(stored=len(new), already_stored=len(rows) - len(new))


@dataclass(frozen=True)
class ImplicitOutcome:
    score: float
    label: str
    parts: dict


def implicit_score(
    *, duration_ms: int | None, error_count: int, retry_count: int, success: bool | None
) -> ImplicitOutcome:
    """§4.6: ``raw = success×0.4 + duration×0.2 + errors×0.2 + retries×0.2``; ≥ 0.7 helpful,
    ≤ 0.4 harmful, else neutral. An unknown duration scores as medium."""
    fast, slow = setting("OUTCOME_DURATION_MINUTES")
    duration_scores = setting("OUTCOME_DURATION_SCORES")
    if duration_ms is None:
        duration = duration_scores[1]
    else:
        minutes = duration_ms / 60000
        duration = duration_scores[0 if minutes < fast else 1 if minutes <= slow else 2]
    none, few = setting("OUTCOME_ERROR_BOUNDS")
    errors = setting("OUTCOME_ERROR_SCORES")[0 if error_count <= none else 1 if error_count <= few else 2]
    retries = setting("OUTCOME_RETRY_SCORES")[min(retry_count, 2)]
    parts = {"success": 1.0 if success else 0.0, "duration": duration, "errors": errors, "retries": retries}
    score = round(sum(setting("OUTCOME_WEIGHTS")[name] * value for name, value in parts.items()), 4)
    if score >= setting("OUTCOME_HELPFUL_AT"):
        label = ImplicitLabel.HELPFUL
    elif score <= setting("OUTCOME_HARMFUL_AT"):
        label = ImplicitLabel.HARMFUL
    else:
        label = ImplicitLabel.NEUTRAL
    return ImplicitOutcome(score, label, parts)


def session_end(
    *,
    session: Session,
    success: bool | None = None,
    duration_ms: int | None = None,
    error_count: int = 0,
    retry_count: int = 0,
    files_touched: list[str] | None = None,
    summary: str = "",
    evaluation: str = "",
    strategy: str = "",
    ended_at: datetime | None = None,
) -> tuple[Session, bool]:
    """Record the outcome and give the memories the session was shown an implicit event.
    Ending twice changes nothing the second time — unless messages arrived in between (the session
    was resumed): then the new outcome is recorded, what was shown since the last end is rated, and
    the new messages are extracted. Returns the session and whether this call ended it (again)."""
    errors: dict[str, list[str]] = {}
    for name, value in (("error_count", error_count), ("retry_count", retry_count)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            errors[name] = [f"{name} is a non-negative integer."]
    if duration_ms is not None and (
        isinstance(duration_ms, bool) or not isinstance(duration_ms, int) or duration_ms < 0
    ):
        errors["duration_ms"] = ["duration_ms is a non-negative integer."]
    files = list(files_touched or [])
    if len(files) > MAX_FILES_TOUCHED or not all(isinstance(f, str) and len(f) <= 1000 for f in files):
        errors["files_touched"] = [f"At most {MAX_FILES_TOUCHED} paths of at most 1000 characters."]
    for name, value in (("summary", summary), ("evaluation", evaluation), ("strategy", strategy)):
        if not isinstance(value, str) or len(value) > MAX_OUTCOME_TEXT:
            errors[name] = [f"{name} is text of at most {MAX_OUTCOME_TEXT} characters."]
    if errors:
        raise InvalidInput(errors)
    outcome = implicit_score(
        duration_ms=duration_ms, error_count=error_count, retry_count=retry_count, success=success
    )
    now = timezone.now()
    fields = {
        "ended_at": ended_at or now,
        "success": success,
        "duration_ms": duration_ms,
        "error_count": error_count,
        "retry_count": retry_count,
        "files_touched": files,
        "summary": redact(summary)[0],
        "evaluation": redact(evaluation)[0],
        "strategy": redact(strategy)[0],
        "implicit_score": outcome.score,
        "implicit_label": outcome.label,
        "updated_at": now,
    }
    sessions = Session.objects.for_team(session.team_id)
    with transaction.atomic():
        last_seq = session.messages.aggregate(last=Max("seq"))["last"]
        previous_end = sessions.filter(pk=session.pk).values_list("ended_at", "ended_through_seq").first()
        claimed = sessions.filter(pk=session.pk, ended_at__isnull=True).update(
            **fields, ended_through_seq=last_seq
        )
        resumed = False
        if not claimed and previous_end and previous_end[0] is not None and last_seq is not None:
            # Resumed and ended again (DESIGN.md §4.8): new messages since the last end are learnt from,
            # and the new outcome is recorded; an end with nothing new changes nothing.
            earlier = previous_end[1]
            if earlier is None or last_seq > earlier:
                guard = (
                    {"ended_through_seq__isnull": True} if earlier is None else {"ended_through_seq": earlier}
                )
                resumed = bool(
                    sessions.filter(pk=session.pk, **guard).update(**fields, ended_through_seq=last_seq)
                )
        session.refresh_from_db()
        if (claimed or resumed) and outcome.label != ImplicitLabel.NEUTRAL:
            signal = Signal.HELPFUL if outcome.label == ImplicitLabel.HELPFUL else Signal.HARMFUL
            recalls = session.recalls.all()
            if resumed:  # each end rates what was shown since the end before
                recalls = recalls.filter(surfaced_at__gt=previous_end[0])
            feedback_record_many(
                team=session.team_id,
                memory_ids=list(recalls.values_list("memory_id", flat=True)),
                signal=signal,
                source=FeedbackSource.IMPLICIT,
                value=outcome.score,
                user=session.user,
                session=session,
            )
        if resumed:
            sessions.filter(
                pk=session.pk, extraction_status__in=[ExtractionStatus.DONE, ExtractionStatus.FAILED]
            ).update(
                extraction_status=ExtractionStatus.PENDING,
                extraction_attempts=0,
                extraction_error="",
                extraction_lease_until=None,
            )
            session.refresh_from_db()
        if claimed or resumed:
            extraction_queue(session)
    return session, bool(claimed or resumed)
