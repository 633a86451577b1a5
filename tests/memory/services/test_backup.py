"""Backup and restore (memory/services/backup.py, manage.py export_data / import_data)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from memory.models import (
    Entity,
    EntityMention,
    FactChange,
    FeedbackEvent,
    Memory,
    MemoryEvent,
    Recall,
    Session,
    SessionMessage,
    Signal,
)
from memory.services.entities import entity_get_or_create, entity_merge, entity_set_aliases
from memory.services.feedback import feedback_record
from memory.services.search import memory_search
from memory.services.sessions import messages_append, session_end, session_start
from memory.services.store import memory_store

QUERIES = [
    "which node version does billing use",
    "how do we deploy to staging",
    "what went wrong with the auth tokens",
    "database migrations",
]
TABLES = (
    Memory,
    Entity,
    EntityMention,
    Session,
    SessionMessage,
    Recall,
    FeedbackEvent,
    MemoryEvent,
    FactChange,
)


def seed(member, curator, team) -> None:
    memory_store(team=team, content="Billing runs on Node 18 in production.", entities=["project:billing"])
    memory_store(
        team=team,
        content="Billing runs on Node 20 in production.",
        entities=["project:billing"],
        author=member,
    )
    memory_store(
        team=team, content="Deploy to staging with `make deploy ENV=staging` after the smoke tests pass."
    )
    memory_store(
        team=team,
        content="Deploy to staging with `make deploy ENV=staging` after the smoke tests pass.",
        author=curator,
    )
    auth = memory_store(
        team=team, content="Auth tokens expire after 15 minutes; refresh them 5 minutes early."
    ).memory
    memory_store(
        team=team,
        content="Run database migrations before deploying the web tier, never after.",
        author=member,
    )
    entity_set_aliases(entity=entity_get_or_create("person:mark-robinson", team=team), aliases=["Marky"])
    entity_merge(
        source=entity_get_or_create("project:bill", team=team),
        target=entity_get_or_create("project:billing", team=team),
    )
    session, _ = session_start(
        team=team, user=member, external_id="backup-session", agent="claude-code", project="billing"
    )
    messages_append(
        session=session, messages=[{"seq": 0, "role": "user", "content": "No, don't use requests."}]
    )
    memory_search(team=team, query="auth tokens", session=session)
    session_end(session=session, success=True, duration_ms=1000)
    feedback_record(memory=auth, signal=Signal.HELPFUL, user=curator, note="saved me")


def snapshot(team) -> list:
    return [
        [(str(hit.memory.pk), round(hit.score, 6)) for hit in memory_search(team=team, query=query).results]
        for query in QUERIES
    ]


def empty_everything() -> None:
    Memory.sources.through.objects.all().delete()
    for model in reversed(TABLES):
        model.objects.all().delete()
    get_user_model().objects.all().delete()


def test_export_then_import_into_an_empty_database_gives_identical_search_results(
    db, member, curator, team, tmp_path
):
    seed(member, curator, team)
    before = snapshot(team)
    counts = {model.__name__: model.objects.count() for model in TABLES}
    superseded = Memory.objects.get(content__contains="Node 18")
    history = (
        superseded.superseded_by_id,
        superseded.valid_until,
        superseded.created_at,
        superseded.updated_at,
    )
    path = tmp_path / "team.jsonl"
    call_command("export_data", str(path))
    assert "key_hash" not in path.read_text() and "password" not in path.read_text()

    empty_everything()
    assert Memory.objects.count() == 0
    call_command("import_data", str(path))

    assert {model.__name__: model.objects.count() for model in TABLES} == counts
    assert snapshot(team) == before
    superseded = Memory.objects.get(content__contains="Node 18")
    assert (
        superseded.superseded_by_id,
        superseded.valid_until,
        superseded.created_at,
        superseded.updated_at,
    ) == history
    assert Entity.objects.get(slug="project:bill").merged_into.slug == "project:billing"
    assert Entity.objects.get(slug="person:mark-robinson").aliases == ["Marky"]
    assert FeedbackEvent.objects.get(note="saved me").user.username == "cora"
    assert not get_user_model().objects.get(username="cora").has_usable_password()
    assert MemoryEvent.objects.filter(action="reinforced").count() >= 1  # the reinforcement's text is kept

    call_command("import_data", str(path))  # again: nothing new
    assert {model.__name__: model.objects.count() for model in TABLES} == counts


def test_a_bad_file_is_refused_whole_with_every_problem_and_its_line(db, member, curator, team, tmp_path):
    seed(member, curator, team)
    path = tmp_path / "team.jsonl"
    call_command("export_data", str(path))
    lines = path.read_text().splitlines()
    memory_line = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "memory")
    broken = json.loads(lines[memory_line])
    broken["data"]["maturity"] = "legendary"
    broken["data"]["colour"] = "blue"
    lines[memory_line] = json.dumps(broken)
    message_line = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "message")
    odd = json.loads(lines[message_line])
    odd["data"]["created_at"] = [2026, 11, 23]
    odd["data"]["session"] = "00000000-0000-0000-0000-000000000000"
    lines[message_line] = json.dumps(odd)
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n")
    empty_everything()
    with pytest.raises(CommandError) as error:
        call_command("import_data", str(path))
    message = str(error.value)
    assert "nothing changed" in message
    assert "line 4: not JSON" in message
    assert f"line {memory_line + 2}: memory has unknown fields: colour" in message
    assert f"line {memory_line + 2}: memory.maturity: Value 'legendary' is not a valid choice." in message
    assert f"line {message_line + 2}: message.created_at: [2026, 11, 23] is not a valid value" in message
    assert f"line {message_line + 2}: message.session refers to an unknown session" in message
    assert Memory.objects.count() == 0 and Entity.objects.count() == 0


def test_an_export_from_another_embedding_model_needs_recomputed_embeddings(
    db, member, curator, team, tmp_path
):
    seed(member, curator, team)
    before = snapshot(team)
    path = tmp_path / "team.jsonl"
    call_command("export_data", str(path))
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["embedding_model"] = "some-other-model"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    empty_everything()
    with pytest.raises(CommandError, match="import with --recompute-embeddings"):
        call_command("import_data", str(path))
    call_command("import_data", str(path), recompute_embeddings=True)
    assert [[pk for pk, _ in hits] for hits in snapshot(team)] == [[pk for pk, _ in hits] for hits in before]


def test_a_memory_imported_without_an_embedding_is_embedded(db, member, curator, team, tmp_path):
    """A file written by another tool may carry a memory with no embedding (the format allows null):
    the import embeds it, so a search finds it by its meaning, not only by its words."""
    seed(member, curator, team)
    path = tmp_path / "team.jsonl"
    call_command("export_data", str(path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines[1:]:
        if line["type"] == "memory" and line["data"]["content"].startswith("Auth tokens"):
            line["data"]["embedding"] = None
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    empty_everything()
    out = StringIO()

    call_command("import_data", str(path), stdout=out)

    assert "Embedded 1 memories the file carried without an embedding." in out.getvalue()
    assert Memory.objects.filter(embedding__isnull=True).count() == 0
    found = memory_search(team=team, query="how long do login credentials stay valid?")
    hit = next(hit for hit in found.results if hit.memory.content.startswith("Auth tokens"))
    assert hit.explain["vector_rank"] is not None


# --- teams (DESIGN.md §11): a backup is one team's, and an import touches no other team ----------------


def seed_other(outsider, other_team):
    """Another team's memory: its own project and session, and one text that team ``acme`` has too."""
    memory_store(
        team=other_team, content="Billing runs on Node 20 in production.", entities=["project:billing"]
    )
    rocket = memory_store(
        team=other_team,
        content="The rocket launch checklist lives in ops/launch.md; never skip the fuel check.",
        entities=["project:rocket"],
        author=outsider,
    ).memory
    session, _ = session_start(
        team=other_team, user=outsider, external_id="backup-session", agent="claude-code", project="rocket"
    )
    messages_append(session=session, messages=[{"seq": 0, "role": "user", "content": "Globex secret plan."}])
    memory_search(team=other_team, query="rocket launch", session=session)
    session_end(session=session, success=True, duration_ms=1000)
    feedback_record(memory=rocket, signal=Signal.HELPFUL, user=outsider, note="globex note")
    return session


