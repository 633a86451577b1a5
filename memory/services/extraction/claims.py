"""Who runs an extraction, and recovery: claims with leases renewed by a heartbeat, the end of a
run, release after a transient failure, retries with backoff, queueing, a curator's re-run, and
the sweep that hands out lost or abandoned extractions (the module docstring of the package says
how they fit)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Case, F, Q, When
from django.utils import timezone

from memory.conf import setting
from memory.models import (
    ExtractionStatus,
    Session,
)
from memory.services.errors import InvalidInput

logger = logging.getLogger(__name__)


def worker_identity() -> str:
    return f"{settings.MEMORYLANE_HOST}:{os.getpid()}"


# Sessions this process is extracting right now: a claim of ours that is not in here was left behind
# by an attempt of ours that the database interrupted, and is resumed rather than waited out.
_ACTIVE: set[str] = set()

# Phrases of a connection that failed or was lost (psycopg and PostgreSQL's own words), as opposed to
# an operational error of a healthy server (a lock timeout, a cancelled statement).
OUTAGE_PHRASES = (
    "connection refused",
    "could not connect",
    "connection failed",
    "server closed the connection",
    "connection already closed",
    "connection is closed",
    "terminating connection",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery",
    "no such file or directory",
    "consuming input failed",
    "connection timeout expired",
    "ssl syscall error",
    "server conn crashed",
    "lost synchronization with server",
)


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be reached (or went away mid-way): such a
    failure is no fault of the session's and spends no attempt."""
    if isinstance(error, InterfaceError):
        return True
    if not isinstance(error, OperationalError):
        return False
    text = str(error).lower()
    return any(phrase in text for phrase in OUTAGE_PHRASES)


def _lease_end(now):
    return now + timedelta(seconds=setting("EXTRACTION_LEASE_SECONDS"))


def lease_lapsed(*, now, lease_until, claimed_at) -> Q | bool:
    """Whether a running claim may be taken over: its lease ran out, or its run has gone on past
    ``EXTRACTION_MAX_RUN_SECONDS`` plus a lease (a hung run, or one from before leases were renewed)."""
    hung_before = now - timedelta(
        seconds=setting("EXTRACTION_MAX_RUN_SECONDS") + setting("EXTRACTION_LEASE_SECONDS")
    )
    if lease_until is not None and lease_until < now:
        return True
    return claimed_at is None or claimed_at < hung_before


def _lapsed_q(now) -> Q:
    hung_before = now - timedelta(
        seconds=setting("EXTRACTION_MAX_RUN_SECONDS") + setting("EXTRACTION_LEASE_SECONDS")
    )
    return (
        Q(extraction_lease_until__lt=now)
        | Q(extraction_claimed_at__isnull=True)
        | Q(extraction_claimed_at__lt=hung_before)
    )


def team_of(session_id, team_id=None) -> int | None:
    """The team an extraction of ``session_id`` works in: the one its task carries
    (:func:`extraction_queue`), or, for a task queued before teams or a command or test naming a
    session, the one the session's own row says (None: no such session)."""
    if team_id is not None:
        return team_id
    return Session.objects.filter(pk=session_id).values_list("team_id", flat=True).first()


def team_sessions(session_id, team_id=None):
    """The sessions of the team ``session_id`` belongs to (:func:`team_of`): where every read and
    write of an extraction starts. A session that does not exist gives no rows."""
    return Session.objects.for_team(team_of(session_id, team_id))


def extraction_claim(session_id, team_id=None) -> Session | None:
    """Take an ended session for this process (pending → running, with a lease), or take over a
    running one whose lease lapsed (its worker died or hung, on any host), or resume our own claim
    left behind by a database outage (without spending another attempt). None if another worker
    holds it, it is done, or it has not ended (or is not a session of ``team_id``)."""
    now = timezone.now()
    identity = worker_identity()
    sessions = team_sessions(session_id, team_id)
    ended = sessions.filter(pk=session_id, ended_at__isnull=False)
    fields = {
        "extraction_status": ExtractionStatus.RUNNING,
        "extraction_claimed_at": now,
        "extraction_claimed_by": identity,
        "extraction_lease_until": _lease_end(now),
        "updated_at": now,
    }
    claimable = Q(extraction_status=ExtractionStatus.PENDING) | (
        Q(extraction_status=ExtractionStatus.RUNNING) & _lapsed_q(now)
    )
    attempts = F("extraction_attempts") + 1
    if str(session_id) not in _ACTIVE:
        # Our own claim, left running by an outage, is resumed without spending an attempt (unless
        # this process is still running it): one statement either way.
        ours = Q(extraction_status=ExtractionStatus.RUNNING, extraction_claimed_by=identity)
        claimable |= ours
        attempts = Case(When(ours, then=F("extraction_attempts")), default=attempts)
    claimed = ended.filter(claimable).update(**fields, extraction_attempts=attempts)
    return sessions.select_related("project", "team", "user").get(pk=session_id) if claimed else None


