"""Extraction claims are leases: renewed while a worker works, taken over on any host once lapsed,
resumed after a database outage without spending an attempt (memory/services/extraction/claims.py)."""

from __future__ import annotations

from datetime import timedelta

from django.db import InterfaceError, OperationalError
from django.utils import timezone

from memory.models import ExtractionStatus, Session
from memory.services import extraction


def test_a_lapsed_lease_is_taken_over_by_a_worker_on_any_host(ended_session):
    session = ended_session()
    extraction.extraction_claim(session.pk)
    Session.objects.filter(pk=session.pk).update(
        extraction_claimed_by="host-b:4242", extraction_lease_until=timezone.now() - timedelta(seconds=1)
    )
    taken = extraction.extraction_claim(session.pk)
    assert taken is not None and taken.extraction_claimed_by == extraction.worker_identity()
    assert taken.extraction_attempts == 2 and taken.extraction_lease_until > timezone.now()


def test_a_live_lease_of_another_host_is_left_alone_by_claims_and_the_sweep(ended_session):
    session = ended_session()
    extraction.extraction_claim(session.pk)
    Session.objects.filter(pk=session.pk).update(extraction_claimed_by="host-b:4242")
    assert extraction.extraction_claim(session.pk) is None
    assert extraction.extraction_sweep() == []
    assert Session.objects.get(pk=session.pk).extraction_status == ExtractionStatus.RUNNING


def test_a_hung_run_past_its_maximum_time_is_taken_over_even_if_its_lease_looks_fresh(
    ended_session, settings
):
    session = ended_session()
    extraction.extraction_claim(session.pk)
    hour_ago = timezone.now() - timedelta(hours=1)
    Session.objects.filter(pk=session.pk).update(
        extraction_claimed_by="host-b:1", extraction_claimed_at=hour_ago
    )
    assert extraction.extraction_sweep() == [str(session.pk)]


def test_our_own_claim_left_by_an_outage_is_resumed_without_another_attempt(ended_session):
    session = ended_session()
    first = extraction.extraction_claim(session.pk)
    assert first.extraction_attempts == 1
    resumed = extraction.extraction_claim(session.pk)  # not running in this process: left behind
    assert resumed is not None and resumed.extraction_attempts == 1


def test_a_release_after_an_outage_spends_no_attempt_and_is_due_soon(ended_session):
    session = ended_session()
    extraction.extraction_claim(session.pk)
    error = OperationalError(
        'connection failed: connection to server at "127.0.0.1", port 5 failed: Connection refused'
    )
    assert extraction.extraction_release(session.pk, error, due_in=10) is True
    session.refresh_from_db()
    assert session.extraction_status == ExtractionStatus.PENDING and session.extraction_attempts == 0
    assert timedelta(seconds=8) < session.extraction_lease_until - timezone.now() <= timedelta(seconds=10)


def test_outages_are_told_from_other_operational_errors():
    assert extraction.is_outage(OperationalError("server closed the connection unexpectedly"))
    assert extraction.is_outage(OperationalError("FATAL: the database system is starting up"))
    assert extraction.is_outage(InterfaceError("connection already closed"))
    assert not extraction.is_outage(OperationalError("canceling statement due to lock timeout"))
    assert not extraction.is_outage(OSError("disk full"))


def test_the_sweep_queues_a_pending_session_a_minute_after_its_task_was_due(ended_session):
    session = ended_session()
    now = timezone.now()
    Session.objects.filter(pk=session.pk).update(extraction_lease_until=now - timedelta(seconds=30))
    assert extraction.extraction_sweep(now=now) == []
    Session.objects.filter(pk=session.pk).update(
        extraction_lease_until=now - timedelta(seconds=61), ended_at=now - timedelta(seconds=61)
    )
    assert extraction.extraction_sweep(now=now) == [str(session.pk)]
    assert extraction.extraction_sweep(now=now) == []  # due again from now: not queued every sweep
