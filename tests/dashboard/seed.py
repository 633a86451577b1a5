"""A small, realistic team memory for browser tests and screenshots, built through the services."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memory.models import Action, MemoryEvent, Session, SessionMessage, TaskName, TaskRun, TaskRunStatus
from memory.services.entities import entity_get_or_create, record_unresolved
from memory.services.feedback import feedback_record
from memory.services.store import memory_store
from memory.services.tokens import token_create

from .conftest import QUARANTINED_TEXT

OBSERVATIONS = [
    (
        "Never call stripe.Charge.create directly; go through payments/gateway.py, which adds idempotency keys.",
        "correction",
        "gotcha",
        "critical",
        ["project:billing-api", "feature:payments"],
    ),
    (
        "We decided to keep invoices in Postgres instead of DynamoDB: reporting needs joins.",
        "decision",
        "architecture",
        "moderate",
        ["project:billing-api"],
    ),
    (
        "Always run `make migrate-test` before pytest; the test database is not migrated automatically.",
        "commitment",
        "workflow",
        "moderate",
        ["project:billing-api"],
    ),
    (
        "The flaky checkout test was a timezone bug: fixtures used naive datetimes near midnight UTC.",
        "insight",
        "debugging",
        "moderate",
        ["feature:checkout"],
    ),
    (
        "Feature flags live in config/flags.yaml; the admin UI only reads them.",
        "learning",
        "convention",
        "moderate",
        ["project:web-app"],
    ),
    (
        "Use the retry helper in lib/http.py for calls to the tax service; it times out under load.",
        "pattern_seed",
        "gotcha",
        "moderate",
        ["feature:tax"],
    ),
    (
        "Prefer server-rendered HTML with htmx over adding a SPA framework to the admin.",
        "commitment",
        "architecture",
        "moderate",
        ["project:web-app"],
    ),
    (
        "The CI cache key must include the lockfile hash or stale wheels get installed.",
        "insight",
        "workflow",
        "ephemeral",
        [],
    ),
    (
        "Squash-merge pull requests into main; release notes come from PR titles.",
        "workflow_note",
        "workflow",
        "moderate",
        [],
    ),
    (
        "Webhook handlers must return 200 within 3 seconds; queue the real work on Celery.",
        "correction",
        "gotcha",
        "moderate",
        ["project:billing-api"],
    ),
]


def _backdate_maturity_events(memory, when) -> None:
    MemoryEvent.objects.filter(memory=memory, action=Action.MATURITY, created_at__gt=when).update(
        created_at=when
    )


def seed(*, team, member, curator) -> dict:
    """Everything of the team memory, in ``team``."""
    now = timezone.now()
    created = []
    for i, (content, memory_type, category, priority, entities) in enumerate(OBSERVATIONS):
        result = memory_store(
            team=team,
            content=content,
            memory_type=memory_type,
            category=category,
            priority=priority,
            entities=entities,
            author=member if i % 2 else curator,
            agent_name="claude-code",
            created_at=now - timedelta(days=70 - i * 6),
        )
        created.append(result.memory)
    # Feedback spread over the last weeks: two proven, two established, one deprecated.
    plan = {
        0: ["helpful"] * 6,
        1: ["helpful"] * 5,
        2: ["helpful", "helpful", "irrelevant", "helpful"],
        3: ["helpful", "harmful", "helpful", "helpful"],
        5: ["harmful", "harmful", "helpful", "harmful"],
        6: ["helpful"],
        9: ["irrelevant"],
    }
    for index, signals in plan.items():
        for n, signal in enumerate(signals):
            when = now - timedelta(days=25 - n * 4 - index, hours=index)
            # Alternating people: promotion needs votes from more than one (MATURITY_MIN_VOTERS).
            voter = member if n % 2 else curator
            feedback_record(memory=created[index], signal=signal, user=voter, created_at=when)
            _backdate_maturity_events(created[index], when)
    quarantined = memory_store(
        team=team,
        content=QUARANTINED_TEXT,
        memory_type="workflow_note",
        author=member,
        source_chunk="user: " + QUARANTINED_TEXT,
        agent_name="opencode",
    ).memory
    pending = memory_store(
        team=team,
        content="Deploy previews live on the staging-eu cluster since March.",
        status="pending_review",
        category="architecture",
        author=member,
    ).memory

    session = Session.objects.create(
        team=team,
        user=member,
        external_id="claude-7f3a9c21",
        agent="claude-code",
        project=entity_get_or_create("project:billing-api", team=team),
        started_at=now - timedelta(hours=3),
        ended_at=now - timedelta(hours=2, minutes=40),
        duration_ms=20 * 60 * 1000,
        error_count=2,
        retry_count=1,
        success=True,
        files_touched=["src/payments/gateway.py", "tests/test_gateway.py"],
        summary="Fixed double charges on retried webhooks.",
        implicit_score=0.62,
        implicit_label="neutral",
        extraction_status="done",
    )
    SessionMessage.objects.bulk_create(
        [
            SessionMessage(
                team=team,
                session=session,
                seq=1,
                role="user",
                content="Retried webhooks charge customers twice. Can you fix it?",
            ),
            SessionMessage(
                team=team,
                session=session,
                seq=2,
                role="assistant",
                content="I'll look at the webhook handler in src/payments.",
            ),
            SessionMessage(
                team=team,
                session=session,
                seq=3,
                role="user",
                content="No, don't call stripe directly — always go through the gateway.",
            ),
            SessionMessage(
                team=team,
                session=session,
                seq=4,
                role="assistant",
                content="Understood. The root cause was a missing idempotency key.",
            ),
        ]
    )
    extracted = memory_store(
        team=team,
        content="Stripe webhooks are retried; handlers must be idempotent (store the event id).",
        memory_type="insight",
        category="gotcha",
        source="extraction",
        session=session,
        author=member,
        source_chunk="assistant: The root cause was a missing idempotency key.",
    ).memory

    reflection = memory_store(
        team=team,
        content="Payments: always go through payments/gateway.py and make webhook handlers idempotent.",
        kind="reflection",
        source="reflection",
        category="gotcha",
        memory_type="correction",
        author=None,
    ).memory
    reflection.sources.add(created[0], extracted)

    mark_r = entity_get_or_create("person:mark-robinson", team=team)
    mark_s = entity_get_or_create("person:mark-smith", team=team)
    mark_r.aliases = ["Mark"]
    mark_r.save(update_fields=["aliases"])
    mark_s.aliases = ["Mark"]
    mark_s.save(update_fields=["aliases"])
    # Both have the alias "Mark", so storing this records an ambiguous mention for the queue.
    ambiguous = memory_store(
        team=team,
        content="Mark asked that release branches be cut on Mondays.",
        author=member,
        memory_type="decision",
        category="workflow",
    ).memory
    assert ambiguous.mentions.filter(resolved=False).exists()
    record_unresolved(created[4], {}, ["Priya"])

    for task, status in (
        (TaskName.DECAY, TaskRunStatus.DONE),
        (TaskName.REFLECT, TaskRunStatus.DONE),
    ):
        TaskRun.objects.create(
            team=team,
            task=task,
            status=status,
            progress_done=10,
            progress_total=10,
            summary={"processed": 10},
            queued_at=now - timedelta(hours=5),
            started_at=now - timedelta(hours=5),
            finished_at=now - timedelta(hours=5),
        )
    token_create(user=curator, team=team, scopes=["read", "write", "curate"], name="laptop claude-code")
    return {
        "memories": created,
        "quarantined": quarantined,
        "pending": pending,
        "session": session,
        "reflection": reflection,
        "ambiguous": ambiguous,
        "extracted": extracted,
    }
