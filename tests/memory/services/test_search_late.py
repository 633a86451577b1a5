"""Search's late-interaction stage (LATE_RERANK_ENABLED, on by default): each memory read once into
token vectors, kept; a question's token vectors reorder the most relevant candidates (MaxSim). What
it shares with the cross-encoder (which candidates are reread, paraphrases left alone) is tested
here for both (``stage``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from memory.models import Memory, TokenVectors
from memory.services.search import late, memory_search
from memory.services.search.rerank import forget_model as forget_cross_encoder
from memory.services.store import memory_store
from memory.tasks import token_vectors_task

pytestmark = pytest.mark.usefixtures("embedder")


def store_all(team, texts: list[str]) -> list:
    return [memory_store(team=team, content=text, dedupe=False).memory for text in texts]


def rank_of(outcome, memory) -> int:
    return [hit.memory.pk for hit in outcome.results].index(memory.pk)


def unit_rows(generator: np.random.Generator, tokens: int, width: int) -> np.ndarray:
    rows = generator.normal(size=(tokens, width)).astype(np.float32)
    rows[generator.random(tokens) < 0.05] = 0.0  # now and then a token of zeros
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.where(norms > 0, rows / np.maximum(norms, 1e-8), 0.0)


def test_kept_vectors_read_back_within_eight_bit_rounding_and_score_as_the_originals():
    generator = np.random.default_rng(45)
    for _ in range(2000):
        width = int(generator.choice([8, 96, 192, 384]))
        memory = unit_rows(generator, int(generator.integers(1, 90)), width)
        question = unit_rows(generator, int(generator.integers(1, 40)), width)
        back = late.unpack(late.pack(memory))
        assert back is not None and back.shape == memory.shape
        # One scale per token (a step: that token's largest value / 127, kept as float16): every value
        # within half a step, plus the scale's own rounding (float16: 2⁻¹¹ of it, times 127 steps).
        step = np.abs(memory).max(axis=1, keepdims=True) / 127
        assert np.all(np.abs(back - memory) <= step / 2 + step * 127 * 2**-11 + 1e-6)
        assert late.maxsim(question, back) == pytest.approx(
            late.maxsim(question, memory), abs=0.02 * len(question)
        )


def test_a_row_this_code_cannot_read_reads_as_missing():
    packed = late.pack(np.eye(4, dtype=np.float32))
    generator = random.Random(7)
    assert late.unpack(b"") is None
    assert late.unpack(packed[:-1]) is None  # truncated
    assert late.unpack(b"LV9" + packed[3:]) is None  # another format
    assert late.unpack(packed + b"\x00") is None
    for _ in range(500):
        assert late.unpack(bytes(generator.randrange(256) for _ in range(generator.randrange(40)))) is None
    with pytest.raises(ValueError):
        late.pack(np.zeros((0, 4), dtype=np.float32))


def test_maxsim_sums_each_question_token_s_best_match():
    question = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    memory = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    assert late.maxsim(question, memory) == pytest.approx(1.0 + 0.8)
    assert late.maxsim(question, question) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        late.maxsim(question, np.ones((1, 3), dtype=np.float32))


@pytest.mark.parametrize(
    "question, answer, others",
    [
        (
            "Who reviews the Postgres migrations?",
            "Priya on the data team signs off every Postgres migration before it merges.",
            [
                "Postgres migrations live in the migrations folder and run with make migrate.",
                "Reviews of frontend code go to the web team.",
            ],
        ),
        (
            "What did Melanie paint last year?",
            "Melanie: last year I painted a sunrise over the lake, it hangs in our kitchen now.",
            [
                "Melanie: we go to the lake with the kids every summer, last year too.",
                "Caroline: I painted my room blue last week.",
            ],
        ),
    ],
)
def test_the_memory_that_answers_comes_first_and_says_why(team, db, settings, question, answer, others):
    answering, *_ = store_all(team, [answer, *others])
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_RERANK_ENABLED": False}
    first_stage = memory_search(team=team, query=question, record=False)
    assert all("late" not in hit.explain for hit in first_stage.results)

    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_RERANK_ENABLED": True}
    outcome = memory_search(team=team, query=question, record=False)
    assert rank_of(outcome, answering) == 0
    assert rank_of(outcome, answering) <= rank_of(first_stage, answering)
    scores = [hit.score for hit in outcome.results]
    assert scores == sorted(scores, reverse=True)  # one score order
    explain = outcome.results[0].explain
    assert all(explain["late"]["maxsim"] >= hit.explain["late"]["maxsim"] for hit in outcome.results)
    assert explain["relevance"] * explain["applied"]["feedback_score"] * explain["applied"][
        "maturity_multiplier"
    ] * explain["applied"]["intent_boost"] == pytest.approx(explain["score"], rel=1e-3)


def test_each_memory_is_read_once_and_again_when_its_text_changes(team, db):
    memories = store_all(
        team,
        ["Deploys to production need a green build on main.", "Production deploys are frozen on Fridays."],
    )
    question = "when can we deploy to Production?"
    memory_search(team=team, query=question, record=False)
    kept = {row.memory_id: row for row in TokenVectors.objects.all()}
    assert set(kept) == {memory.pk for memory in memories}
    assert all(row.team_id == team.pk for row in kept.values())

    edited = memories[1]
    Memory.objects.filter(pk=edited.pk).update(content="Production deploys are frozen from Thursday noon.")
    again = memory_search(team=team, query=question, record=False)
    after = {row.memory_id: row for row in TokenVectors.objects.all()}
    assert bytes(after[memories[0].pk].vectors) == bytes(kept[memories[0].pk].vectors)  # read, not recomputed
    assert after[edited.pk].source_hash != kept[edited.pk].source_hash
    assert after[edited.pk].source_hash == late.source_hash(
        "Production deploys are frozen from Thursday noon."
    )
    assert all("late" in hit.explain for hit in again.results)


# Each second stage: its explain key, what switches it on, the settings of its depth and its α rule.
STAGES = {
    "late": ("late", {}, "LATE_RERANK_CANDIDATES", "LATE_RERANK_MAX_ALPHA"),
    "cross-encoder": ("rerank", {"RERANK_ENABLED": True}, "RERANK_CANDIDATES", "RERANK_MAX_ALPHA"),
}
DEPLOYS = [
    "Deploys to production need a green build on main.",
    "Production deploys are frozen on Fridays.",
    "Deploy previews are built for every pull request.",
    "The staging cluster is rebuilt every night.",
]


@pytest.fixture(params=sorted(STAGES))
def stage(request, settings):
    """Each second stage switched on (the late-interaction one is by default), its model dropped after."""
    key, switched_on, depth, max_alpha = STAGES[request.param]
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, **switched_on}
    yield key, depth, max_alpha
    forget_cross_encoder()


def test_only_the_most_relevant_candidates_are_reordered_and_the_rest_stay_below(team, db, settings, stage):
    key, depth, _ = stage
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, depth: 2}
    store_all(team, DEPLOYS)
    outcome = memory_search(team=team, query="when can we deploy to Production?", record=False)
    reread = [hit for hit in outcome.results if key in hit.explain]
    assert len(reread) == 2
    assert outcome.results[:2] == reread  # the reread keep the top places
    assert min(hit.score for hit in reread) >= max(
        hit.score for hit in outcome.results if key not in hit.explain
    )


def test_a_model_that_cannot_be_loaded_leaves_the_first_stage_order(team, db, settings, tmp_path, caplog):
    store_all(team, ["Run make test, not bare pytest.", "Pytest reads its options from pyproject.toml."])
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_RERANK_ENABLED": False}
    expected = [
        hit.memory.pk for hit in memory_search(team=team, query="how do I run Pytest", record=False).results
    ]
    settings.MEMORY_LANE = {
        **settings.MEMORY_LANE,
        "LATE_RERANK_ENABLED": True,
        "LATE_MODEL": str(tmp_path / "nowhere"),
    }
    late.forget_model()
    try:
        outcome = memory_search(team=team, query="how do I run Pytest", record=False)
    finally:
        late.forget_model()
    assert [hit.memory.pk for hit in outcome.results] == expected
    assert all("late" not in hit.explain for hit in outcome.results)
    assert "without its late-interaction stage" in caplog.text
    assert not TokenVectors.objects.exists()


def test_a_paraphrase_is_left_in_the_order_meaning_gave_it(team, db, settings, stage):
    # No memory shares the question's words: meaning decides the fusion (α high), and neither
    # stage, which both read shared words best, is asked.
    key, _, max_alpha = stage
    store_all(
        team,
        [
            "Invoices are regenerated by the nightly billing job.",
            "Customer emails are sent through the notification service.",
        ],
    )
    outcome = memory_search(team=team, query="what rebuilds statements for clients overnight?", record=False)
    assert outcome.results and all(key not in hit.explain for hit in outcome.results)
    assert outcome.results[0].explain["fusion"]["alpha"] > settings.MEMORY_LANE[max_alpha]


def test_a_team_s_search_reads_and_keeps_only_its_own_memories(team, other_team, db):
    mine = store_all(team, ["Our deploy window is Tuesday morning.", "Deploys need two approvals."])
    theirs = store_all(other_team, ["Their deploy window is Tuesday morning, every week."])
    outcome = memory_search(team=team, query="when is the Tuesday deploy window?", record=False)
    assert {hit.memory.pk for hit in outcome.results} == {memory.pk for memory in mine}
    assert set(TokenVectors.objects.values_list("memory_id", flat=True)) == {memory.pk for memory in mine}
    # Another team's id, asked for directly, answers as a missing one: nothing read, nothing kept.
    assert late.stored_vectors([str(theirs[0].pk)], team.pk) == {}
    assert late.stored_vectors([str(theirs[0].pk)], other_team.pk).keys() == {str(theirs[0].pk)}
    assert TokenVectors.objects.get(memory_id=theirs[0].pk).team_id == other_team.pk


def test_the_worker_computes_ahead_what_no_search_has_needed(team, other_team, db, settings):
    mine = store_all(team, ["Our deploy window is Tuesday morning.", "Deploys need two approvals."])
    theirs = store_all(other_team, ["Their deploy window is Tuesday morning, every week."])
    unserved = store_all(team, ["Deploys used to need three approvals.", "Deploys were frozen in August."])
    Memory.objects.filter(pk=unserved[0].pk).update(maturity="deprecated")
    Memory.objects.filter(pk=unserved[1].pk).update(status="archived")
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_VECTORS_PER_RUN": 2}
    assert token_vectors_task() == {"computed": 2}
    assert token_vectors_task() == {"computed": 1}
    assert token_vectors_task() == {"computed": 0}
    teams = dict(TokenVectors.objects.values_list("memory_id", "team_id"))
    assert teams == {**{m.pk: team.pk for m in mine}, **{m.pk: other_team.pk for m in theirs}}
    Memory.objects.filter(pk=mine[0].pk).update(content="Our deploy window moved to Wednesday.")
    assert token_vectors_task() == {"computed": 1}  # an edited memory's vectors are stale
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_RERANK_ENABLED": False}
    Memory.objects.filter(pk=mine[0].pk).update(content="Our deploy window moved to Thursday.")
    assert token_vectors_task() == {"computed": 0}


def test_vectors_are_kept_from_inside_the_team_wall(team, other_team, db):
    from django.db import transaction

    from memory.services.teams import acting_for

    mine = store_all(team, ["Our deploy window is Tuesday morning.", "Deploys need two approvals."])
    store_all(other_team, ["Their deploy window is Tuesday morning, every week."])
    with transaction.atomic(), acting_for(team):
        outcome = memory_search(team=team, query="when is the Tuesday deploy window?", record=False)
        assert all("late" in hit.explain for hit in outcome.results)
    assert set(TokenVectors.objects.values_list("memory_id", flat=True)) == {memory.pk for memory in mine}


def test_a_memory_deleted_while_its_vectors_are_computed_fails_only_their_keeping(
    team, db, monkeypatch, caplog
):
    from django.db import transaction

    doomed, kept = store_all(team, ["Our deploy window is Tuesday morning.", "Deploys need two approvals."])
    computing = late.memory_vectors

    def computed_while_deleted(texts):
        Memory.objects.filter(pk=doomed.pk).delete()
        return computing(texts)

    monkeypatch.setattr(late, "memory_vectors", computed_while_deleted)
    with transaction.atomic():  # a caller's transaction commits whatever the stage could not keep
        found = late.stored_vectors([str(doomed.pk), str(kept.pk)], team.pk)
        assert set(found) == {str(doomed.pk), str(kept.pk)}
    assert "token vectors not kept" in caplog.text
    assert not TokenVectors.objects.exists()
    assert Memory.objects.filter(pk=kept.pk).exists()


def test_a_search_computes_only_a_few_missing_vectors_and_waits_for_the_rest(team, db, settings):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_COMPUTE_PER_SEARCH": 1}
    store_all(team, DEPLOYS[:3])
    question = "when can we deploy to Production?"
    kept = []
    for _ in range(2):  # a fresh import: each search keeps one more and leaves the first stage's order
        outcome = memory_search(team=team, query=question, record=False)
        assert all("late" not in hit.explain for hit in outcome.results)
        kept.append(TokenVectors.objects.count())
    assert kept == [1, 2]
    outcome = memory_search(team=team, query=question, record=False)  # the last one missing: kept, used
    assert TokenVectors.objects.count() == 3
    assert all("late" in hit.explain for hit in outcome.results)
