"""Search's second stage: a cross-encoder over the most relevant candidates (RERANK_ENABLED). Which
candidates it rereads and that paraphrases are left alone are tested with the late-interaction stage
(test_search_late.py, ``stage``)."""

from __future__ import annotations

import random

import pytest

from memory.services.search import memory_search
from memory.services.search.rerank import forget_model, reranked_relevance
from memory.services.store import memory_store

pytestmark = pytest.mark.usefixtures("embedder")


@pytest.fixture
def reranking(settings):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "RERANK_ENABLED": True}
    yield settings
    forget_model()


def store_all(team, texts: list[str]) -> list:
    return [memory_store(team=team, content=text, dedupe=False).memory for text in texts]


def rank_of(outcome, memory) -> int:
    return [hit.memory.pk for hit in outcome.results].index(memory.pk)


def test_the_new_relevance_keeps_the_span_and_follows_the_model_by_its_weight():
    generator = random.Random(45)
    for _ in range(3000):
        size = generator.randint(1, 12)
        relevances = [generator.choice([0.0, 0.5, generator.random()]) for _ in range(size)]
        logits = [generator.choice([0.0, generator.uniform(-12, 12)]) for _ in range(size)]
        weight = generator.choice([0.0, 0.3, 0.5, 1.0, generator.random()])
        new = reranked_relevance(relevances, logits, weight)
        low, high = min(relevances), max(relevances)
        assert len(new) == size
        # Within the span the candidates had (rounding-size when they were equal): whatever was
        # below them stays below.
        assert all(low - 1e-12 <= value <= max(high, low + 1e-9) + 1e-12 for value in new)
        if len(set(logits)) == 1 or weight == 0:
            assert new == pytest.approx(relevances)
        elif weight == 1:
            # The model alone orders them: a higher logit never gets a lower relevance.
            for i in range(size):
                for j in range(size):
                    if logits[i] > logits[j]:
                        assert new[i] >= new[j]


def test_the_decision_refuses_lists_of_different_lengths():
    with pytest.raises(ValueError):
        reranked_relevance([0.1, 0.2], [1.0], 1.0)


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
            "Which port does the Staging database listen on?",
            "Staging Postgres accepts connections on 6543, not the default.",
            [
                "The Staging database and the production database are both managed by the platform team.",
                "Port forwarding to Staging needs the VPN.",
            ],
        ),
    ],
)
def test_the_second_stage_lifts_the_memory_that_answers_over_ones_that_share_its_words(
    team, db, settings, question, answer, others
):
    answering, *_ = store_all(team, [answer, *others])
    default = memory_search(team=team, query=question, record=False)
    assert all("rerank" not in hit.explain for hit in default.results)  # off by default
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_RERANK_ENABLED": False}
    first_stage = memory_search(team=team, query=question, record=False)

    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "RERANK_ENABLED": True}
    try:
        second_stage = memory_search(team=team, query=question, record=False)
    finally:
        forget_model()
    assert rank_of(second_stage, answering) < rank_of(first_stage, answering)
    scores = [hit.score for hit in second_stage.results]
    assert scores == sorted(scores, reverse=True)  # one score order
    explain = {hit.memory.pk: hit.explain for hit in second_stage.results}[answering.pk]
    below = second_stage.results[rank_of(second_stage, answering) + 1 :]
    assert below and all(explain["rerank"]["logit"] > hit.explain["rerank"]["logit"] for hit in below)
    assert explain["relevance"] * explain["applied"]["feedback_score"] * explain["applied"][
        "maturity_multiplier"
    ] * explain["applied"]["intent_boost"] == pytest.approx(explain["score"], rel=1e-3)


