"""What a stored lesson reads like (memory/services/lessons.py and the transcript reading in
extraction), on real transcript turns."""

from __future__ import annotations

import pytest

from memory.services import lessons
from memory.services.extraction import transcript_lessons


def turns(*pairs: tuple[str, str]) -> list[tuple[int, str, str]]:
    return [(index, role, text) for index, (role, text) in enumerate(pairs)]


def notes(*pairs: tuple[str, str], project: str = "web-dashboard") -> list[str]:
    return [note for note, _, _, _ in transcript_lessons(turns(*pairs), project)]


def test_sentences_end_where_sentences_end_not_at_a_bang_inside_one():
    text = "No, don't turn on use_modular_headers! globally, it broke Firebase. Set it per pod, e.g. on GoogleUtilities."
    assert lessons.split_sentences(text) == [
        "No, don't turn on use_modular_headers! globally, it broke Firebase.",
        "Set it per pod, e.g. on GoogleUtilities.",
    ]
    assert lessons.split_sentences("Use `make test.` then push. Done!") == [
        "Use `make test.` then push.",
        "Done!",
    ]


@pytest.mark.parametrize(
    ("said", "role"),
    [
        ("Great, thanks!", "user"),
        ("Sounds good, ship it.", "user"),
        ("Have a good one!", "user"),
        ("Is that a problem?", "user"),
        ("What port is the staging database on", "user"),
        ("Lol I always forget where the fixtures live.", "user"),
        ("Never mind, actually do update the story too, it's just one file.", "user"),
        ("Also rename the `cb` prop to `onSelect` while you're in there.", "user"),
        ("Can you split DatePicker into a controlled and an uncontrolled version?", "user"),
        ("Run the invoice tests please.", "user"),
        ("Let me make sure the tests pass first.", "assistant"),
        ("I'll switch to transaction.on_commit in the task.", "assistant"),
        ("All 48 webhook tests pass now.", "assistant"),
        ("Done, renamed cb to onSelect in both components.", "assistant"),
        ("The Stripe webhook tests keep failing with a signature error.", "user"),
        ("Hmm, I wonder if we should cache the Docker layers too.", "user"),
    ],
)
def test_chat_questions_tasks_and_the_agents_own_steps_are_not_lessons(said, role):
    assert lessons.classify(said, role) is None


@pytest.mark.parametrize(
    ("said", "role"),
    [
        ("Tax is rounded per invoice, not per line item.", "user"),
        ("Env vars must be prefixed with VITE_ to reach the browser.", "user"),
        ("We use sentence case for all headings and button labels.", "user"),
        ("We decided all new list endpoints use cursor pagination.", "user"),
        (
            "The root cause was that the handler parses the JSON body before verifying the signature.",
            "assistant",
        ),
        ("We must revoke the leaked key, because anyone with it can mint session tokens.", "assistant"),
        ("Money amounts are integer cents in the API, never floats.", "user"),
        ("After rotating the key, invalidate existing sessions by bumping TOKEN_VERSION.", "user"),
        ("Use select_related for foreign keys in list and detail views.", "user"),
    ],
)
def test_decisions_practices_and_findings_stated_plainly_are_lessons(said, role):
    assert lessons.classify(said, role) is not None


def test_critical_needs_a_real_reason_not_never_mind():
    assert not lessons.is_critical("Never mind, actually do update the story too, it's just one file.")
    assert lessons.is_critical("Never apply a Terraform plan that destroys a production database.")
    assert lessons.is_critical("Secrets must never be committed to the repo.")
    assert not lessons.is_critical("Never use print for logging; use the logging module.")


@pytest.mark.parametrize(
    ("said", "note"),
    [
        ("Right, always verify the signature.", "Always verify the signature."),
        ("Careful, we use sentence case in this repo", "We use sentence case in web-dashboard."),
        (
            "One more thing, components here are exported from index.ts.",
            "Components in web-dashboard are exported from index.ts.",
        ),
        ("Hmm, actually keep the weights as constants.", "Keep the weights as constants."),
        ("No, don't use npm.", "Don't use npm."),
        ("FYI the staging database listens on 6433 now", "The staging database listens on 6433 now."),
    ],
)
def test_the_rewrite_makes_a_self_contained_note(said, note):
    rewritten = lessons.rewrite(said, "web-dashboard")
    assert rewritten == note
    assert lessons.is_self_contained(rewritten)