def rows_of(team) -> dict:
    """Every row of ``team``, every column but the embedding, to tell "unchanged"."""
    rows = {}
    for model in TABLES:
        names = [
            f.attname for f in model._meta.concrete_fields if f.name not in ("embedding", "search_vector")
        ]
        rows[model.__name__] = list(model.objects.for_team(team).order_by("pk").values_list(*names))
    links = Memory.sources.through.objects.filter(from_memory__team=team)
    rows["sources"] = sorted(links.values_list("from_memory_id", "to_memory_id"))
    return rows


def counts_of(team) -> dict:
    return {model.__name__: model.objects.for_team(team).count() for model in TABLES}


def test_a_teams_backup_holds_nothing_of_another_team(
    db, member, curator, outsider, team, other_team, tmp_path
):
    seed(member, curator, team)
    theirs = seed_other(outsider, other_team)
    path = tmp_path / "acme.jsonl"

    with pytest.raises(CommandError, match="several teams; name one with --team: acme, globex"):
        call_command("export_data", str(path))
    call_command("export_data", str(path), team="acme")

    text = path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["team"] == "acme"
    for name, model in (("memory", Memory), ("session", Session)):
        exported = {line["data"]["id"] for line in lines if line["type"] == name}
        assert exported == {str(pk) for pk in model.objects.for_team(team).values_list("pk", flat=True)}
    other_ids = [*Memory.objects.for_team(other_team).values_list("pk", flat=True), theirs.pk]
    assert not any(str(pk) in text for pk in other_ids)
    for foreign in ("otto", "rocket", "Globex secret plan", "globex note", "globex"):
        assert foreign not in text
    assert all("team" not in line.get("data", {}) for line in lines)
    by_type = {}
    for line in lines[1:]:
        by_type[line["type"]] = by_type.get(line["type"], 0) + 1
    expected = {
        "memory": Memory,
        "entity": Entity,
        "mention": EntityMention,
        "session": Session,
        "message": SessionMessage,
        "recall": Recall,
        "feedback": FeedbackEvent,
        "event": MemoryEvent,
        "fact_change": FactChange,
    }
    for name, model in expected.items():
        assert by_type.get(name, 0) == model.objects.for_team(team).count() == lines[0]["counts"][name]


