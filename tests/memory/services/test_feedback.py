from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memory.models import FeedbackEvent, Memory, MemoryEvent, Session
from memory.services.errors import InvalidInput, InvalidTransition, NotFound
from memory.services.feedback import feedback_record, feedback_record_many, memory_recompute
from memory.services.maturity import memory_deprecate, memory_promote, memory_reset
from memory.services.store import memory_store
from tests.conftest import voter

pytestmark = pytest.mark.usefixtures("embedder")


@pytest.fixture
def decision(team) -> Memory:
    return memory_store(
        team=team, content="Split work by layer: API first, then UI.", memory_type="decision"
    ).memory


def give(memory: Memory, *signals: str, **kwargs) -> Memory:
    """Feedback as given by different people (each signal from its own voter) unless ``user`` says."""
    for index, signal in enumerate(signals):
        feedback_record(memory=memory, signal=signal, **{"user": voter(index), **kwargs})
    memory.refresh_from_db()
    return memory


def test_three_helpful_events_make_a_memory_established_with_score_1_331(decision, member):
    memory = give(decision, "helpful", "helpful")
    assert memory.maturity == "candidate"
    memory = give(memory, "helpful", user=member)
    assert memory.maturity == "established"
    assert memory.feedback_score == pytest.approx(1.331)
    assert memory.helpful_count == 3


def test_one_persons_helpful_votes_leave_a_memory_a_candidate(decision, member):
    memory = give(decision, *["helpful"] * 6, user=member)
    assert memory.maturity == "candidate" and memory.feedback_score > 1.5


def test_harmful_halves_and_scores_stay_in_bounds(team, decision):
    assert give(decision, "harmful").feedback_score == pytest.approx(0.5)
    assert give(decision, *["harmful"] * 10).feedback_score == pytest.approx(0.05)
    other = memory_store(
        team=team, content="Prefer integer cents for money.", memory_type="commitment"
    ).memory
    assert give(other, *["helpful"] * 30).feedback_score == pytest.approx(5.0)


def test_implicit_harmful_costs_less_and_irrelevant_costs_nothing(decision):
    feedback_record(memory=decision, signal="harmful", source="implicit", value=0.3)
    feedback_record(memory=decision, signal="irrelevant")
    decision.refresh_from_db()
    assert decision.feedback_score == pytest.approx(0.7)
    assert decision.irrelevant_count == 1


def test_helpful_feedback_resets_the_decay_clock(decision):
    Memory.objects.filter(pk=decision.pk).update(
        created_at=timezone.now() - timedelta(days=60), last_validated_at=timezone.now() - timedelta(days=60)
    )
    memory = give(decision, "helpful")
    assert timezone.now() - memory.last_validated_at < timedelta(minutes=1)


def test_five_recent_helpful_events_make_it_proven_and_old_ones_do_not(team, decision):
    assert give(decision, *["helpful"] * 5).maturity == "proven"
    old = memory_store(
        team=team, content="Use pnpm workspaces in the web repo.", memory_type="decision"
    ).memory
    year_ago = timezone.now() - timedelta(days=365)
    for index in range(6):
        feedback_record(memory=old, signal="helpful", created_at=year_ago, user=voter(index))
    old.refresh_from_db()
    assert old.maturity == "established"  # six events, but each now weighs 0.5^(365/90) ≈ 0.06


def test_mostly_harmful_memories_are_deprecated_and_hidden(team):
    memory = memory_store(
        team=team, content="Cache the auth token in localStorage.", memory_type="insight"
    ).memory
    memory = give(memory, "helpful", "harmful", "harmful")
    assert memory.maturity == "deprecated"
    assert not memory.inversions.exists()  # an insight is not prescriptive: it is not inverted


def test_a_harmful_prescriptive_memory_is_inverted_into_an_anti_pattern(decision, member):
    give(decision, "helpful", "harmful", "harmful", user=member)
    decision.refresh_from_db()
    anti = decision.inversions.get()
    assert decision.maturity == "deprecated"
    assert anti.content == "AVOID: Split work by layer: API first, then UI. Harmful in 2 of 3 uses (67%)"
    assert anti.is_negative and anti.status == "active" and anti.inverted_from == decision
    give(decision, "harmful")
    assert decision.inversions.count() == 1


