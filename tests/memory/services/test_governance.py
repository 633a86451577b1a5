"""Governed change (DESIGN.md §4.3): settled knowledge changes only by its rules. A non-curator's
change of an established, proven, critical or curated memory is a proposal; it takes effect when a
curator confirms it or a second distinct person proposes the same change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.conf import setting
from memory.models import Action, FactChange, Maturity, Memory, MemoryEvent, Status
from memory.services.curation import memory_approve, memory_update
from memory.services.factchanges import fact_change_resolve
from memory.services.feedback import feedback_record
from memory.services.governance import PROPOSED, govern, proposal_carried, settled_reason
from memory.services.search import memory_search
from memory.services.store import NOOP, UPDATE, memory_store, memory_store_batch
from memory.services.upsert import ADD, Decision
from tests.conftest import voter

NODE_18 = "Always pin Node 18 for the billing service."
NODE_20 = "Always pin Node 20 for the billing service."
NODE_20_AGAIN = "Always pin Node 20 for the billing service!"
PARAPHRASE = "Always pin Node 18 for the billing service"

# --- the pure rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("maturity", "priority", "curated", "settled"),
    [
        ("candidate", "moderate", False, None),
        ("candidate", "ephemeral", False, None),
        ("deprecated", "moderate", False, None),
        ("established", "moderate", False, "established"),
        ("proven", "ephemeral", False, "proven"),
        ("candidate", "critical", False, "critical"),
        ("candidate", "moderate", True, "approved or edited by a curator"),
    ],
)
def test_what_counts_as_settled(maturity, priority, curated, settled):
    assert settled_reason(maturity=maturity, priority=priority, curated=curated) == settled


OPERATIONS = st.sampled_from([ADD, UPDATE, NOOP])
SETTLED = st.sampled_from([None, "established", "proven", "critical", "approved or edited by a curator"])


@given(operation=OPERATIONS, settled=SETTLED, curator=st.booleans())
def test_only_a_non_curators_change_of_settled_knowledge_becomes_a_proposal(operation, settled, curator):
    decision = Decision(operation, "version changed: 18 → 20", "old", 0.97, 0.8, operation == UPDATE)
    governed = govern(decision, settled=settled, curator=curator)
    if operation == UPDATE and settled and not curator:
        assert governed.operation == PROPOSED
        assert (
            governed.reason
            == f"version changed: 18 → 20; the memory is {settled}, so the change is proposed to a curator"
        )
        assert governed.changed_fact and governed.compared_with == "old"
    else:
        assert governed == decision


@given(people=st.lists(st.one_of(st.none(), st.integers(1, 5)), max_size=6), by_curator=st.booleans())
def test_a_proposal_carries_with_a_curator_or_two_distinct_people(people, by_curator):
    assert setting("PROPOSAL_CONFIRMATIONS") == 2  # the default
    distinct = {person for person in people if person is not None}
    assert proposal_carried(people, by_curator=by_curator) == (by_curator or len(distinct) >= 2)


# --- as it is written -------------------------------------------------------------------------------

with_the_model = pytest.mark.usefixtures("embedder")


def _established(team, content=NODE_18) -> Memory:
    """A memory four people found helpful: established, with its votes."""
    memory = memory_store(team=team, content=content).memory
    for index in range(4):
        feedback_record(memory=memory, signal="helpful", user=voter(index, team))
    memory.refresh_from_db()
    assert memory.maturity == Maturity.ESTABLISHED and memory.helpful_count == 4
    return memory


def _served(team, query="which node version for billing") -> list[str]:
    return [hit.memory.content for hit in memory_search(team=team, query=query).results]


@with_the_model
def test_a_members_change_of_an_established_memory_is_a_proposal_and_the_old_rule_stays_served(team, member):
    old = _established(team)
    result = memory_store(team=team, content=NODE_20, author=member)
    assert result.operation == PROPOSED and result.proposal_for == old and result.superseded is None
    assert result.decision.reason == (
        "version changed: 18 → 20; the memory is established, so the change is proposed to a curator"
    )
    old.refresh_from_db()
    assert old.superseded_by is None and old.valid_until is None and old.status == Status.ACTIVE
    assert old.maturity == Maturity.ESTABLISHED and old.helpful_count == 4
    proposal = result.memory
    assert proposal.status == Status.PENDING_REVIEW and str(old.pk) in proposal.status_reason
    change = FactChange.objects.get()
    assert (change.kind, change.old, change.new, change.status) == ("proposal", old, proposal, "open")
    event = MemoryEvent.objects.get(memory=old, action=Action.PROPOSED)
    assert event.actor == member and event.diff["text"] == NODE_20
    assert _served(team)[:1] == [NODE_18] and NODE_20 not in _served(team)


@with_the_model
@pytest.mark.parametrize("how", ["critical", "approved", "edited", "proven"])
def test_critical_curated_and_proven_memories_are_governed_too(team, member, curator, how):
    old = memory_store(team=team, content=NODE_18, priority="critical" if how == "critical" else None).memory
    if how == "approved":
        old = memory_approve(memory=old, actor=curator)
    elif how == "edited":
        old = memory_update(memory=old, actor=curator, tags=["node"])
    elif how == "proven":
        Memory.objects.filter(pk=old.pk).update(maturity=Maturity.PROVEN)
    result = memory_store(team=team, content=NODE_20, author=member)
    assert result.operation == PROPOSED
    old.refresh_from_db()
    assert old.superseded_by is None


@with_the_model
def test_a_curators_write_changes_settled_knowledge_at_once(team, curator):
    old = _established(team)
    result = memory_store(team=team, content=NODE_20, author=curator, curator=True)
    assert result.operation == UPDATE and result.superseded == old
    assert FactChange.objects.get().kind == "changed"


@with_the_model
def test_a_candidate_is_still_superseded_directly(team, member):
    old = memory_store(team=team, content=NODE_18).memory
    result = memory_store(team=team, content=NODE_20, author=member)
    assert result.operation == UPDATE and result.superseded == old


@with_the_model
def test_a_second_person_proposing_the_same_change_makes_it_take_effect(team, member):
    old = _established(team)
    first = memory_store(team=team, content=NODE_20, author=member)
    again = memory_store(team=team, content=NODE_20, author=member)  # the same person again
    assert again.operation == NOOP and again.memory == first.memory
    assert Memory.objects.get(pk=first.memory.pk).status == Status.PENDING_REVIEW
    second = memory_store(team=team, content=NODE_20_AGAIN, author=voter(9, team))
    assert second.operation == NOOP and second.memory == first.memory
    assert "the same change as an open proposal" in second.decision.reason
    old.refresh_from_db()
    proposal = Memory.objects.get(pk=first.memory.pk)
    assert old.superseded_by == proposal and proposal.status == Status.ACTIVE
    assert FactChange.objects.get().status == "confirmed"
    assert _served(team)[:1] == [NODE_20]


@with_the_model
@pytest.mark.parametrize(
    ("action", "served", "proposal_status"),
    [
        ("confirm", NODE_20, Status.ACTIVE),
        ("undo", NODE_18, Status.REJECTED),
        ("both_true", None, Status.ACTIVE),
    ],
)
def test_a_curator_resolves_a_proposal(team, member, curator, action, served, proposal_status):
    old = _established(team)
    proposal = memory_store(team=team, content=NODE_20, author=member).memory
    change = fact_change_resolve(change=FactChange.objects.get(), action=action, actor=curator)
    old.refresh_from_db()
    proposal.refresh_from_db()
    assert proposal.status == proposal_status
    assert (old.superseded_by == proposal) == (action == "confirm")
    assert change.status == {"confirm": "confirmed", "undo": "undone", "both_true": "both_true"}[action]
    if served:
        assert _served(team)[:1] == [served]
    else:
        assert set(_served(team)[:2]) == {NODE_18, NODE_20}


@with_the_model
def test_a_batch_follows_the_same_rule(team, member):
    old = _established(team)
    results = memory_store_batch(
        [{"content": NODE_20}, {"content": "Deploys of billing go out on Tuesdays."}],
        team=team,
        author=member,
    )
    assert [r.operation for r in results] == [PROPOSED, ADD]
    old.refresh_from_db()
    assert old.superseded_by is None


@with_the_model
def test_a_paraphrase_keeps_the_memorys_maturity_votes_and_history(team, member):
    old = _established(team)
    result = memory_store(team=team, content=PARAPHRASE, author=member)
    assert result.operation == NOOP and result.memory == old
    old.refresh_from_db()
    assert old.maturity == Maturity.ESTABLISHED and old.helpful_count == 4 and old.reinforcement_count == 1
    assert not FactChange.objects.exists()
    event = MemoryEvent.objects.get(memory=old, action=Action.REINFORCED)
    assert event.diff["text"] == PARAPHRASE and event.actor == member


@with_the_model
def test_a_proposal_whose_memory_changed_meanwhile_waits_for_a_curator_instead_of_failing_a_store(
    team, member, curator
):
    old = _established(team)
    first = memory_store(team=team, content=NODE_20, author=member).memory
    memory_store(
        team=team, content="Always pin Node 22 for the billing service.", author=curator, curator=True
    )
    old.refresh_from_db()
    assert old.superseded_by is not None
    second = memory_store(team=team, content=NODE_20, author=voter(9, team))
    assert second.operation == NOOP and second.memory == first
    assert Memory.objects.get(pk=first.pk).status == Status.PENDING_REVIEW
    proposal = FactChange.objects.get(kind="proposal")
    assert proposal.status == "open"
    assert fact_change_resolve(change=proposal, action="undo", actor=curator).status == "undone"


MAKE_TEST = "Run make test, not bare pytest, in the api repo."


@with_the_model
def test_the_issues_rewording_of_an_established_rule_reinforces_it(team, member):
    old = _established(team, MAKE_TEST)
    reworded = "In the api repo use make test instead of running pytest directly."
    result = memory_store(team=team, content=reworded, author=member)
    assert result.operation == NOOP and result.memory == old
    old.refresh_from_db()
    assert (old.maturity, old.helpful_count, old.superseded_by) == (Maturity.ESTABLISHED, 4, None)
    assert not FactChange.objects.exists()
    assert MemoryEvent.objects.get(memory=old, action=Action.REINFORCED).diff["text"] == reworded


@with_the_model
def test_a_swap_of_the_preferred_and_the_rejected_tool_is_proposed_against_an_established_rule(team, member):
    old = _established(team, "Use pnpm, not npm, in the web-dashboard repository.")
    result = memory_store(
        team=team, content="Use npm, not pnpm, in the web-dashboard repository.", author=member
    )
    assert result.operation == PROPOSED and result.proposal_for == old
    assert result.decision.reason.startswith("roles exchanged: pnpm ↔ npm")
