from __future__ import annotations

import hashlib

import pytest
from django.db import IntegrityError, connection, transaction

from memory.models import (
    ApiToken,
    Entity,
    FeedbackEvent,
    Memory,
    Observation,
    Reflection,
    Session,
    SessionMessage,
)


def make_memory(team, **fields) -> Memory:
    fields.setdefault("team", team)
    fields.setdefault("content", "Run migrations before tests")
    fields.setdefault("content_hash", hashlib.sha256(fields["content"].encode()).hexdigest())
    return Memory.objects.create(**fields)


def index_definitions(table: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cursor.fetchall())


def test_the_vector_extension_is_installed(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    assert tuple(int(part) for part in version.split(".")[:2]) >= (0, 6)


def test_the_embedding_has_an_hnsw_cosine_index(db):
    definition = index_definitions("memory_memory")["memory_embedding_hnsw"]
    assert "USING hnsw (embedding vector_cosine_ops)" in definition


def test_the_search_vector_is_generated_and_gin_indexed(team):
    assert "USING gin (search_vector)" in index_definitions("memory_memory")["memory_search_vector_gin"]
    memory = make_memory(team, content="Postgres migrations are running slowly")
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_vector::text FROM memory_memory WHERE id = %s", [memory.id])
        (vector,) = cursor.fetchone()
    assert "'migrat'" in vector and "'postgr'" in vector


@pytest.mark.parametrize(
    "field,value",
    [
        ("kind", "memo"),
        ("memory_type", "rumour"),
        ("category", "misc"),
        ("priority", "urgent"),
        ("maturity", "ancient"),
        ("status", "lost"),
        ("source", "telepathy"),
        ("confidence", 101),
        ("feedback_score", 9.0),
        ("feedback_score", 0.0),
    ],
)
def test_the_database_rejects_values_outside_the_enums_and_ranges(team, field, value):
    memory = make_memory(team)
    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.filter(pk=memory.pk).update(**{field: value})


def test_the_database_rejects_empty_and_oversized_content(team):
    with pytest.raises(IntegrityError), transaction.atomic():
        make_memory(team, content="")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_memory(team, content="x" * 8001)


def test_two_live_memories_cannot_share_content(team):
    make_memory(team, content="Use uv for Python installs", content_hash="h1")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_memory(team, content="Use uv for Python installs", content_hash="h1")
    # A rejected memory frees the content for a new one.
    Memory.objects.filter(content_hash="h1").update(status="rejected")
    make_memory(team, content="Use uv for Python installs", content_hash="h1")


def test_two_teams_may_each_have_a_live_memory_of_the_same_content(team, other_team):
    ours = make_memory(team, content="Use uv for Python installs", content_hash="h1")
    theirs = make_memory(other_team, content="Use uv for Python installs", content_hash="h1")
    assert list(Memory.objects.for_team(team)) == [ours]
    assert list(Memory.objects.for_team(other_team)) == [theirs]


def test_entity_slugs_are_unique_and_well_formed(team):
    Entity.objects.create(team=team, slug="person:mark-robinson", type="person", name="Mark Robinson")
    with pytest.raises(IntegrityError), transaction.atomic():
        Entity.objects.create(team=team, slug="person:mark-robinson", type="person", name="Mark R")
    with pytest.raises(IntegrityError), transaction.atomic():
        Entity.objects.create(team=team, slug="Person:Mark Smith", type="person", name="Mark Smith")
    with pytest.raises(IntegrityError), transaction.atomic():
        Entity.objects.create(team=team, slug="project:mark", type="person", name="Mark")


def test_an_entity_slug_is_unique_per_team_not_across_teams(team, other_team):
    ours = Entity.objects.create(team=team, slug="project:api", type="project", name="Api")
    theirs = Entity.objects.create(team=other_team, slug="project:api", type="project", name="Api")
    assert ours.pk != theirs.pk
    assert list(Entity.objects.for_team(team)) == [ours]
    assert list(Entity.objects.for_team(other_team)) == [theirs]


def test_session_messages_are_unique_by_seq(team, member):
    session = Session.objects.create(team=team, external_id="abc", user=member)
    SessionMessage.objects.create(team=team, session=session, seq=1, role="user", content="hi")
    with pytest.raises(IntegrityError), transaction.atomic():
        SessionMessage.objects.create(team=team, session=session, seq=1, role="assistant", content="again")
    with pytest.raises(IntegrityError), transaction.atomic():
        SessionMessage.objects.create(team=team, session=session, seq=2, role="narrator", content="bad role")


def test_feedback_and_tokens_are_checked(team, member):
    memory = make_memory(team)
    with pytest.raises(IntegrityError), transaction.atomic():
        FeedbackEvent.objects.create(team=team, memory=memory, signal="meh")
    with pytest.raises(IntegrityError), transaction.atomic():
        FeedbackEvent.objects.create(team=team, memory=memory, signal="helpful", value=1.5)
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiToken.objects.create(
            user=member,
            membership=member.memberships.get(team=team),
            prefix="p1",
            key_hash="k1",
            scopes=["read", "admin"],
        )


def test_observation_and_reflection_proxies_split_one_table(team):
    observation = Observation.objects.create(team=team, content="seen once", content_hash="o")
    reflection = Reflection.objects.create(team=team, content="condensed", content_hash="r")
    assert observation.kind == "observation" and reflection.kind == "reflection"
    assert list(Observation.objects.all()) == [observation]
    assert list(Reflection.objects.values_list("pk", flat=True)) == [reflection.pk]
    assert Memory.objects.count() == 2