def test_aggregates_are_rebuilt_from_events(decision):
    give(decision, "helpful", "helpful", "harmful", "irrelevant")
    expected = Memory.objects.values(
        "feedback_score", "helpful_count", "harmful_count", "irrelevant_count", "maturity"
    ).get(pk=decision.pk)
    Memory.objects.filter(pk=decision.pk).update(
        feedback_score=3.0, helpful_count=0, harmful_count=9, maturity="proven"
    )
    memory = Memory.objects.get(pk=decision.pk)
    memory_recompute(memory)
    assert Memory.objects.values(*expected).get(pk=decision.pk) == expected
    assert expected["feedback_score"] == pytest.approx(1.1 * 1.1 * 0.5)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("embedder")
def test_concurrent_feedback_loses_no_update(team):
    memory = memory_store(team=team, content="Concurrent feedback target memory").memory

    def helpful(_):
        try:
            feedback_record(memory=memory, signal="helpful")
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(helpful, range(8)))
    memory.refresh_from_db()
    assert memory.helpful_count == 8 == FeedbackEvent.objects.count()
    assert memory.feedback_score == pytest.approx(1.1**8, rel=1e-5)


def test_curators_promote_deprecate_and_reset(decision, curator):
    assert memory_promote(memory=decision, actor=curator).maturity == "proven"
    assert give(decision, "harmful", "harmful", "harmful").maturity == "proven"  # pinned by the curator
    memory_deprecate(memory=decision, actor=curator, reason="Replaced by the new playbook")
    with pytest.raises(InvalidTransition):
        memory_promote(memory=decision, actor=curator)
    with pytest.raises(InvalidInput):
        memory_deprecate(memory=decision, actor=curator, reason=" ")
    assert memory_reset(memory=decision, actor=curator).maturity == "deprecated"  # the feedback says so
    assert not Memory.objects.get(pk=decision.pk).maturity_pinned


def test_bad_feedback_is_refused(decision):
    for kwargs in (
        {"signal": "meh"},
        {"signal": "helpful", "value": 2},
        {"signal": "helpful", "source": "gut"},
    ):
        with pytest.raises(InvalidInput):
            feedback_record(memory=decision, **kwargs)
    assert not FeedbackEvent.objects.exists()


AGGREGATES = ("feedback_score", "helpful_count", "harmful_count", "irrelevant_count", "maturity")


TWIN_TEXTS = {
    "A": (
        "Deploy on Fridays after lunch.",
        "The cache warms in about a minute.",
        "Run the linters before pushing.",
    ),
    "B": (
        "Tag releases from the main branch only.",
        "The search index rebuilds overnight.",
        "Rebase feature branches before review.",
    ),
}


def twin_memories(label: str, team) -> list[Memory]:
    """A decision already judged harmful once and helpful once (one more harmful vote inverts it),
    an insight with two helpful votes, and a fresh workflow note."""
    decision, insight, note = TWIN_TEXTS[label]
    judged = memory_store(team=team, content=decision, memory_type="decision").memory
    give(judged, "helpful", "harmful")
    liked = memory_store(team=team, content=insight, memory_type="insight").memory
    give(liked, "helpful", "helpful")
    fresh = memory_store(team=team, content=note, memory_type="workflow_note").memory
    return [judged, liked, fresh]


@pytest.mark.parametrize(
    ("signal", "source", "value"),
    [("harmful", "implicit", 1.0), ("helpful", "implicit", 0.8), ("helpful", "explicit", 1.0)],
)
def test_rating_many_memories_at_once_does_what_rating_each_does(team, member, signal, source, value):
    one_by_one, together = twin_memories("A", team), twin_memories("B", team)
    for memory in one_by_one:
        feedback_record(memory=memory, signal=signal, source=source, value=value, user=member)
    before = {m.pk: Memory.objects.get(pk=m.pk).updated_at for m in together}
    results = feedback_record_many(
        team=team, memory_ids=[m.pk for m in together], signal=signal, source=source, value=value, user=member
    )
    assert sorted(r.memory.pk for r in results) == sorted(m.pk for m in together)

    def history(memory):  # what the audit log says happened, but the anti-pattern's own id
        return [
            (action, diff if action == "maturity" else None)
            for action, diff in MemoryEvent.objects.filter(memory=memory)
            .order_by("pk")
            .values_list("action", "diff")
        ]

    for single, batched in zip(one_by_one, together, strict=True):
        single.refresh_from_db()
        batched.refresh_from_db()
        assert [getattr(batched, name) for name in AGGREGATES] == [
            getattr(single, name) for name in AGGREGATES
        ]
        assert batched.inversions.count() == single.inversions.count()
        assert history(batched) == history(single)
        assert batched.updated_at > before[batched.pk]
        explicit_helpful = batched.feedback_events.filter(signal="helpful", source="explicit")
        assert batched.last_validated_at == max(
            [batched.created_at, *explicit_helpful.values_list("created_at", flat=True)]
        )
    if signal == "harmful":  # the judged decision crossed the line either way
        assert together[0].maturity == "deprecated" and together[0].inversions.exists()


