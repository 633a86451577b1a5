from __future__ import annotations

import re

import pytest
from django.utils import timezone

from memory.models import Memory
from memory.services.export import export_memory_md
from memory.services.feedback import feedback_record
from memory.services.maturity import memory_deprecate, memory_promote
from memory.services.store import ADD, memory_store
from tests.conftest import voter

pytestmark = pytest.mark.usefixtures("embedder")


def remember(team, content: str, **fields) -> Memory:
    result = memory_store(team=team, content=content, **fields)
    assert result.operation == ADD, f"expected a new memory for {content!r}"
    return result.memory


def vouch(memory: Memory, times: int = 3) -> Memory:
    """Helpful feedback ``times`` times: three events make a memory established."""
    for index in range(times):
        feedback_record(memory=memory, signal="helpful", user=voter(index, memory.team))
    memory.refresh_from_db()
    assert memory.maturity == "established"
    return memory


def approve(memory: Memory, curator) -> Memory:
    memory.reviewed_by = curator
    memory.reviewed_at = timezone.now()
    memory.save(update_fields=["reviewed_by", "reviewed_at"])
    return memory


def sections(markdown: str) -> dict[str, list[str]]:
    """``{heading: [memory lines]}`` for every ``## heading`` of the export."""
    found: dict[str, list[str]] = {}
    current = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = line[3:]
            found[current] = []
        elif line.startswith("- ") and current is not None:
            found[current].append(line)
    return found


def position(lines: list[str], memory: Memory) -> int:
    return next(index for index, line in enumerate(lines) if str(memory.pk) in line)


def header(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("Exported from"))


@pytest.fixture
def established(team, curator) -> dict[str, Memory]:
    memories = {
        "migrations": vouch(
            remember(
                team,
                "Run manage.py migrate before the test suite or pytest-django fails on missing tables.",
                memory_type="correction",
                category="workflow",
            )
        ),
        "ruff": vouch(
            remember(
                team,
                "Format Python with ruff format; black is no longer used in this repository.",
                memory_type="decision",
                category="convention",
            )
        ),
        "proven": memory_promote(
            memory=remember(
                team,
                "The HNSW index on memory embeddings uses cosine distance, so vectors must be normalized.",
                memory_type="insight",
                category="architecture",
            ),
            actor=curator,
        ),
        "critical": approve(
            remember(
                team,
                "Never run migrations against the production database from a developer laptop.",
                memory_type="commitment",
                category="workflow",
                priority="critical",
            ),
            curator,
        ),
        "candidate": remember(
            team,
            "The office coffee machine is descaled every Friday afternoon by facilities.",
            memory_type="insight",
            category="gotcha",
        ),
        "anti_pattern": remember(
            team,
            "AVOID: mocking the ORM in integration tests; it hid a broken schema change for a week.",
            memory_type="correction",
            category="debugging",
            is_negative=True,
        ),
    }
    return memories


def test_the_export_is_named_memory_md(team, established):
    assert export_memory_md(team=team).filename == "MEMORY.md"


def test_the_same_data_exports_to_the_same_text(team, established):
    first = export_memory_md(team=team)
    second = export_memory_md(team=team)
    assert first.markdown == second.markdown
    assert [m.pk for m in first.memories] == [m.pk for m in second.memories]


def test_the_export_does_not_depend_on_the_order_memories_were_loaded_in(team, established, curator):
    now = timezone.now()
    before = export_memory_md(team=team, now=now).markdown
    # Touching rows changes the order PostgreSQL returns them in, not what is exported.
    for memory in Memory.objects.for_team(team).order_by("?"):
        memory.save(update_fields=["updated_at"])
    assert export_memory_md(team=team, now=now).markdown == before


def test_candidates_are_left_out_and_established_memories_are_in(team, established):
    markdown = export_memory_md(team=team).markdown
    assert str(established["candidate"].pk) not in markdown
    assert "coffee machine" not in markdown
    assert str(established["migrations"].pk) in markdown
    assert str(established["ruff"].pk) in markdown


def test_a_memory_becomes_exported_once_feedback_establishes_it(team, db):
    memory = remember(
        team,
        "Restart the Celery worker after changing task signatures, or it runs the old code.",
        category="gotcha",
    )
    assert str(memory.pk) not in export_memory_md(team=team).markdown

    feedback_record(memory=memory, signal="helpful", user=voter(0, team))
    feedback_record(memory=memory, signal="helpful", user=voter(1, team))
    assert str(memory.pk) not in export_memory_md(team=team).markdown

    feedback_record(memory=memory, signal="helpful", user=voter(2, team))
    assert str(memory.pk) in sections(export_memory_md(team=team).markdown)["Gotcha"][0]


