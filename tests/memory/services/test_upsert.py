"""The pure upsert decision (memory/services/upsert/), with the real model's similarities."""

from __future__ import annotations

import pytest

from memory.services.upsert import (
    ADD,
    NOOP,
    UPDATE,
    Side,
    compare_facts,
    content_tokens,
    decide,
    decide_pair,
    highlight_spans,
    scope_of,
)

pytestmark = pytest.mark.usefixtures("embedder")


def verdict(embedder, old: str, new: str, *, old_entities=(), new_entities=(), old_category="workflow"):
    vectors = embedder.encode([old, new])
    cosine = float(vectors[0] @ vectors[1])
    return decide_pair(
        Side(new, "workflow", scope_of(new_entities)), Side(old, old_category, scope_of(old_entities)), cosine
    )


# Each kind of difference the rule book names: a near-identical text that states another fact.
CHANGED = [
    ("version", "Always pin Node 18 for the billing service.", "Always pin Node 20 for the billing service."),
    ("number", "Keep the connection pool at 20 connections per worker.", "Keep the connection pool at 50 connections per worker."),
    ("port", "Redis runs on port 6380 in staging.", "Redis runs on port 6381 in staging."),
    ("date", "The release freeze starts on 2024-03-01.", "The release freeze starts on 2024-04-01."),
    ("time", "The nightly backup runs at 3am UTC.", "The nightly backup runs at 5am UTC."),
    ("path", "The config lives in config/settings.yaml.", "The config lives in config/settings.toml."),
    ("identifier", "Set FEATURE_NEW_CHECKOUT to true in staging.", "Set FEATURE_NEW_SEARCH to true in staging."),
    ("region", "Deploy to us-east-1 first.", "Deploy to eu-west-1 first."),
    ("person", "Deploys to the payments cluster need sign-off from Jonas.", "Deploys to the payments cluster need sign-off from Elena."),
    ("team", "The platform team owns the deploy pipeline.", "The payments team owns the deploy pipeline."),
    ("library", "Use requests for HTTP calls in the CLI.", "Use httpx for HTTP calls in the CLI."),
    ("frequency", "Dependabot checks dependencies daily.", "Dependabot checks dependencies weekly."),
    ("negation", "Tests should hit the real database.", "Tests should not hit the real database."),
    ("contrast", "Logs are kept for at least 30 days.", "Logs are kept for at most 30 days."),
    ("environment", "Debug logging is enabled in development.", "Debug logging is enabled in production."),
    ("order", "Run migrations before deploying the new code.", "Deploy the new code before running migrations."),
    ("order", "Promote staging to production, not production to staging.", "Promote production to staging, not staging to production."),
]  # fmt: skip

PARAPHRASES = [
    ("Don't cache the auth responses.", "Do not cache the auth responses."),
    ("Retry three times with a 30 second backoff.", "Retry 3 times with a 30-second backoff."),
    ("Run make test before pushing to main.", "Before pushing to main, run make test."),
    ("Use Postgres 16 for local development.", "use postgres 16 for local development."),
    ("Make sure the feature flag is off in production.", "Ensure the feature flag is off in production."),
    ("The prod cluster runs Kubernetes 1.29.", "The production cluster runs Kubernetes 1.29."),
    ("Always pin Node 18 for the billing service.", "Always pin Node 18 for the billing service!"),
    ("Sessions expire after fifteen minutes.", "Sessions expire after 15 minutes."),
]


@pytest.mark.parametrize(("kind", "old", "new"), CHANGED, ids=[f"{c[0]}-{i}" for i, c in enumerate(CHANGED)])
def test_a_near_identical_text_with_another_fact_is_never_a_noop(embedder, kind, old, new):
    decision = verdict(embedder, old, new)
    assert decision.operation != NOOP, decision.reason
    assert compare_facts(old, new), "the differing content-bearing token is found"


@pytest.mark.parametrize(("old", "new"), PARAPHRASES)
def test_a_paraphrase_that_keeps_every_content_token_is_recognised(embedder, old, new):
    decision = verdict(embedder, old, new)
    assert decision.operation == NOOP, decision.reason
    assert compare_facts(old, new) == []


def test_a_changed_version_is_an_update_that_says_what_changed(embedder):
    decision = verdict(
        embedder, "Always pin Node 18 for the billing service.", "Always pin Node 20 for the billing service."
    )
    assert decision.operation == UPDATE and decision.changed_fact
    assert decision.reason == "version changed: 18 → 20"
    assert [(c.kind, c.old, c.new) for c in decision.changes] == [("version", ["18"], ["20"])]


def test_memories_of_another_project_are_never_duplicates_or_superseded(embedder):
    text = "Always pin Node 18 for the billing service."
    decision = verdict(
        embedder, text, text + " ", old_entities=["project:billing"], new_entities=["project:checkout"]
    )
    assert decision.operation == ADD and "different scope" in decision.reason  # even the same text
    decision = verdict(
        embedder,
        "Always pin Node 18 for the billing service.",
        "Always pin Node 18 for the billing service, really.",
        old_entities=["project:billing"],
        new_entities=["project:checkout"],
    )
    assert decision.operation == ADD and "different scope" in decision.reason


def test_a_person_entity_on_both_sides_that_differs_keeps_both_facts(embedder):
    decision = verdict(
        embedder,
        "Owns the billing on-call rotation this quarter.",
        "Owns the billing on-call rotation this quarter!",
        old_entities=["person:alice"],
        new_entities=["person:bob"],
    )
    assert decision.operation == ADD and "person" in decision.reason