def test_rating_many_skips_deleted_memories_and_bad_input_writes_nothing(team, decision):
    gone = memory_store(team=team, content="Pin the Node version in .nvmrc.", memory_type="decision").memory
    gone_pk = gone.pk
    gone.delete()
    results = feedback_record_many(team=team, memory_ids=[decision.pk, gone_pk], signal="helpful")
    assert [r.memory.pk for r in results] == [decision.pk]
    before = FeedbackEvent.objects.count()
    with pytest.raises(InvalidInput):
        feedback_record_many(team=team, memory_ids=[decision.pk], signal="loved")
    with pytest.raises(InvalidInput):
        feedback_record_many(team=team, memory_ids=[decision.pk], signal="helpful", value=3)
    assert FeedbackEvent.objects.count() == before


# The wall between teams (DESIGN.md §11).


def test_feedback_rows_carry_the_memorys_team(team, other_team, member, outsider):
    ours = memory_store(
        team=team, content="Split work by layer: API first, then UI.", memory_type="decision"
    ).memory
    theirs = memory_store(
        team=other_team, content="Split work by layer: API first, then UI.", memory_type="decision"
    ).memory
    feedback_record(memory=ours, signal="helpful", user=member)
    give(theirs, "helpful", "harmful", "harmful", user=outsider)
    assert set(FeedbackEvent.objects.filter(memory=ours).values_list("team", flat=True)) == {team.pk}
    assert set(FeedbackEvent.objects.filter(memory=theirs).values_list("team", flat=True)) == {other_team.pk}
    assert set(MemoryEvent.objects.filter(memory=theirs).values_list("team", flat=True)) == {other_team.pk}
    # The anti-pattern of their memory is theirs, and ours is untouched by their votes.
    anti = theirs.inversions.get()
    assert anti.team == other_team and not ours.inversions.exists()
    ours.refresh_from_db()
    assert (ours.helpful_count, ours.harmful_count, ours.maturity) == (1, 0, "candidate")


def test_feedback_with_a_session_of_another_team_is_not_found(team, other_team, member, outsider):
    memory = memory_store(team=team, content="Split work by layer: API first, then UI.").memory
    theirs = Session.objects.create(team=other_team, external_id="s-globex", user=outsider)
    with pytest.raises(NotFound):
        feedback_record(memory=memory, signal="helpful", session=theirs)
    assert not FeedbackEvent.objects.exists()
    ours = Session.objects.create(team=team, external_id="s-acme", user=member)
    assert feedback_record(memory=memory, signal="helpful", session=ours).event.session == ours


def test_rating_many_for_a_session_skips_memories_of_another_team(team, other_team, member, outsider):
    ours = memory_store(team=team, content="Run the linters before pushing.").memory
    theirs = memory_store(team=other_team, content="Run the linters before pushing.").memory
    session = Session.objects.create(team=team, external_id="s-acme", user=member)
    results = feedback_record_many(
        team=team, memory_ids=[ours.pk, theirs.pk], signal="helpful", session=session
    )
    assert [r.memory.pk for r in results] == [ours.pk]
    assert not FeedbackEvent.objects.filter(memory=theirs).exists()
    assert FeedbackEvent.objects.get(memory=ours).team == team
    # For the other team, only its memory is rated; a session of another team is not found.
    results = feedback_record_many(
        team=other_team, memory_ids=[ours.pk, theirs.pk], signal="irrelevant", user=outsider
    )
    assert [r.memory.pk for r in results] == [theirs.pk]
    assert FeedbackEvent.objects.get(memory=theirs).team == other_team
    with pytest.raises(NotFound):
        feedback_record_many(team=other_team, memory_ids=[theirs.pk], signal="helpful", session=session)


def test_a_curators_promote_deprecate_and_reset_are_audited_in_the_memorys_team(team, other_team, curator):
    theirs = memory_store(team=other_team, content="Split work by layer: API first, then UI.").memory
    memory_promote(memory=theirs, actor=curator)
    memory_reset(memory=theirs, actor=curator)
    memory_deprecate(memory=theirs, actor=curator, reason="Replaced by the new playbook")
    actions = MemoryEvent.objects.filter(memory=theirs).values_list("action", "team")
    assert {"promoted", "reset", "deprecated"} <= {action for action, _ in actions}
    assert {team_id for _, team_id in actions} == {other_team.pk}
