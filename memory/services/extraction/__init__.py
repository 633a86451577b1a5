"""The memory catcher (DESIGN.md §4.8): an ended session's outcome and transcript become memories.

A worker claims a session with a conditional update (pending → running), finds candidates —
with the rules, or with the optional LLM — and stores them through the store service (§4.3)
in one transaction that also marks the session done. The store's upsert decides each candidate:
a lesson the team already has (of a compatible scope, every content-bearing token the same) is a
NOOP that reinforces it, so running extraction twice, or again after a worker died mid-way, stores
nothing new; a changed lesson supersedes the old one for a curator's review.

A claim is a lease (``extraction_lease_until``): the worker renews it every
``EXTRACTION_HEARTBEAT_SECONDS`` while it works (a heartbeat thread), and stops renewing once a run
has gone on for ``EXTRACTION_MAX_RUN_SECONDS`` (a hung run). A lease that lapsed is taken over by any
worker on any host, and the sweep (beat, and every worker at start) hands such sessions out again —
at once when the claimer was a process of this host that is gone. A failure because the database is
unreachable spends no attempt and is retried every ``EXTRACTION_OUTAGE_RETRY_SECONDS``; a pending
session whose task is overdue by ``EXTRACTION_LOST_AFTER_SECONDS`` is queued again.

Extraction works inside the session's team (DESIGN.md §11): the task carries the team with the
session's id, every read and write of the session starts from that team's sessions, the entity pool
a lesson's entities are detected from is the team's, and the lessons are stored into the team (the
upsert compares them with that team's memories only). The sweep is the one deployment-wide part:
it finds lost extractions of every team and queues each with its own team.

The package, in the order a run uses it: ``claims.py`` (claims, leases, the end of a run, release,
retries, queueing, the sweep), ``rules.py`` (the deterministic extractor) or ``llm_lessons.py`` (the
optional LLM), ``candidates.py`` (what both hand the store, and the rules they share), and this
file: the run itself, which finds the candidates, keeps one per lesson and stores them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field

from django.db import transaction

from memory import embeddings
from memory.conf import setting
from memory.models import ExtractionStatus, MemoryType, Session
from memory.services import llm
from memory.services.errors import InvalidInput
from memory.services.extraction.candidates import (
    Candidate,
    category_for,
    confidence_for,
    preference,
    priority_for,
    source_chunk_for,
)
from memory.services.extraction.claims import (
    claim_finish,
    extraction_claim,
    extraction_fail,
    extraction_queue,
    extraction_release,
    extraction_requeue,
    extraction_sweep,
    is_outage,
    lease_heartbeat,
    lease_lapsed,
    retry_delay,
    team_of,
    team_sessions,
    worker_identity,
)
from memory.services.extraction.llm_lessons import llm_candidates, transcript_windows, validate_llm_memories
from memory.services.extraction.rules import (
    outcome_candidate,
    readable_sentences,
    rule_candidates,
    transcript_lessons,
)
from memory.services.governance import PROPOSED
from memory.services.store import ADD, NOOP, UPDATE, memory_store_batch, prepare

__all__ = [
    "Candidate",
    "ExtractionReport",
    "category_for",
    "confidence_for",
    "covered_findings",
    "extraction_claim",
    "extraction_fail",
    "extraction_queue",
    "extraction_release",
    "extraction_requeue",
    "extraction_run",
    "extraction_sweep",
    "find_candidates",
    "is_outage",
    "lease_heartbeat",
    "lease_lapsed",
    "llm_candidates",
    "outcome_candidate",
    "priority_for",
    "readable_sentences",
    "retry_delay",
    "rule_candidates",
    "source_chunk_for",
    "team_of",
    "team_sessions",
    "transcript_lessons",
    "transcript_windows",
    "validate_llm_memories",
    "worker_identity",
]

logger = logging.getLogger(__name__)


@dataclass
class ExtractionReport:
    session_id: str
    status: str
    extractor: str = ""
    messages: int = 0
    candidates: int = 0
    added: list[str] = field(default_factory=list)
    skipped_similar: int = 0
    skipped_invalid: int = 0
    llm_error: str = ""
    seconds: float = 0.0


def find_candidates(
    session: Session, messages: list[tuple[int, str, str]]
) -> tuple[list[Candidate], str, str]:
    """The LLM's candidates when one is configured and answers sensibly, else the rules'.
    Returns the candidates, which extractor ran, and why the LLM was not used (if it was not)."""
    if llm.llm_configured():
        after = session.extracted_through_seq
        new = [m for m in messages if after is None or m[0] > after]
        try:
            return llm_candidates(session, new), "llm", ""
        except llm.LLMUnavailable as exc:
            logger.warning("extraction for session %s falls back to the rules: %s", session.pk, exc)
            return rule_candidates(session, messages), "rules", str(exc)
    return rule_candidates(session, messages), "rules", ""


def extraction_run(session_id, team_id=None) -> ExtractionReport:
    """Claim, extract and store (the task's body), inside the session's team (``team_id``, or the
    session's own). Transient errors (database, embedder) propagate with the session released for a
    retry or marked failed once attempts run out."""
    started = time.monotonic()
    team_id = team_of(session_id, team_id)
    session = extraction_claim(session_id, team_id)
    if session is None:
        current = (
            Session.objects.for_team(team_id)
            .filter(pk=session_id)
            .values_list("extraction_status", flat=True)
            .first()
        )
        return ExtractionReport(str(session_id), status=f"not claimed ({current or 'no such session'})")
    if session.extraction_attempts > setting("EXTRACTION_MAX_ATTEMPTS"):
        error = f"gave up after {setting('EXTRACTION_MAX_ATTEMPTS')} attempts; last error: {session.extraction_error}"
        claim_finish(session, ExtractionStatus.FAILED, error=error)
        return ExtractionReport(str(session.pk), status=ExtractionStatus.FAILED)
    with lease_heartbeat(session):
        return _extract(session, started)


def _extract(session: Session, started: float) -> ExtractionReport:
    messages = list(session.messages.order_by("seq").values_list("seq", "role", "content"))
    candidates, extractor, llm_error = find_candidates(session, messages)
    report = ExtractionReport(
        str(session.pk),
        status=ExtractionStatus.DONE,
        extractor=extractor,
        messages=len(messages),
        candidates=len(candidates),
        llm_error=llm_error,
    )
    items, prepared = [], []
    for candidate in candidates:
        fields = candidate.as_store_fields()
        try:
            prepared.append(prepare(**fields))
            items.append(fields)
        except InvalidInput:
            report.skipped_invalid += 1
    vectors = embeddings.encode([p.content for p in prepared])
    keep = covered_findings(items, vectors)
    report.skipped_similar += len(items) - len(keep)
    items, vectors = [items[i] for i in keep], vectors[keep] if len(prepared) else vectors
    with transaction.atomic():
        sessions = Session.objects.for_team(session.team_id)
        status, claimed_at, extracted_through, ended_through = (
            sessions.select_for_update()
            .filter(pk=session.pk)
            .values_list(
                "extraction_status", "extraction_claimed_at", "extracted_through_seq", "ended_through_seq"
            )
            .get()
        )
        if status != ExtractionStatus.RUNNING or claimed_at != session.extraction_claimed_at:
            report.status = "claim lost"
            return report
        # The store's upsert decides (DESIGN.md §4.3): a lesson the team already has is reinforced
        # (NOOP), a changed one supersedes it for review, and memories of another project never count.
        results = (
            memory_store_batch(
                items, team=session.team, author=session.user, session=session, vectors=vectors
            )
            if items
            else []
        )
        report.added = [str(r.memory.pk) for r in results if r.operation in (ADD, UPDATE, PROPOSED)]
        report.skipped_similar = sum(1 for r in results if r.operation == NOOP)
        report.seconds = round(time.monotonic() - started, 3)
        through = messages[-1][0] if messages else extracted_through
        claim_finish(session, ExtractionStatus.DONE, report=asdict(report), extracted_through_seq=through)
        if ended_through is not None and (through is None or ended_through > through):
            # The session was resumed and ended again while this run was reading: extract the rest.
            sessions.filter(pk=session.pk, extraction_status=ExtractionStatus.DONE).update(
                extraction_status=ExtractionStatus.PENDING, extraction_attempts=0
            )
            extraction_queue(session)
    return report


def covered_findings(items: list[dict], vectors) -> list[int]:
    """The candidates to keep, one per lesson: a finding (an insight, "the root cause was…") is left
    out when a rule of the same session says the same thing (cosine ≥ EXTRACTION_FINDING_COVERED_COSINE)
    — the team keeps the rule ("Always verify the signature against the raw body"); and of two
    candidates that say the same (cosine ≥ EXTRACTION_SAME_SESSION_COSINE: the user's rule and the
    agent's report of applying it), the one of the preferred type, then the fuller, is kept."""
    rules = [i for i, item in enumerate(items) if item["memory_type"] != MemoryType.INSIGHT]
    threshold = setting("EXTRACTION_FINDING_COVERED_COSINE")
    uncovered = [
        i
        for i, item in enumerate(items)
        if item["memory_type"] != MemoryType.INSIGHT
        or not any(float(vectors[i] @ vectors[j]) >= threshold for j in rules)
    ]
    same = setting("EXTRACTION_SAME_SESSION_COSINE")
    kept: list[int] = []
    for i in sorted(
        uncovered, key=lambda i: (preference(items[i]["memory_type"]), -len(items[i]["content"]))
    ):
        if not any(float(vectors[i] @ vectors[j]) >= same for j in kept):
            kept.append(i)
    return sorted(kept)
