from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory.models import FeedbackEvent, Memory
from memory.services.decay import decay_factor, decay_run
from memory.services.store import memory_store
from tests.conftest import voter

pytestmark = pytest.mark.usefixtures("embedder")


def aged(content: str, days: float, **fields) -> Memory:
    memory = memory_store(content=content, dedupe=False, **fields).memory
    moment = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(created_at=moment, last_validated_at=moment, valid_from=moment)
    memory.refresh_from_db()
    return memory


@pytest.mark.parametrize("priority,half_life", [("moderate", 90), ("critical", 180), ("ephemeral", 14)])
def test_decay_halves_a_memorys_weight_after_its_half_life(db, priority, half_life):
    memory = aged(f"A {priority} memory about the release train.", half_life, priority=priority)
    assert decay_factor(memory) == pytest.approx(0.5, abs=1e-3)
    assert decay_factor(
        memory, now=memory.last_validated_at + timedelta(days=2 * half_life)
    ) == pytest.approx(0.25)


def test_decay_run_materializes_decay_and_staleness_and_is_idempotent(db):
    fresh = aged("Fresh note about the API gateway.", 1)
    old = aged("Old note about the legacy cron box.", 200)
    now = timezone.now()
    report = decay_run(now=now)
    assert report.examined == 2 and report.stale == 1
    fresh.refresh_from_db()
    old.refresh_from_db()
    assert fresh.decay_factor == pytest.approx(0.5 ** (1 / 90), abs=1e-3) and not fresh.is_stale
    assert old.decay_factor == pytest.approx(0.5 ** (200 / 90), abs=1e-3) and old.is_stale
    snapshot = list(Memory.objects.order_by("pk").values())
    assert decay_run(now=now).updated == 0
    assert list(Memory.objects.order_by("pk").values()) == snapshot


def test_decay_run_demotes_memories_whose_praise_has_aged(db):
    memory = aged("Proven advice about database indexes.", 1, memory_type="decision")
    for index in range(5):
        FeedbackEvent.objects.create(
            memory=memory, signal="helpful", created_at=timezone.now(), user=voter(index)
        )
    decay_run()
    memory.refresh_from_db()
    assert memory.maturity == "proven"
    report = decay_run(now=timezone.now() + timedelta(days=120))
    memory.refresh_from_db()
    assert memory.maturity == "established" and report.maturity_changed == 1


def test_decay_run_inverts_a_harmful_prescriptive_memory(db):
    memory = aged("Always deploy on Fridays.", 1, memory_type="commitment")
    for signal in ("harmful", "harmful", "harmful", "helpful"):
        FeedbackEvent.objects.create(memory=memory, signal=signal)
    report = decay_run()
    memory.refresh_from_db()
    assert memory.maturity == "deprecated" and len(report.inverted) == 1
    assert Memory.objects.get(pk=report.inverted[0]).content.startswith("AVOID: Always deploy on Fridays.")
    assert decay_run().inverted == []


def test_the_decay_command_prints_a_summary(db, capsys):
    aged("A memory for the command.", 3)
    call_command("decay")
    assert "Examined 1 memories" in capsys.readouterr().out
