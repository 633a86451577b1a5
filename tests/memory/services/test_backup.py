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


def seed(member, curator) -> None:
    memory_store(content="Billing runs on Node 18 in production.", entities=["project:billing"])
    memory_store(
        content="Billing runs on Node 20 in production.", entities=["project:billing"], author=member
    )
    memory_store(content="Deploy to staging with `make deploy ENV=staging` after the smoke tests pass.")
    memory_store(
        content="Deploy to staging with `make deploy ENV=staging` after the smoke tests pass.", author=curator
    )
    auth = memory_store(content="Auth tokens expire after 15 minutes; refresh them 5 minutes early.").memory
    memory_store(content="Run database migrations before deploying the web tier, never after.", author=member)
    entity_set_aliases(entity=entity_get_or_create("person:mark-robinson"), aliases=["Marky"])
    entity_merge(source=entity_get_or_create("project:bill"), target=entity_get_or_create("project:billing"))
    session, _ = session_start(
        user=member, external_id="backup-session", agent="claude-code", project="billing"
    )
    messages_append(
        session=session, messages=[{"seq": 0, "role": "user", "content": "No, don't use requests."}]
    )
    memory_search(query="auth tokens", session=session)
    session_end(session=session, success=True, duration_ms=1000)
    feedback_record(memory=auth, signal=Signal.HELPFUL, user=curator, note="saved me")


def snapshot() -> list:
    return [
        [(str(hit.memory.pk), round(hit.score, 6)) for hit in memory_search(query=query).results]
        for query in QUERIES
    ]


def empty_everything() -> None:
    Memory.sources.through.objects.all().delete()
    for model in reversed(TABLES):
        model.objects.all().delete()
    get_user_model().objects.all().delete()


def test_export_then_import_into_an_empty_database_gives_identical_search_results(
    db, member, curator, tmp_path
):
    seed(member, curator)
    before = snapshot()
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
    assert snapshot() == before
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


def test_a_bad_file_is_refused_whole_with_every_problem_and_its_line(db, member, curator, tmp_path):
    seed(member, curator)
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


def test_an_export_from_another_embedding_model_needs_recomputed_embeddings(db, member, curator, tmp_path):
    seed(member, curator)
    before = snapshot()
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
    assert [[pk for pk, _ in hits] for hits in snapshot()] == [[pk for pk, _ in hits] for hits in before]


def test_a_memory_imported_without_an_embedding_is_embedded(db, member, curator, tmp_path):
    """A file written by another tool may carry a memory with no embedding (the format allows null):
    the import embeds it, so a search finds it by its meaning, not only by its words."""
    seed(member, curator)
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
    found = memory_search(query="how long do login credentials stay valid?")
    hit = next(hit for hit in found.results if hit.memory.content.startswith("Auth tokens"))
    assert hit.explain["vector_rank"] is not None