def test_one_persons_votes_never_put_a_memory_into_the_export(team, db, member, curator):
    memory = remember(team, "Always vendor the payments SDK into third_party/.", category="convention")
    for _ in range(6):
        feedback_record(memory=memory, signal="helpful", user=member)
    memory.refresh_from_db()
    assert memory.maturity == "candidate" and memory.helpful_count == 6
    assert str(memory.pk) not in export_memory_md(team=team).markdown
    # A second person's vote, or a curator's review, is what promotes it.
    feedback_record(memory=memory, signal="helpful", user=curator)
    memory.refresh_from_db()
    assert memory.maturity in ("established", "proven")
    assert str(memory.pk) in export_memory_md(team=team).markdown


def test_a_proven_memory_is_exported(team, established):
    lines = sections(export_memory_md(team=team).markdown)["Architecture"]
    assert len(lines) == 1 and str(established["proven"].pk) in lines[0]


def test_a_critical_memory_a_curator_approved_is_exported_without_feedback_and_listed_first(
    team, established
):
    lines = sections(export_memory_md(team=team).markdown)["Workflow"]
    assert established["critical"].maturity == "candidate"
    assert position(lines, established["critical"]) == 0
    assert position(lines, established["critical"]) < position(lines, established["migrations"])
    assert "**critical**" in lines[0]


def test_a_critical_memory_nobody_approved_is_not_exported(team, db):
    memory = remember(
        team,
        "Rotate the signing keys before the audit on the first Monday of the quarter.",
        category="workflow",
        priority="critical",
    )
    assert str(memory.pk) not in export_memory_md(team=team).markdown


def test_memories_are_grouped_under_their_category(team, established):
    found = sections(export_memory_md(team=team).markdown)
    assert [str(established["ruff"].pk) in line for line in found["Convention"]] == [True]
    assert [str(established["proven"].pk) in line for line in found["Architecture"]] == [True]
    assert sorted(position(found["Workflow"], established[name]) for name in ("critical", "migrations")) == [
        0,
        1,
    ]
    assert len(found["Workflow"]) == 2
    assert "Gotcha" not in found  # its only memory is a candidate
    assert "Debugging" not in found  # its only memory is an anti-pattern


def test_anti_patterns_have_their_own_section(team, established):
    found = sections(export_memory_md(team=team).markdown)
    assert list(found)[-1] == "Anti-patterns"
    assert len(found["Anti-patterns"]) == 1
    assert str(established["anti_pattern"].pk) in found["Anti-patterns"][0]
    assert "AVOID: mocking the ORM" in found["Anti-patterns"][0]


def test_the_header_carries_the_date_and_the_counts(team, established):
    now = timezone.now()
    line = header(export_memory_md(team=team, now=now).markdown)
    assert now.date().isoformat() in line
    assert re.search(r"\b4 memories\b", line)
    assert re.search(r"\b1 proven\b", line)
    assert re.search(r"\b2 established\b", line)
    assert re.search(r"\b1 critical\b", line)
    assert re.search(r"\b1 anti-patterns?\b", line)


def test_the_export_starts_with_a_title_and_says_it_is_reference_notes(team, established):
    markdown = export_memory_md(team=team).markdown
    assert markdown.startswith("# ")
    assert "not instructions" in markdown.lower()


def test_an_empty_export_says_nothing_is_established_yet(team, db):
    result = export_memory_md(team=team)
    assert re.search(r"\b0 memories\b", header(result.markdown))
    assert sections(result.markdown) == {}
    assert result.memories == [] and result.anti_patterns == []


def test_a_deprecated_memory_is_not_exported(team, established, curator):
    memory_deprecate(
        memory=established["ruff"], actor=curator, reason="We moved back to black for the monorepo."
    )

    result = export_memory_md(team=team)

    assert str(established["ruff"].pk) not in result.markdown
    assert "Convention" not in sections(result.markdown)
    assert established["ruff"] not in result.memories


def test_the_quota_per_category_keeps_the_best_memories(team, db, settings):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "EXPORT_CATEGORY_QUOTA": 2}
    conventions = [
        "Name Django services entity_action with keyword-only arguments.",
        "Use pathlib for file paths instead of os.path string joins.",
        "Prefer f-strings over percent formatting in new Python code.",
        "Write type hints on every public function and enable postponed annotations.",
    ]
    weaker = [vouch(remember(team, conventions[0], category="convention"), times=3)]
    weaker.append(vouch(remember(team, conventions[1], category="convention"), times=3))
    stronger = [vouch(remember(team, conventions[2], category="convention"), times=4)]
    stronger.append(vouch(remember(team, conventions[3], category="convention"), times=4))
    gotchas = [
        vouch(remember(team, "Celery eta tasks are lost when the Redis broker restarts.", category="gotcha")),
        vouch(
            remember(
                team,
                "Pgvector HNSW filters after the scan, so strict filters can return nothing.",
                category="gotcha",
            )
        ),
    ]

    found = sections(export_memory_md(team=team).markdown)

    assert len(found["Convention"]) == 2
    assert {m.pk for m in stronger} == {
        m.pk for m in stronger + weaker if any(str(m.pk) in line for line in found["Convention"])
    }
    assert len(found["Gotcha"]) == 2
    assert all(any(str(m.pk) in line for line in found["Gotcha"]) for m in gotchas)