def test_a_sentence_that_depends_on_the_one_before_is_read_with_it():
    found = notes(
        ("user", "Drop the legacy_plan column."),
        ("user", "Column drops go in two releases: first stop reading and writing the column, then drop it."),
        ("assistant", "So this release keeps the column?"),
        (
            "user",
            "Exactly, otherwise the old pods still running during the deploy crash on the missing column.",
        ),
    )
    assert len(found) == 1
    assert found[0].startswith("Column drops go in two releases") and "otherwise the old pods" in found[0]


def test_a_fragment_is_read_with_the_lesson_after_it():
    found = notes(
        (
            "user",
            "Hold on, don't just cache it forever. The synonyms file changes when people edit it, so reload it when its mtime changes.",
        ),
    )
    assert found == [
        "Don't just cache it forever. The synonyms file changes when people edit it, so reload it when its mtime changes."
    ]


def test_a_rule_and_its_remedy_are_one_lesson():
    found = notes(("user", "Don't format money with float division. Use Decimal and quantize to two places."))
    assert found == ["Don't format money with float division; use Decimal and quantize to two places."]


def test_an_assistant_finding_counts_when_the_user_confirms_it_and_not_otherwise():
    said = "The search-api staging database listens on 6432, through PgBouncer."
    assert notes(("assistant", said), ("user", "OK good to know.")) == [said]
    assert notes(("assistant", said), ("user", "Thanks, anything else?")) == []


def test_a_chit_chat_session_yields_nothing():
    assert (
        notes(
            ("user", "Morning! How's it going?"),
            ("assistant", "Good morning! What are we working on today?"),
            ("user", "Nothing big, just want to poke around the repo a bit."),
            ("assistant", "Sure. The code is split into src/payments and src/invoices."),
            ("user", "Cool. Lol I always forget where the fixtures live."),
            ("user", "Nope, that's it for now. Have a good one!"),
        )
        == []
    )


@pytest.mark.parametrize(
    "note, project, named",
    [
        ("Use pnpm, not npm.", "web-dashboard", "In web-dashboard, use pnpm, not npm."),
        ("Don't commit JAVA_HOME.", "lumen-android", "In lumen-android, don't commit JAVA_HOME."),
        (
            "Partitions in tidepool are computed in UTC.",
            "tidepool-etl",
            "Partitions in tidepool are computed in UTC.",
        ),
        ("web-dashboard uses sentence case.", "web-dashboard", "web-dashboard uses sentence case."),
        (
            "The billing-api's webhooks need the raw body.",
            "billing-api",
            "The billing-api's webhooks need the raw body.",
        ),
        (
            "PgBouncer only, never direct connections.",
            "search-api",
            "In search-api, PgBouncer only, never direct connections.",
        ),
        ("I2C runs at 100 kHz.", "sensor-hub", "In sensor-hub, I2C runs at 100 kHz."),
        ("`make test`, not bare pytest.", "api", "In api, `make test`, not bare pytest."),
        ("Use pnpm.", "", "Use pnpm."),
        ("The API is versioned.", "api", "The API is versioned."),
    ],
)
def test_a_note_names_the_project_it_is_about(note, project, named):
    assert lessons.names_subject(note, project) == named


def test_the_opening_message_states_the_task_and_only_its_rules_are_lessons():
    assert (
        notes(
            ("user", "Release build crashes at the ticket list, debug builds work fine."),
            ("assistant", "Looking at the R8 mapping now."),
        )
        == []
    )
    assert (
        notes(
            ("user", "Ranker p99 is 180ms under load, GPU mostly idle."),
            ("assistant", "Let me profile the batcher."),
        )
        == []
    )
    assert notes(
        ("user", "Never run migrations from a laptop against the prod database, use the deploy job."),
        ("assistant", "Understood."),
    ) == ["Never run migrations from a laptop against the prod database, use the deploy job."]
    # Knowledge handed over as such before the task counts.
    assert notes(
        ("user", "fyi the CI emulators are API 30 images with Google APIs. The location test is red there."),
        ("assistant", "Looking at the permission dialog."),
    ) == ["The CI emulators are API 30 images with Google APIs."]
    # The same plain statement later in the session is the team's fact, not the task.
    assert notes(
        ("user", "The checkout flow is flaky."),
        ("assistant", "Which database does it use?"),
        ("user", "The staging database listens on 6433 now instead of 5433."),
    ) == ["The staging database listens on 6433 now instead of 5433."]
    assert notes(("user", "The staging database listens on 5433, not the default port.")) == [
        "The staging database listens on 5433, not the default port."
    ]
