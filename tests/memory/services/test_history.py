"""Every memory has a history (DESIGN.md §4.3): its versions across edits and supersessions, its
timeline, and a curator's restore of an earlier version."""

from __future__ import annotations

import numpy as np
import pytest

from memory import embeddings
from memory.models import Action, Memory, MemoryEvent, Status
from memory.services.curation import memory_merge, memory_update
from memory.services.errors import InvalidInput, InvalidTransition
from memory.services.factchanges import fact_change_resolve
from memory.services.feedback import feedback_record
from memory.services.history import memory_history, memory_restore_version, memory_versions
from memory.services.store import NOOP, UPDATE, memory_store

pytestmark = pytest.mark.usefixtures("embedder")

NODE_18 = "Always pin Node 18 for the billing service."
NODE_20 = "Always pin Node 20 for the billing service."
NODE_22 = "Always pin Node 22 for the billing service."
NODE_22_AGAIN = "Always pin Node 22 for the billing service!"


@pytest.fixture
def edited(team, member, curator) -> tuple[Memory, Memory]:
    """NODE_18, superseded by a member's NODE_20, which a curator then edited to NODE_22."""
    old = memory_store(team=team, content=NODE_18).memory
    result = memory_store(team=team, content=NODE_20, author=member)
    assert result.operation == UPDATE and result.superseded == old
    new = memory_update(memory=result.memory, actor=curator, content=NODE_22)
    return old, new


def _texts(memory: Memory) -> list[tuple[int, str, bool]]:
    return [(v.number, v.text, v.current) for v in memory_versions(memory)]


def test_versions_run_across_a_supersession_and_an_edit(edited):
    old, new = edited
    assert _texts(new) == [(1, NODE_18, False), (2, NODE_20, False), (3, NODE_22, True)]
    assert [v.memory for v in memory_versions(new)] == [old.pk, new.pk, new.pk]
    versions = memory_versions(new)
    assert versions[0].at <= versions[1].at <= versions[2].at
    # The replaced memory's own versions stop at its own text.
    assert _texts(old) == [(1, NODE_18, True)]


def test_a_memory_never_changed_has_one_version(team):
    memory = memory_store(team=team, content="Run make test before pushing.").memory
    assert _texts(memory) == [(1, "Run make test before pushing.", True)]


def test_a_memory_merged_into_another_is_not_one_of_its_versions(team, curator):
    target = memory_store(team=team, content="Deploys go out from the release branch on Tuesdays.").memory
    source = memory_store(team=team, content="Use feature flags for every risky change in checkout.").memory
    memory_merge(source=source, target=target, actor=curator)
    assert _texts(target) == [(1, "Deploys go out from the release branch on Tuesdays.", True)]
    merged = [e for e in memory_history(target) if e.kind == "merged"]
    assert [(e.memory, e.actor) for e in merged] == [(source.pk, "cora")]


def test_the_timeline_keeps_a_reinforcements_incoming_text_and_sender(edited, team, member, curator):
    old, new = edited
    again = memory_store(team=team, content=NODE_22_AGAIN, author=member, agent_name="claude-code")
    assert again.operation == NOOP and again.memory == new
    feedback_record(memory=new, signal="helpful", user=curator, note="saved me an hour")

    timeline = memory_history(new)
    assert [e.at for e in timeline] == sorted(e.at for e in timeline)
    kinds = [e.kind for e in timeline]
    assert kinds[:2] == ["created", "supersedes"] and kinds[-3:] == ["edited", "reinforced", "feedback"]

    supersedes = next(e for e in timeline if e.kind == "supersedes")
    assert supersedes.memory == old.pk and supersedes.details["text"] == NODE_18
    assert "version changed: 18 → 20" in supersedes.summary

    edit = next(e for e in timeline if e.kind == "edited")
    assert edit.actor == "cora" and (edit.details["old_text"], edit.details["new_text"]) == (NODE_20, NODE_22)

    reinforced = next(e for e in timeline if e.kind == "reinforced")
    assert reinforced.details["text"] == NODE_22_AGAIN
    assert (reinforced.actor, reinforced.details["sender"], reinforced.details["agent_name"]) == (
        "mia",
        "mia",
        "claude-code",
    )
    assert reinforced.summary.startswith("Reinforced by mia via claude-code")

    feedback = timeline[-1]
    assert (feedback.actor, feedback.details["signal"]) == ("cora", "helpful")
    assert "saved me an hour" in feedback.summary

    # The replaced memory's side of the story.
    superseded = [e for e in memory_history(old) if e.kind == "superseded"]
    assert [(e.memory, e.actor) for e in superseded] == [(new.pk, "mia")]