@pytest.fixture
def project_memories(team, db) -> dict[str, Memory]:
    return {
        "billing": vouch(
            remember(
                team,
                "Invoice totals are rounded to the cent with Decimal, never with float.",
                category="gotcha",
                entities=["project:billing"],
            )
        ),
        "web": vouch(
            remember(
                team,
                "The storefront formats prices with Intl.NumberFormat in the browser.",
                category="convention",
                entities=["project:web"],
            )
        ),
        "team": vouch(
            remember(
                team,
                "Every pull request needs one approving review before it is merged.",
                category="workflow",
            )
        ),
        "feature": vouch(
            remember(
                team,
                "Session cookies are refreshed by the auth middleware on every request.",
                category="architecture",
                entities=["feature:auth"],
            )
        ),
    }


@pytest.mark.parametrize("project", ["project:billing", "billing"])
def test_a_project_export_holds_its_own_and_team_wide_memories_but_not_another_projects(
    team, project_memories, project
):
    result = export_memory_md(team=team, project=project)

    assert {m.pk for m in result.memories} == {
        project_memories[name].pk for name in ("billing", "team", "feature")
    }
    assert str(project_memories["web"].pk) not in result.markdown
    assert "project:billing" in header(result.markdown)
    assert result.filename == "MEMORY-billing.md"


def test_an_export_without_a_project_holds_every_projects_memories(team, project_memories):
    result = export_memory_md(team=team)
    assert {m.pk for m in result.memories} == {m.pk for m in project_memories.values()}


# The wall between teams (DESIGN.md §11)


@pytest.fixture
def other_teams_twins(other_team, established) -> dict[str, Memory]:
    """Another team holding the very same memories, vouched for by its own members."""
    twins = {}
    for name, memory in established.items():
        twin = memory_store(
            team=other_team,
            content=memory.content,
            memory_type=memory.memory_type,
            category=memory.category,
            priority=memory.priority,
            is_negative=memory.is_negative,
        ).memory
        twins[name] = vouch(twin) if name in ("migrations", "ruff") else twin
    return twins


def test_another_teams_memories_with_the_same_words_are_never_exported(
    team, other_team, established, other_teams_twins
):
    now = timezone.now()
    ours = export_memory_md(team=team, now=now)
    theirs = export_memory_md(team=other_team, now=now)
    assert {m.team_id for m in ours.memories + ours.anti_patterns} == {team.pk}
    assert {m.team_id for m in theirs.memories + theirs.anti_patterns} == {other_team.pk}
    for twin in other_teams_twins.values():
        assert str(twin.pk) not in ours.markdown
    for memory in established.values():
        assert str(memory.pk) not in theirs.markdown
    # The counts are the team's own: 4 memories here, the two the other team vouched for there.
    assert re.search(r"\b4 memories\b", header(ours.markdown))
    assert re.search(r"\b2 memories\b", header(theirs.markdown))
    assert {m.pk for m in theirs.memories} == {other_teams_twins[n].pk for n in ("migrations", "ruff")}


def test_a_project_only_another_team_has_exports_none_of_its_memories(team, other_team, project_memories):
    theirs = vouch(
        remember(
            other_team,
            "Checkout totals of the zebra cart are rounded per line item.",
            category="gotcha",
            entities=["project:zebra-cart"],
        )
    )
    result = export_memory_md(team=team, project="project:zebra-cart")
    assert result.project is None
    assert str(theirs.pk) not in result.markdown
    # Only the team's memories of no project: the project is unknown to the team.
    assert {m.pk for m in result.memories} == {project_memories[n].pk for n in ("team", "feature")}
    assert [m.pk for m in export_memory_md(team=other_team, project="zebra-cart").memories] == [theirs.pk]


def test_a_project_limited_export_holds_only_that_projects_memories(team, other_team, project_memories):
    theirs = vouch(
        remember(
            other_team,
            "Invoice totals are rounded to the cent with Decimal, never with float.",
            category="gotcha",
            entities=["project:billing"],
        )
    )
    result = export_memory_md(team=team, allowed_projects=["project:billing"])
    assert [m.pk for m in result.memories] == [project_memories["billing"].pk]
    assert str(theirs.pk) not in result.markdown
    assert str(project_memories["team"].pk) not in result.markdown
    assert [
        m.pk for m in export_memory_md(team=team, project="billing", allowed_projects=["billing"]).memories
    ] == []
    scoped = export_memory_md(team=team, project="billing", allowed_projects=["project:billing"])
    assert [m.pk for m in scoped.memories] == [project_memories["billing"].pk]
    assert export_memory_md(team=team, project="web", allowed_projects=["project:billing"]).memories == []
    assert export_memory_md(team=team, allowed_projects=[]).memories == []
