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


def aged(team, content: str, days: float, **fields) -> Memory:
    memory = memory_store(team=team, content=content, dedupe=False, **fields).memory
    moment = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(created_at=moment, last_validated_at=moment, valid_from=moment)
    memory.refresh_from_db()
    return memory


@pytest.mark.parametrize("priority,half_life", [("moderate", 90), ("critical", 180), ("ephemeral", 14)])
def test_decay_halves_a_memorys_weight_after_its_half_life(team, priority, half_life):
    memory = aged(team, f"A {priority} memory about the release train.", half_life, priority=priority)
    assert decay_factor(memory) == pytest.approx(0.5, abs=1e-3)
    assert decay_factor(
        memory, now=memory.last_validated_at + timedelta(days=2 * half_life)
    ) == pytest.approx(0.25)


def test_decay_run_materializes_decay_and_staleness_and_is_idempotent(team):
    fresh = aged(team, "Fresh note about the API gateway.", 1)
    old = aged(team, "Old note about the legacy cron box.", 200)
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


def test_decay_run_demotes_memories_whose_praise_has_aged(team):
    memory = aged(team, "Proven advice about database indexes.", 1, memory_type="decision")
    for index in range(5):
        FeedbackEvent.objects.create(
            team=team, memory=memory, signal="helpful", created_at=timezone.now(), user=voter(index)
        )
    decay_run()
    memory.refresh_from_db()
    assert memory.maturity == "proven"
    report = decay_run(now=timezone.now() + timedelta(days=120))
    memory.refresh_from_db()
    assert memory.maturity == "established" and report.maturity_changed == 1


def test_decay_run_inverts_a_harmful_prescriptive_memory(team):
    memory = aged(team, "Always deploy on Fridays.", 1, memory_type="commitment")
    for signal in ("harmful", "harmful", "harmful", "helpful"):
        FeedbackEvent.objects.create(team=team, memory=memory, signal=signal)
    report = decay_run()
    memory.refresh_from_db()
    assert memory.maturity == "deprecated" and len(report.inverted) == 1
    assert Memory.objects.get(pk=report.inverted[0]).content.startswith("AVOID: Always deploy on Fridays.")
    assert decay_run().inverted == []


def test_the_decay_command_prints_a_summary(team, capsys):
    aged(team, "A memory for the command.", 3)
    call_command("decay")
    assert "Examined 1 memories" in capsys.readouterr().out


# Decay works within one team, or every team one after another (DESIGN.md §11).


def test_decay_run_without_a_team_runs_over_every_team(team, other_team):
    ours = aged(team, "Old note about the legacy cron box.", 200)
    theirs = aged(other_team, "Old note about the legacy cron box.", 200)
    report = decay_run()
    assert report.examined == 2 and report.stale == 2
    for memory in (ours, theirs):
        memory.refresh_from_db()
        assert memory.is_stale and memory.decay_factor < 0.5


def test_decay_run_for_a_team_touches_only_that_team(team, other_team):
    ours = aged(team, "Old note about the legacy cron box.", 200)
    theirs = aged(other_team, "Old note about the legacy cron box.", 200)
    harmful = aged(other_team, "Always deploy on Fridays.", 1, memory_type="commitment")
    for signal in ("harmful", "harmful", "harmful", "helpful"):
        FeedbackEvent.objects.create(team=other_team, memory=harmful, signal=signal)
    seen = []
    report = decay_run(team=team, progress=lambda done, total: seen.append((done, total)))
    assert (report.examined, report.stale, report.inverted) == (1, 1, []) and seen == [(1, 1)]
    ours.refresh_from_db()
    theirs.refresh_from_db()
    harmful.refresh_from_db()
    assert ours.is_stale and not theirs.is_stale and theirs.decay_factor == 1.0
    assert harmful.maturity == "candidate" and not harmful.inversions.exists()
    report = decay_run(team=other_team)
    assert report.examined == 2 and len(report.inverted) == 1
    assert Memory.objects.get(pk=report.inverted[0]).team == other_team
