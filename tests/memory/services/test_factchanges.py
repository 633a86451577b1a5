"""The upsert as it writes (DESIGN.md §4.3): scope, changed facts and their review, reinforcements."""

from __future__ import annotations

import pytest

from memory.models import Action, FactChange, Memory, MemoryEvent, Status
from memory.services.errors import InvalidTransition, NotFound
from memory.services.factchanges import (
    fact_change_get,
    fact_change_resolve,
    open_fact_changes,
    reinforcement_split,
    reinforcements,
)
from memory.services.search import memory_search
from memory.services.store import ADD, NOOP, UPDATE, memory_store, memory_store_batch

pytestmark = pytest.mark.usefixtures("embedder")

NODE_18 = "Always pin Node 18 for the billing service."
NODE_20 = "Always pin Node 20 for the billing service."


def test_a_changed_version_supersedes_the_old_memory_and_waits_for_review(team, member):
    old = memory_store(team=team, content=NODE_18).memory
    result = memory_store(team=team, content=NODE_20, author=member)
    assert result.operation == UPDATE and result.superseded == old
    assert result.decision.reason == "version changed: 18 → 20" and result.decision.compared_with == old
    old.refresh_from_db()
    assert old.superseded_by == result.memory and old.valid_until is not None
    change = FactChange.objects.get()
    assert (change.old, change.new, change.status) == (old, result.memory, "open")
    assert change.changes == [{"kind": "version", "old": ["18"], "new": ["20"]}]
    created = MemoryEvent.objects.get(memory=result.memory, action=Action.CREATED)
    assert created.diff["decision"]["reason"] == "version changed: 18 → 20"
    # Agents are told Node 20 now.
    hits = memory_search(team=team, query="which node version for billing").results
    assert [hit.memory.content for hit in hits][:1] == [NODE_20]


def test_the_same_text_in_another_project_is_a_memory_of_its_own(team):
    first = memory_store(team=team, content=NODE_18, entities=["project:billing"])
    second = memory_store(team=team, content=NODE_18, entities=["project:checkout"])
    assert (first.operation, second.operation) == (ADD, ADD)
    assert "different scope" in second.decision.reason or second.decision.reason == "no similar memory"
    assert Memory.objects.filter(status=Status.ACTIVE, superseded_by__isnull=True).count() == 2
    third = memory_store(team=team, content=NODE_18, entities=["project:checkout"])
    assert third.operation == NOOP and third.memory == second.memory


def test_a_changed_fact_in_another_project_supersedes_nothing(team):
    old = memory_store(team=team, content=NODE_18, entities=["project:billing"]).memory
    result = memory_store(team=team, content=NODE_20, entities=["project:checkout"])
    assert result.operation == ADD
    old.refresh_from_db()
    assert old.superseded_by is None and not FactChange.objects.exists()


def test_an_entity_filtered_search_never_serves_another_persons_fact(team):
    memory_store(
        team=team, content="Owns the billing on-call rotation this quarter.", entities=["person:alice"]
    )
    bob = memory_store(
        team=team, content="Owns the billing on-call rotation this quarter!", entities=["person:bob"]
    )
    assert bob.operation == ADD
    hits = memory_search(
        team=team, query="who owns the billing on-call rotation", entities=["person:bob"]
    ).results
    assert [hit.memory for hit in hits] == [bob.memory]


def test_a_team_wide_memory_repeated_in_a_project_stays_team_wide(team):
    team_wide = memory_store(team=team, content="Run make test before pushing.").memory
    again = memory_store(
        team=team, content="Run make test before pushing.", entities=["project:web", "feature:ci"]
    )
    assert again.operation == NOOP and again.memory == team_wide
    slugs = set(team_wide.mentions.filter(resolved=True).values_list("entity__slug", flat=True))
    assert slugs == {"feature:ci"}


def test_a_noop_keeps_the_incoming_text_author_and_session_for_a_split(team, member, curator):
    original = memory_store(team=team, content="Don't cache the auth responses.").memory
    again = memory_store(team=team, content="Do not cache the auth responses.", author=member, tags=["auth"])
    assert again.operation == NOOP and again.memory == original
    [event] = reinforcements(original)
    assert event.diff["text"] == "Do not cache the auth responses."
    assert event.diff["author"] == member.username and event.diff["decision"]["operation"] == NOOP

    split = reinforcement_split(memory=original, event_id=event.pk, actor=curator)
    assert split.operation == ADD and split.memory.content == "Do not cache the auth responses."
    assert split.memory.tags == ["auth"]
    assert reinforcements(original)[0].split_into == str(split.memory.pk)
    with pytest.raises(InvalidTransition):
        reinforcement_split(memory=original, event_id=event.pk, actor=curator)