def test_importing_a_teams_backup_into_a_third_team_leaves_both_teams_unchanged(
    db, member, curator, outsider, team, other_team, tmp_path
):
    from memory.models import Team

    seed(member, curator, team)
    seed_other(outsider, other_team)
    path = tmp_path / "acme.jsonl"
    call_command("export_data", str(path), team="acme")
    acme, globex = rows_of(team), rows_of(other_team)
    third = Team.objects.create(slug="initech", name="Initech")

    with pytest.raises(CommandError, match="several teams"):
        call_command("import_data", str(path))
    out = StringIO()
    call_command("import_data", str(path), team="initech", stdout=out)

    assert rows_of(team) == acme and rows_of(other_team) == globex
    assert "into team initech" in out.getvalue() and "were given new ones" in out.getvalue()
    assert counts_of(third) == counts_of(team)
    # The memories and sessions whose ids were acme's got new ones; everything they point at is initech's.
    own = set(Memory.objects.for_team(third).values_list("pk", flat=True))
    assert not own & set(Memory.objects.for_team(team).values_list("pk", flat=True))
    assert not set(Session.objects.for_team(third).values_list("pk", flat=True)) & set(
        Session.objects.for_team(team).values_list("pk", flat=True)
    )
    superseded = Memory.objects.for_team(third).get(content__contains="Node 18")
    assert superseded.superseded_by.team == third and "Node 20" in superseded.superseded_by.content
    assert {m.memory.team_id for m in EntityMention.objects.for_team(third)} == {third.pk}
    assert {m.entity.team_id for m in EntityMention.objects.for_team(third) if m.entity} == {third.pk}
    assert {(r.memory.team_id, r.session.team_id) for r in Recall.objects.for_team(third)} == {
        (third.pk, third.pk)
    }
    assert {e.memory.team_id for e in FeedbackEvent.objects.for_team(third)} == {third.pk}
    assert {(c.old.team_id, c.new.team_id) for c in FactChange.objects.for_team(third)} == {
        (third.pk, third.pk)
    }
    assert set(MemoryEvent.objects.for_team(third).values_list("memory_ref", flat=True)) <= own
    assert Session.objects.for_team(third).get().project.team == third
    assert Entity.objects.for_team(third).get(slug="project:bill").merged_into.team == third
    # The same search in initech finds what it finds in acme.
    for query in QUERIES:
        assert [
            hit.memory.content for hit in memory_search(team=third, query=query, record=False).results
        ] == [hit.memory.content for hit in memory_search(team=team, query=query, record=False).results]

    call_command("import_data", str(path), team="initech")  # again: the new ids are found, nothing added
    assert counts_of(third) == counts_of(team)
    assert rows_of(team) == acme and rows_of(other_team) == globex


def test_a_reference_to_another_teams_row_is_refused_like_a_missing_one(
    db, member, curator, outsider, team, other_team, tmp_path
):
    seed(member, curator, team)
    theirs = seed_other(outsider, other_team)
    path = tmp_path / "acme.jsonl"
    call_command("export_data", str(path), team="acme")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    other_memory = Memory.objects.for_team(other_team).first()
    for line in lines:
        if line["type"] == "memory" and line["data"]["content"].startswith("Auth tokens"):
            line["data"]["session"] = str(theirs.pk)
            line["data"]["superseded_by"] = str(other_memory.pk)
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    empty = tmp_path / "missing.jsonl"
    for line in lines:
        if line["type"] == "memory" and line["data"]["content"].startswith("Auth tokens"):
            line["data"]["session"] = "00000000-0000-0000-0000-000000000001"
            line["data"]["superseded_by"] = "00000000-0000-0000-0000-000000000002"
    empty.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    acme, globex = rows_of(team), rows_of(other_team)

    problems = []
    for source in (path, empty):
        with pytest.raises(CommandError) as error:
            call_command("import_data", str(source), team="acme")
        problems.append([p.split(" refers to ")[0] for p in str(error.value).splitlines()[1:]])
        assert "refers to an unknown session" in str(error.value)
        assert "refers to an unknown memory" in str(error.value)
    assert problems[0] == problems[1]  # another team's ids answer exactly like missing ones
    assert rows_of(team) == acme and rows_of(other_team) == globex