@contextlib.contextmanager
def lease_heartbeat(session: Session):
    """Renew ``session``'s lease every EXTRACTION_HEARTBEAT_SECONDS while the body runs, until the run
    reaches EXTRACTION_MAX_RUN_SECONDS (then the lease lapses and another worker may take over; this
    run's result is refused when it finishes). A renewal that fails (the database is away) is skipped."""
    stop = threading.Event()
    started = time.monotonic()

    def renew() -> None:
        try:
            while not stop.wait(setting("EXTRACTION_HEARTBEAT_SECONDS")):
                if time.monotonic() - started > setting("EXTRACTION_MAX_RUN_SECONDS"):
                    logger.warning(
                        "extraction of %s is past its maximum run time; its lease will lapse", session.pk
                    )
                    return
                try:
                    Session.objects.for_team(session.team_id).filter(
                        pk=session.pk,
                        extraction_status=ExtractionStatus.RUNNING,
                        extraction_claimed_at=session.extraction_claimed_at,
                    ).update(extraction_lease_until=_lease_end(timezone.now()))
                except (OperationalError, InterfaceError) as exc:
                    logger.warning("could not renew the lease of %s: %s", session.pk, exc)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=renew, name=f"lease-{session.pk}", daemon=True)
    _ACTIVE.add(str(session.pk))
    thread.start()
    try:
        yield
    finally:
        stop.set()
        _ACTIVE.discard(str(session.pk))
        thread.join(timeout=5)


def claim_finish(
    session: Session, status: str, *, error: str = "", report: dict | None = None, **fields
) -> bool:
    """Set the outcome of our claim (and any other ``fields`` of the session); False when the claim
    was lost (another worker took over)."""
    return bool(
        Session.objects.for_team(session.team_id)
        .filter(
            pk=session.pk,
            extraction_status=ExtractionStatus.RUNNING,
            extraction_claimed_at=session.extraction_claimed_at,
        )
        .update(
            extraction_status=status,
            extraction_error=error,
            extraction_report=report if report is not None else F("extraction_report"),
            updated_at=timezone.now(),
            **fields,
        )
    )


def extraction_release(session_id, error: Exception, *, due_in: float = 0.0, team_id=None) -> bool:
    """After a transient failure: back to pending (for the retry, due in ``due_in`` seconds), or failed
    once the attempts are spent. A database outage (:func:`is_outage`) spends no attempt. Returns
    whether a retry should follow."""
    sessions = team_sessions(session_id, team_id)
    session = sessions.filter(pk=session_id).first()
    if session is None:
        return False
    outage = is_outage(error)
    spent = not outage and session.extraction_attempts >= setting("EXTRACTION_MAX_ATTEMPTS")
    if session.extraction_status != ExtractionStatus.RUNNING:  # failed before the claim
        return session.extraction_status == ExtractionStatus.PENDING and not spent
    message = f"{error.__class__.__name__}: {error}"[:2000]
    if spent:
        claim_finish(session, ExtractionStatus.FAILED, error=message)
        return False
    released = claim_finish(session, ExtractionStatus.PENDING, error=message)
    if released:
        changes = {"extraction_lease_until": timezone.now() + timedelta(seconds=due_in)}
        if outage and session.extraction_attempts > 0:
            changes["extraction_attempts"] = F("extraction_attempts") - 1  # the outage's, not the session's
        sessions.filter(pk=session.pk, extraction_status=ExtractionStatus.PENDING).update(**changes)
    return released