def test_a_proposal_is_on_the_timeline_of_both_memories_and_its_review_too(team, member, curator):
    settled = memory_store(team=team, content=NODE_18, priority="critical").memory
    proposal = memory_store(team=team, content=NODE_20, author=member).memory
    assert proposal.status == Status.PENDING_REVIEW

    on_old = [e for e in memory_history(settled) if e.kind == "proposed"]
    assert [(e.memory, e.actor, e.details["text"], e.details["status"]) for e in on_old] == [
        (proposal.pk, "mia", NODE_20, "open")
    ]
    on_new = [e for e in memory_history(proposal) if e.kind == "proposed"]
    assert [(e.memory, e.details["text"]) for e in on_new] == [(settled.pk, NODE_18)]

    # A reader who may not see the pending proposal is not shown its text, id or reason.
    readable = Memory.objects.for_team(team).filter(status=Status.ACTIVE)
    hidden = [e for e in memory_history(settled, readable=readable) if e.kind == "proposed"]
    assert hidden[0].memory is None and "text" not in hidden[0].details and hidden[0].details["withheld"]
    assert "20" not in hidden[0].summary

    change = proposal.changed_from.get()
    fact_change_resolve(change=change, action="confirm", actor=curator)
    proposal.refresh_from_db()
    timeline = memory_history(proposal)
    assert [e.kind for e in timeline][-2:] == ["supersedes", "reviewed"]
    assert timeline[-1].actor == "cora" and timeline[-1].details["resolution"] == "confirm"
    assert _texts(proposal) == [(1, NODE_18, False), (2, NODE_20, True)]
    assert next(e for e in memory_history(settled) if e.kind == "proposed").details["status"] == "confirmed"


def test_a_curator_restores_an_earlier_version_audited_and_re_embedded(edited, curator):
    old, new = edited
    restored = memory_restore_version(memory=new, version=1, actor=curator)
    restored.refresh_from_db()
    assert restored.content == NODE_18
    expected = np.asarray(embeddings.encode_one(NODE_18), dtype=np.float32)
    assert np.allclose(np.asarray(restored.embedding, dtype=np.float32), expected, atol=1e-5)
    update = MemoryEvent.objects.filter(memory=new, action=Action.UPDATED).order_by("-created_at").first()
    assert update.actor == curator and update.diff["content"] == [NODE_22, NODE_18]
    event = MemoryEvent.objects.get(memory=new, action=Action.RESTORED)
    assert event.actor == curator and event.diff == {"version": 1, "from_memory": str(old.pk)}
    # The restore is a version of its own; the earlier ones keep their numbers.
    assert _texts(restored) == [
        (1, NODE_18, False),
        (2, NODE_20, False),
        (3, NODE_22, False),
        (4, NODE_18, True),
    ]
    kinds = [e.kind for e in memory_history(restored)]
    assert kinds[-2:] == ["edited", "restored"]
    assert next(e for e in memory_history(restored) if e.kind == "restored").summary == "Version 1 restored"
    # The superseded memory is untouched.
    old.refresh_from_db()
    assert old.content == NODE_18 and old.superseded_by == new


@pytest.mark.parametrize("version", [0, 4, -1, True, "2"])
def test_restoring_a_version_that_does_not_exist_changes_nothing(edited, curator, version):
    _, new = edited
    before = MemoryEvent.objects.count()
    with pytest.raises(InvalidInput) as refused:
        memory_restore_version(memory=new, version=version, actor=curator)
    assert "version" in refused.value.fields
    new.refresh_from_db()
    assert new.content == NODE_22 and MemoryEvent.objects.count() == before


def test_restoring_the_current_text_is_refused_and_changes_nothing(edited, curator):
    _, new = edited
    before = MemoryEvent.objects.count()
    with pytest.raises(InvalidTransition):
        memory_restore_version(memory=new, version=3, actor=curator)
    new.refresh_from_db()
    assert new.content == NODE_22 and MemoryEvent.objects.count() == before


def test_history_is_read_within_the_memorys_team(edited, other_team):
    _, new = edited
    # The same texts in another team are another story altogether.
    elsewhere = memory_store(team=other_team, content=NODE_22_AGAIN).memory
    assert _texts(elsewhere) == [(1, NODE_22_AGAIN, True)]
    assert [e.kind for e in memory_history(elsewhere)] == ["created"]
    assert len(memory_versions(new)) == 3