def test_entities_of_one_kind_on_one_side_only_do_not_split_the_scope(embedder):
    decision = verdict(
        embedder,
        "Run make test before pushing.",
        "Run make test before pushing!",
        old_entities=[],
        new_entities=["project:web"],
    )
    assert decision.operation == NOOP


def test_a_changed_fact_in_another_category_is_added_not_superseding(embedder):
    decision = verdict(
        embedder,
        "Redis runs on port 6380 in staging.",
        "Redis runs on port 6381 in staging.",
        old_category="gotcha",
    )
    assert decision.operation == ADD and "category" in decision.reason


def test_decide_prefers_a_noop_then_the_closest_update(embedder):
    texts = [
        "Cache product listings for 300 seconds.",
        "Cache product listings for 60 seconds.",
        "Cache product listings for 300 seconds!",
    ]
    vectors = embedder.encode(texts)
    new = Side(texts[2], "workflow")
    neighbours = [
        (Side(texts[1], "workflow", ref="sixty"), float(vectors[1] @ vectors[2])),
        (Side(texts[0], "workflow", ref="three-hundred"), float(vectors[0] @ vectors[2])),
    ]
    decision = decide(new, neighbours)
    assert decision.operation == NOOP and decision.compared_with == "three-hundred"
    assert (
        decide(Side(texts[1], "workflow"), [(Side(texts[0], "workflow", ref="old"), 0.97)]).operation
        == UPDATE
    )
    assert decide(Side("anything", "workflow"), []).reason == "no similar memory"


def test_content_tokens_class_what_they_read():
    kinds = {
        t.key: t.kind
        for t in content_tokens(
            "Give the job 4 GB on port 8080 at 3pm on 2024-05-01, see src/app.py and `make test`; never on Fridays."
        )
    }
    assert kinds["4gb"] == "number" and kinds["8080"] == "port" and kinds["15:00"] == "time"
    assert (
        kinds["2024-05-01"] == "date" and kinds["src/app.py"] == "path" and kinds["make test"] == "identifier"
    )
    assert kinds["not"] == "negation" and kinds["friday"] == "date"


def test_the_changed_tokens_are_marked_for_the_review():
    pieces = highlight_spans(
        "Always pin Node 20 for the billing service.", "Always pin Node 18 for the billing service."
    )
    assert [text for text, marked in pieces if marked] == ["20"]
    assert "".join(text for text, _ in pieces) == "Always pin Node 20 for the billing service."


def lesson_verdict(embedder, old: str, new: str):
    """The verdict of ``new`` as extraction decides a lesson it found (the same lesson in other words
    reinforces), at the configured EXTRACTION_SAME_LESSON_COSINE."""
    from memory.conf import setting

    vectors = embedder.encode([old, new])
    return decide_pair(
        Side(new, "workflow", scope_of([])),
        Side(old, "workflow", scope_of([])),
        float(vectors[0] @ vectors[1]),
        same_lesson_cosine=setting("EXTRACTION_SAME_LESSON_COSINE"),
    )


# Changed facts a session may state that the same-lesson rule once took for the lesson restated (each
# NOOP before: the changed fact lost from what is served). From the dev pairs of bench/data.
LESSON_CHANGED = [
    # one thing replaced by another read as another kind: a name left out, an identifier added
    ("Transactional emails are sent through Postmark.", "Transactional emails are sent through SendGrid."),
    ("Lint the Python code in ml-pipeline with Ruff before pushing.", "Lint the Python code in ml-pipeline with Flake8 before pushing."),
    # a contrast word on one side only
    ("Two-factor auth is optional for contractors.", "Two-factor auth is mandatory for contractors."),
    ("Canary analysis is required before promotion.", "Canary analysis is optional before promotion."),
    # "all" / "every" on one side only, with a qualifier added or left out
    ("Security patches are applied to all hosts within 48 hours.", "Security patches are applied to internet-facing hosts within 48 hours."),
    ("The style guide covers the Go services.", "The style guide covers every service."),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new"), LESSON_CHANGED)
def test_extraction_never_takes_a_changed_fact_for_its_lesson_restated(embedder, old, new):
    assert lesson_verdict(embedder, old, new).operation != NOOP


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Never commit .env files to the repository.", "Never commit .env files to the repository; they hold secrets."),
        ("Every service must expose a /healthz endpoint.", "Every service must expose a /healthz endpoint for the load balancer."),
        ("Use pnpm, not npm, in the web-dashboard.", "In the web-dashboard we use pnpm, never npm."),
    ],
)  # fmt: skip
def test_extraction_still_reinforces_a_lesson_restated_with_a_detail(embedder, old, new):
    assert lesson_verdict(embedder, old, new).operation == NOOP


@pytest.mark.parametrize(
    ("text", "quantified"),
    [
        ("Security patches are applied to all hosts within 48 hours.", True),
        ("Every service must expose a /healthz endpoint.", True),
        ("Back up all of our databases nightly.", True),
        ("Whenever anyone touches a query! macro, run cargo sqlx prepare.", True),
        ("The hub tokenizer turns them all into [UNK].", False),  # a pronoun's "all" quantifies no thing
        ("The style guide covers the Go services.", False),
        ("No deploy ships without a plan.", False),  # "no" is a negation, compared as one
    ],
)
def test_what_says_all_of_a_thing(text, quantified):
    from memory.services.upsert import universal

    assert universal(text) is quantified