def extraction_fail(session_id, error: Exception, *, team_id=None) -> None:
    """A permanent failure: the session ends ``failed`` with the error kept."""
    session = team_sessions(session_id, team_id).filter(pk=session_id).first()
    if session is not None and session.extraction_status == ExtractionStatus.RUNNING:
        claim_finish(session, ExtractionStatus.FAILED, error=f"{error.__class__.__name__}: {error}"[:2000])


def retry_delay(attempt: int, rng=None) -> float:
    """Exponential backoff with jitter: uniform(c/2, c) where c = min(max, base × 2^attempt)."""
    import random

    ceiling = min(
        setting("EXTRACTION_RETRY_MAX_SECONDS"), setting("EXTRACTION_RETRY_BASE_SECONDS") * 2**attempt
    )
    return (rng or random).uniform(ceiling / 2, ceiling)


def extraction_queue(session: Session) -> None:
    """Queue extraction once the current transaction commits; the task carries the session's team."""
    from memory.tasks import extract_session_task

    extract_session_task.delay_on_commit(str(session.pk), session.team_id)


@transaction.atomic
def extraction_requeue(*, session: Session, user=None) -> Session:
    """Run extraction again (a curator's Re-run): back to pending with a fresh attempt count, over
    the whole transcript (the upsert reinforces what is already stored instead of storing it twice)."""
    if session.ended_at is None:
        raise InvalidInput({"session": ["The session has not ended; there is nothing to extract yet."]})
    Session.objects.for_team(session.team_id).filter(pk=session.pk).update(
        extraction_status=ExtractionStatus.PENDING,
        extraction_error="",
        extraction_attempts=0,
        extracted_through_seq=None,
        extraction_claimed_at=None,
        extraction_claimed_by="",
        extraction_lease_until=None,
        updated_at=timezone.now(),
    )
    session.refresh_from_db()
    extraction_queue(session)
    return session


def _process_alive(identity: str) -> bool | None:
    """Whether the process behind a claim still runs: None when it is on another host."""
    host, _, pid = identity.rpartition(":")
    if host != settings.MEMORYLANE_HOST or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def extraction_sweep(*, now=None) -> list[str]:
    """Hand out again what was lost: claims whose lease lapsed or whose worker process on this host
    is gone, and ended sessions still pending ``EXTRACTION_LOST_AFTER_SECONDS`` after their task was
    due (its message was lost with a killed worker or broker). Returns the ids queued.

    Deployment-wide: it looks at the sessions of every team (only at their extraction state) and
    queues each with its own team; every change it makes to a session is made within that team."""
    now = now or timezone.now()
    queued = []
    running = Session.objects.filter(extraction_status=ExtractionStatus.RUNNING)
    for session in running:
        lapsed = lease_lapsed(
            now=now, lease_until=session.extraction_lease_until, claimed_at=session.extraction_claimed_at
        )
        if not lapsed and _process_alive(session.extraction_claimed_by) is not False:
            continue
        reset = (
            Session.objects.for_team(session.team_id)
            .filter(
                pk=session.pk,
                extraction_status=ExtractionStatus.RUNNING,
                extraction_claimed_at=session.extraction_claimed_at,
            )
            .update(extraction_status=ExtractionStatus.PENDING, extraction_lease_until=now, updated_at=now)
        )
        if reset:
            logger.warning(
                "extraction of session %s was abandoned by %s; queued again",
                session.pk,
                session.extraction_claimed_by,
            )
            queued.append(session)
    overdue = now - timedelta(seconds=setting("EXTRACTION_LOST_AFTER_SECONDS"))
    lost = list(
        Session.objects.filter(extraction_status=ExtractionStatus.PENDING, ended_at__lt=overdue).filter(
            Q(extraction_lease_until__lt=overdue)
            | Q(extraction_lease_until__isnull=True, updated_at__lt=overdue)
        )
    )
    by_team: dict[int, list] = {}
    for session in lost:
        by_team.setdefault(session.team_id, []).append(session.pk)
    for team_id, pks in by_team.items():
        # Due again from now: a backlog longer than a sweep period is not queued once per sweep.
        Session.objects.for_team(team_id).filter(
            pk__in=pks, extraction_status=ExtractionStatus.PENDING
        ).update(extraction_lease_until=now)
    queued += lost
    for session in queued:
        extraction_queue(session)
    return [str(session.pk) for session in queued]
