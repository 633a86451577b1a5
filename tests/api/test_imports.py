"""POST /observations with ``source: "import"`` and a ``provenance`` (what ``memlane harvest`` and
``memlane import-rules`` send): the sources a token may claim, the provenance kept on the history,
the same note from teammates reinforcing one memory, and the wall between teams."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth import get_user_model

from memory.models import Action, Memory, MemoryEvent
from memory.services.store import memory_store
from memory.services.tokens import token_create
from tests.api.conftest import client_with
from tests.conftest import join

pytestmark = pytest.mark.usefixtures("embedder")

NOTE = "Integration tests must hit a real PostgreSQL database, never mocks or SQLite."
PROJECT = "project:billing-api"


def provenance(path: str = "feedback_testing.md", text: str = NOTE) -> dict:
    return {
        "origin": "claude-code-auto-memory",
        "path": path,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


def imported(**overrides) -> dict:
    return {
        "content": NOTE,
        "type": "correction",
        "category": "convention",
        "entities": [PROJECT],
        "source": "import",
        "provenance": provenance(),
        **overrides,
    }


def history_of(client, memory_id) -> list[dict]:
    response = client.get(f"/api/v1/observations/{memory_id}/history")
    assert response.status_code == 200, response.json()
    return response.json()["events"]


def test_a_member_stores_an_import_with_its_file_on_the_history(api):
    response = api["member"].post("/api/v1/observations", imported(), format="json")
    assert response.status_code == 201, response.json()
    memory = response.json()["memory"]
    assert memory["source"] == "import" and memory["maturity"] == "candidate" and memory["status"] == "active"
    created = [e for e in history_of(api["member"], memory["id"]) if e["kind"] == "created"]
    assert created[0]["details"]["source"] == "import"
    assert created[0]["details"]["provenance"] == provenance()


def test_a_curator_may_claim_import_too_and_a_store_without_source_stays_api(api):
    curated = api["curator"].post("/api/v1/observations", imported(), format="json")
    assert curated.status_code == 201 and curated.json()["memory"]["source"] == "import"
    plain = api["member"].post(
        "/api/v1/observations", {"content": "The ledger closes at 18:00 UTC daily."}, format="json"
    )
    assert plain.status_code == 201 and plain.json()["memory"]["source"] == "api"


@pytest.mark.parametrize("source", ["manual", "reflection", "extraction", "dashboard"])
def test_a_token_cannot_claim_a_source_of_the_servers_own(api, source):
    response = api["member"].post("/api/v1/observations", imported(source=source), format="json")
    assert response.status_code == 400
    assert "source" in response.json()["error"]["fields"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    "bad",
    [
        {"path": "a.md", "size": 3},  # an unknown key
        {"sha256": "not-a-hash"},
        {"sha256": "A" * 64},  # hex is lowercase, as hashlib writes it
        {"origin": "Claude Code!"},
        {"path": "x" * 501},
        "feedback_testing.md",
    ],
)
def test_a_malformed_provenance_is_refused_naming_it(api, bad):
    response = api["member"].post("/api/v1/observations", imported(provenance=bad), format="json")
    assert response.status_code == 400, response.json()
    assert any(name.startswith("provenance") for name in response.json()["error"]["fields"])
    assert not Memory.objects.exists()


def test_a_secret_in_the_provenance_path_is_redacted(api):
    path = "notes/ghp_abcdefghijklmnopqrstuvwxyz0123456789.md"
    response = api["member"].post("/api/v1/observations", imported(provenance={"path": path}), format="json")
    assert response.status_code == 201
    created = history_of(api["member"], response.json()["memory"]["id"])[0]
    assert "ghp_" not in str(created["details"]["provenance"]) and "[REDACTED" in str(created["details"])


def test_anonymous_and_read_only_callers_cannot_import(api):
    assert api["anonymous"].post("/api/v1/observations", imported(), format="json").status_code == 401
    assert api["read_only"].post("/api/v1/observations", imported(), format="json").status_code == 403
    assert not Memory.objects.exists()


def test_the_same_note_from_two_teammates_reinforces_one_memory_with_both_files(api, team):
    teammate = join(get_user_model().objects.create_user(username="tess"), team, "member")
    tess = client_with(token_create(user=teammate, scopes=["read", "write"])[1])
    first = api["member"].post("/api/v1/observations", imported(), format="json").json()
    again = tess.post(
        "/api/v1/observations",
        imported(provenance=provenance(path="testing.md")),
        format="json",
    )
    assert again.status_code == 200 and again.json()["operation"] == "NOOP"
    assert again.json()["memory"]["id"] == first["memory"]["id"]
    assert Memory.objects.for_team(team).count() == 1
    reinforcements = api["member"].get(f"/api/v1/observations/{first['memory']['id']}/reinforcements")
    [reinforcement] = reinforcements.json()
    assert reinforcement["author"] == "tess" and reinforcement["source"] == "import"
    assert reinforcement["provenance"]["path"] == "testing.md"


def test_an_import_never_touches_another_teams_memory(api, team, other_team, outsider):
    theirs = memory_store(team=other_team, author=outsider, content=NOTE, entities=[PROJECT]).memory
    events = MemoryEvent.objects.for_team(other_team).count()
    response = api["member"].post("/api/v1/observations", imported(), format="json")
    assert response.status_code == 201 and response.json()["operation"] == "ADD"
    assert response.json()["memory"]["id"] != str(theirs.pk)
    theirs.refresh_from_db()
    assert theirs.reinforcement_count == 0 and theirs.source == "api"
    assert MemoryEvent.objects.for_team(other_team).count() == events
    assert not MemoryEvent.objects.for_team(other_team).filter(action=Action.REINFORCED).exists()
    # Nor does the other team's harvest touch ours.
    outsider_client = client_with(token_create(user=outsider, team=other_team, scopes=["read", "write"])[1])
    again = outsider_client.post("/api/v1/observations", imported(), format="json").json()
    assert again["operation"] == "NOOP" and again["memory"]["id"] == str(theirs.pk)
    ours = Memory.objects.for_team(team).get()
    assert ours.reinforcement_count == 0
