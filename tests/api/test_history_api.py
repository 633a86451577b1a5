"""GET /api/v1/observations/{id}/history and POST …/history/restore (DESIGN.md §4.3, §5): every
role of the team, an outsider of another team and a project-limited token."""

from __future__ import annotations

import uuid

import pytest

from memory.models import Action, MemoryEvent
from memory.services.curation import memory_update
from memory.services.store import UPDATE, memory_store
from memory.services.tokens import token_create
from tests.api.conftest import client_with
from tests.conftest import join

pytestmark = pytest.mark.usefixtures("embedder")

NODE_18 = "Always pin Node 18 for the billing service."
NODE_20 = "Always pin Node 20 for the billing service."
NODE_22 = "Always pin Node 22 for the billing service."
PROJECT = "project:billing-api"


@pytest.fixture
def fact(team, curator):
    """NODE_18 superseded by NODE_20, which a curator edited to NODE_22: three versions."""
    memory_store(team=team, content=NODE_18, entities=[PROJECT])
    result = memory_store(team=team, content=NODE_20, entities=[PROJECT])
    assert result.operation == UPDATE
    memory_store(team=team, content=NODE_20 + "!", entities=[PROJECT], agent_name="claude-code")
    return memory_update(memory=result.memory, actor=curator, content=NODE_22)


@pytest.fixture
def callers(api, team, owner, outsider, other_team):
    """The tokens of ``api`` plus an owner's, an outsider's (owner of another team) and tokens limited
    to the memory's project and to another project."""
    join(owner, team, "owner")
    everything = ["read", "write", "curate"]
    return {
        **api,
        "owner": client_with(token_create(user=owner, team=team, scopes=everything)[1]),
        "outsider": client_with(token_create(user=outsider, team=other_team, scopes=everything)[1]),
        "in_project": client_with(
            token_create(user=owner, team=team, scopes=everything, projects=[PROJECT])[1]
        ),
        "other_project": client_with(
            token_create(user=owner, team=team, scopes=everything, projects=["project:mobile-app"])[1]
        ),
    }


def history_url(memory_id) -> str:
    return f"/api/v1/observations/{memory_id}/history"


@pytest.mark.parametrize("role", ["owner", "curator", "member", "read_only", "in_project"])
def test_every_reader_of_the_team_gets_the_versions_and_the_timeline(callers, fact, role):
    response = callers[role].get(history_url(fact.pk))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["memory"] == str(fact.pk)
    assert [(v["version"], v["text"], v["current"]) for v in body["versions"]] == [
        (1, NODE_18, False),
        (2, NODE_20, False),
        (3, NODE_22, True),
    ]
    assert set(body["versions"][0]) == {"version", "text", "memory", "at", "current"}
    kinds = [event["kind"] for event in body["events"]]
    assert kinds == ["created", "supersedes", "reinforced", "edited"]
    reinforced = body["events"][2]
    assert reinforced["details"]["text"] == NODE_20 + "!"
    assert reinforced["details"]["agent_name"] == "claude-code"
    edited = body["events"][3]
    assert edited["actor"] == "cora" and edited["details"]["new_text"] == NODE_22
    assert set(edited) == {"at", "kind", "actor", "summary", "memory", "details"}


@pytest.mark.parametrize("role", ["outsider", "other_project"])
def test_another_team_s_or_project_s_memory_answers_exactly_like_a_missing_one(callers, fact, role):
    client = callers[role]
    missing = uuid.uuid4()
    for method, suffix, body in [("get", "", None), ("post", "/restore", {"version": 1})]:
        theirs = getattr(client, method)(history_url(fact.pk) + suffix, body, format="json")
        nothing = getattr(client, method)(history_url(missing) + suffix, body, format="json")
        assert theirs.status_code == nothing.status_code == 404, (role, suffix, theirs.content)
        assert theirs.json()["error"]["message"].replace(str(fact.pk), "<id>") == nothing.json()["error"][
            "message"
        ].replace(str(missing), "<id>")
        assert set(theirs.json()["error"]) == set(nothing.json()["error"])
    fact.refresh_from_db()
    assert fact.content == NODE_22


@pytest.mark.parametrize("role", ["owner", "curator", "in_project"])
def test_a_curator_restores_an_earlier_version(callers, fact, role, team):
    response = callers[role].post(history_url(fact.pk) + "/restore", {"version": 1}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["id"] == str(fact.pk) and body["content"] == NODE_18
    detail = callers[role].get(f"/api/v1/observations/{fact.pk}").json()
    assert body == detail
    restored = MemoryEvent.objects.for_team(team).get(memory=fact, action=Action.RESTORED)
    assert restored.diff["version"] == 1
    history = callers[role].get(history_url(fact.pk)).json()
    assert [v["current"] for v in history["versions"]] == [False, False, False, True]
    assert history["events"][-1]["kind"] == "restored"


@pytest.mark.parametrize("role", ["member", "read_only", "member_claiming_curate"])
def test_members_and_readers_cannot_restore(callers, fact, role):
    response = callers[role].post(history_url(fact.pk) + "/restore", {"version": 1}, format="json")
    assert response.status_code == 403, response.content
    fact.refresh_from_db()
    assert fact.content == NODE_22


def test_anonymous_callers_get_401(callers, fact):
    assert callers["anonymous"].get(history_url(fact.pk)).status_code == 401
    assert callers["anonymous"].post(history_url(fact.pk) + "/restore", {"version": 1}).status_code == 401


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({}, 400, "version"),
        ({"version": "two"}, 400, "version"),
        ({"version": 1.5}, 400, "version"),
        ({"version": None}, 400, "version"),
        ({"version": 0}, 400, "version"),
        ({"version": 99}, 400, "version"),
        ({"version": 1, "verison": 2}, 400, "verison"),
        ({"version": 3}, 409, None),
    ],
)
def test_bad_input_is_a_400_naming_the_field_never_a_500(callers, fact, body, status, field):
    response = callers["curator"].post(history_url(fact.pk) + "/restore", body, format="json")
    assert response.status_code == status, response.content
    error = response.json()["error"]
    if field:
        assert error["code"] == "VALIDATION_ERROR" and field in error["fields"]
    else:
        assert error["code"] == "INVALID_TRANSITION"
    fact.refresh_from_db()
    assert fact.content == NODE_22


def test_a_reader_is_not_shown_the_text_of_a_pending_proposal(callers, team, member):
    settled = memory_store(team=team, content=NODE_18, priority="critical").memory
    proposal = memory_store(team=team, content=NODE_20, author=member).memory
    seen_by_reader = callers["read_only"].get(history_url(settled.pk)).json()["events"]
    proposed = [event for event in seen_by_reader if event["kind"] == "proposed"]
    assert proposed and proposed[0]["memory"] is None and "text" not in proposed[0]["details"]
    assert NODE_20 not in str(seen_by_reader)
    seen_by_curator = callers["curator"].get(history_url(settled.pk)).json()["events"]
    proposed = [event for event in seen_by_curator if event["kind"] == "proposed"]
    assert proposed[0]["memory"] == str(proposal.pk) and proposed[0]["details"]["text"] == NODE_20


def test_the_endpoints_are_in_the_openapi_schema(callers):
    schema = callers["curator"].get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert "get" in paths["/api/v1/observations/{memory_id}/history"]
    restore = paths["/api/v1/observations/{memory_id}/history/restore"]["post"]
    assert restore["operationId"] == "observations_history_restore"
    assert "404" in restore["responses"] and "409" in restore["responses"]
