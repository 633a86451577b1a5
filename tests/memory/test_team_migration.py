"""Upgrading without loss (issue 41, point 7): the migration puts every existing row into the team
``default``, makes every user a member (staff → owner) and binds every token; counts are equal."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("memory", "0010_mention_entity_memory_index")]
TABLES = (
    "memory_memory",
    "memory_entity",
    "memory_entitymention",
    "memory_session",
    "memory_sessionmessage",
    "memory_recall",
    "memory_feedbackevent",
    "memory_memoryevent",
    "memory_factchange",
    "memory_taskrun",
    "memory_apitoken",
)


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        found = {}
        for table in TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")
            found[table] = cursor.fetchone()[0]
        return found


@pytest.mark.django_db(transaction=True)
def test_the_upgrade_puts_every_row_into_the_default_team_and_loses_none():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("memory")
    old = migrate(BEFORE)
    try:
        User = old.get_model("auth", "User")
        Memory, Entity = old.get_model("memory", "Memory"), old.get_model("memory", "Entity")
        EntityMention, Session = old.get_model("memory", "EntityMention"), old.get_model("memory", "Session")
        SessionMessage, Recall = old.get_model("memory", "SessionMessage"), old.get_model("memory", "Recall")
        FeedbackEvent, MemoryEvent = (
            old.get_model("memory", "FeedbackEvent"),
            old.get_model("memory", "MemoryEvent"),
        )
        FactChange, TaskRun = old.get_model("memory", "FactChange"), old.get_model("memory", "TaskRun")
        ApiToken = old.get_model("memory", "ApiToken")
        staff = User.objects.create(username="sam", is_staff=True)
        plain = User.objects.create(username="pat")
        project = Entity.objects.create(slug="project:api", type="project", name="api")
        first = Memory.objects.create(content="Run make test.", content_hash="a" * 64, author=plain)
        second = Memory.objects.create(content="Run make check.", content_hash="b" * 64, author=staff)
        EntityMention.objects.create(memory=first, entity=project, raw="project:api", resolved=True)
        session = Session.objects.create(external_id="s-1", user=plain, project=project)
        SessionMessage.objects.create(session=session, seq=1, role="user", content="hi")
        Recall.objects.create(session=session, memory=first, rank=1, score=0.5)
        FeedbackEvent.objects.create(memory=first, signal="helpful", user=staff)
        MemoryEvent.objects.create(memory=first, memory_ref=first.pk, action="created")
        FactChange.objects.create(old=first, new=second, reason="changed")
        TaskRun.objects.create(task="decay")
        ApiToken.objects.create(user=plain, prefix="abcd1234", key_hash="c" * 64, scopes=["read", "write"])
        ApiToken.objects.create(user=staff, prefix="abcd5678", key_hash="d" * 64, scopes=["read", "curate"])
        before = counts()

        new = migrate(latest)
        assert counts() == before
        Team, Membership = new.get_model("memory", "Team"), new.get_model("memory", "Membership")
        default = Team.objects.get()
        assert default.slug == "default"
        with connection.cursor() as cursor:
            for table in TABLES[:-1]:
                cursor.execute(
                    f"SELECT count(*) FROM {table} WHERE team_id IS DISTINCT FROM %s", [default.pk]
                )
                assert cursor.fetchone()[0] == 0, table
        roles = dict(Membership.objects.values_list("user__username", "role"))
        assert roles == {"sam": "owner", "pat": "member"}
        tokens = new.get_model("memory", "ApiToken").objects.values_list(
            "user__username", "membership__team__slug"
        )
        assert sorted(tokens) == [("pat", "default"), ("sam", "default")]
    finally:
        migrate(latest)


@pytest.mark.django_db(transaction=True)
def test_the_upgrade_of_an_empty_database_creates_no_team():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("memory")
    migrate(BEFORE)
    try:
        new = migrate(latest)
        assert not new.get_model("memory", "Team").objects.exists()
    finally:
        migrate(latest)