def test_a_model_that_cannot_be_loaded_leaves_the_first_stage_order(team, db, settings, tmp_path, caplog):
    store_all(team, ["Run make test, not bare pytest.", "Pytest reads its options from pyproject.toml."])
    first_stage = memory_search(team=team, query="how do I run Pytest", record=False)
    expected = [hit.memory.pk for hit in first_stage.results]
    settings.MEMORY_LANE = {
        **settings.MEMORY_LANE,
        "RERANK_ENABLED": True,
        "RERANK_MODEL": str(tmp_path / "nowhere"),
    }
    forget_model()
    outcome = memory_search(team=team, query="how do I run Pytest", record=False)
    assert [hit.memory.pk for hit in outcome.results] == expected
    assert all("rerank" not in hit.explain for hit in outcome.results)
    assert "without its second stage" in caplog.text
    forget_model()


def test_the_second_stage_reads_only_the_searching_team_s_memories(team, other_team, db, reranking):
    mine = store_all(team, ["Our deploy window is Tuesday morning.", "Deploys need two approvals."])
    store_all(other_team, ["Their deploy window is Tuesday morning, every week."])
    outcome = memory_search(team=team, query="when is the Tuesday deploy window?", record=False)
    assert {hit.memory.pk for hit in outcome.results} == {memory.pk for memory in mine}
    assert all("rerank" in hit.explain for hit in outcome.results)


DEPLOYS = [
    "Deploys to production need a green build on main.",
    "Production deploys are frozen on Fridays.",
    "Deploy previews are built for every pull request.",
    "The staging cluster is rebuilt every night.",
    "Hotfix deploys to production skip the Friday freeze with a lead's approval.",
]


def test_after_the_late_stage_the_cross_encoder_rereads_only_its_first_few(team, other_team, db, reranking):
    settings = reranking
    store_all(team, DEPLOYS)
    store_all(other_team, ["Production deploys are allowed any day of the week, Fridays too."])
    question = "when can we deploy to Production?"
    late_only = memory_search(team=team, query=question, record=False)  # the cross-encoder in its place
    assert all("rerank" in hit.explain and "late" not in hit.explain for hit in late_only.results)

    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "RERANK_AFTER_LATE": 2}
    outcome = memory_search(team=team, query=question, record=False)
    assert {hit.memory.team_id for hit in outcome.results} == {team.pk}
    assert all("late" in hit.explain for hit in outcome.results)  # the late stage ordered them all
    reread = [hit for hit in outcome.results if "rerank" in hit.explain]
    assert outcome.results[:2] == reread  # the cross-encoder read the late stage's first two only
    logits = [hit.explain["rerank"]["logit"] for hit in reread]
    assert logits == sorted(logits, reverse=True)  # and ordered them
    # Within the span of relevance the late stage gave those two (for two: its two ends), so
    # everything else stays below.
    assert sorted(round(hit.explain["relevance"], 4) for hit in reread) == sorted(
        round(hit.explain["rerank"]["relevance_before"], 4) for hit in reread
    )
    assert min(hit.score for hit in reread) >= max(hit.score for hit in outcome.results[2:])
    scores = [hit.score for hit in outcome.results]
    assert scores == sorted(scores, reverse=True)


def test_a_cross_encoder_that_cannot_be_loaded_after_the_late_stage_leaves_its_order(
    team, db, settings, tmp_path, caplog
):
    store_all(team, DEPLOYS)
    question = "when can we deploy to Production?"
    expected = [hit.memory.pk for hit in memory_search(team=team, query=question, record=False).results]
    settings.MEMORY_LANE = {
        **settings.MEMORY_LANE,
        "RERANK_ENABLED": True,
        "RERANK_AFTER_LATE": 3,
        "RERANK_MODEL": str(tmp_path / "nowhere"),
    }
    forget_model()
    try:
        outcome = memory_search(team=team, query=question, record=False)
    finally:
        forget_model()
    assert [hit.memory.pk for hit in outcome.results] == expected
    assert all("late" in hit.explain and "rerank" not in hit.explain for hit in outcome.results)
    assert "without its cross-encoder after the late stage" in caplog.text