def test_undo_restores_the_old_fact_and_rejects_the_new(team, curator):
    old = memory_store(team=team, content=NODE_18).memory
    new = memory_store(team=team, content=NODE_20).memory
    change = fact_change_resolve(change=FactChange.objects.get(), action="undo", actor=curator)
    old.refresh_from_db()
    new.refresh_from_db()
    assert change.status == "undone" and change.resolved_by == curator
    assert old.superseded_by is None and old.valid_until is None and new.status == Status.REJECTED
    assert [hit.memory for hit in memory_search(team=team, query="node version billing").results][:1] == [old]
    with pytest.raises(InvalidTransition):
        fact_change_resolve(change=change, action="confirm", actor=curator)


def test_both_true_keeps_both_memories_active(team, curator):
    old = memory_store(team=team, content=NODE_18).memory
    new = memory_store(team=team, content=NODE_20).memory
    fact_change_resolve(change=FactChange.objects.get(), action="both_true", actor=curator)
    served = {hit.memory for hit in memory_search(team=team, query="node version billing").results}
    assert {old, new} <= served


def test_confirm_keeps_the_new_fact_and_the_old_as_history(team, curator):
    old = memory_store(team=team, content=NODE_18).memory
    new = memory_store(team=team, content=NODE_20).memory
    fact_change_resolve(change=FactChange.objects.get(), action="confirm", actor=curator)
    old.refresh_from_db()
    assert old.superseded_by == new
    assert MemoryEvent.objects.filter(memory=new, action=Action.REVIEWED, diff__resolution="confirm").exists()


def test_a_batch_is_decided_item_by_item_with_a_decision_each(team):
    memory_store(team=team, content=NODE_18)
    results = memory_store_batch(
        [{"content": NODE_20}, {"content": "Keep 7 days of logs."}, {"content": "Keep seven days of logs."}],
        team=team,
    )
    assert [r.operation for r in results] == [UPDATE, ADD, NOOP]
    assert all(r.decision and r.decision.reason for r in results)


# The wall between teams (DESIGN.md §11).


def test_open_fact_changes_and_fact_change_get_show_only_the_teams_changes(team, other_team):
    memory_store(team=team, content=NODE_18)
    ours_new = memory_store(team=team, content=NODE_20).memory
    memory_store(team=other_team, content="Always pin Python 3.11 for the ledger service.")
    memory_store(team=other_team, content="Always pin Python 3.12 for the ledger service.")
    ours, theirs = FactChange.objects.get(team=team), FactChange.objects.get(team=other_team)
    assert ours.new == ours_new and ours.old.team == ours.new.team == team
    assert theirs.old.team == theirs.new.team == other_team
    assert list(open_fact_changes(team=team)) == [ours]
    assert list(open_fact_changes(team=other_team)) == [theirs]
    assert fact_change_get(ours.pk, team=team) == ours
    with pytest.raises(NotFound) as other:
        fact_change_get(theirs.pk, team=team)
    with pytest.raises(NotFound) as missing:
        fact_change_get(theirs.pk + 1000, team=team)
    assert other.value.code == missing.value.code == "NOT_FOUND"
    assert other.value.message == f"No changed fact {theirs.pk}."


def test_resolving_a_change_writes_its_events_into_its_team(team, other_team, curator):
    memory_store(team=other_team, content=NODE_18)
    memory_store(team=other_team, content=NODE_20)
    change = fact_change_resolve(change=FactChange.objects.get(), action="undo", actor=curator)
    assert change.team == other_team
    reviewed = MemoryEvent.objects.filter(action=Action.REVIEWED)
    assert reviewed.count() == 2 and set(reviewed.values_list("team", flat=True)) == {other_team.pk}


def test_a_split_reinforcement_is_stored_in_the_memorys_team(team, other_team, curator):
    original = memory_store(team=other_team, content="Don't cache the auth responses.").memory
    memory_store(team=other_team, content="Do not cache the auth responses.", tags=["auth"])
    memory_store(team=team, content="Do not cache the auth responses.")
    [event] = reinforcements(original)
    assert event.team == other_team
    split = reinforcement_split(memory=original, event_id=event.pk, actor=curator)
    assert split.operation == ADD and split.memory.team == other_team
    assert Memory.objects.for_team(team).count() == 1
