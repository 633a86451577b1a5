"""The upsert over HTTP: decisions in every store response, unknown fields refused, changed facts
and reinforcements for curators."""

from __future__ import annotations

import pytest

from memory.models import FactChange, Memory
from tests.conftest import join

pytestmark = pytest.mark.usefixtures("embedder")

NODE_18 = "Always pin Node 18 for the billing service."
NODE_20 = "Always pin Node 20 for the billing service."


def store(client, content: str, **fields):
    return client.post("/api/v1/observations", {"content": content, **fields}, format="json")


def test_a_typo_in_a_field_name_is_a_400_that_names_it_and_stores_nothing(api):
    response = store(api["member"], NODE_18, entites=["project:billing"])
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert "entites → entities?" in error["fields"]["entites"][0]
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    ("method", "path", "body", "unknown"),
    [
        (
            "post",
            "/api/v1/observations/batch",
            {"items": [{"content": "x y z", "catgory": "gotcha"}]},
            "items[0].catgory",
        ),
        ("post", "/api/v1/search", {"q": "node", "limt": 3}, "limt"),
        ("get", "/api/v1/search", {"q": "node", "limt": 3}, "limt"),
        ("get", "/api/v1/context", {"projet": "billing"}, "projet"),
        ("post", "/api/v1/feedback", {"memory_id": "0" * 32, "signal": "helpful", "nte": "x"}, "nte"),
        ("post", "/api/v1/sessions", {"session_id": "s1", "agnet": "claude-code"}, "agnet"),
        ("get", "/api/v1/observations", {"statsu": "active"}, "statsu"),
    ],
)
def test_every_endpoint_refuses_unknown_fields(api, method, path, body, unknown):
    client = api["curator"]
    response = client.post(path, body, format="json") if method == "post" else client.get(path, body)
    assert response.status_code == 400, response.content
    assert unknown in response.json()["error"]["fields"]


def test_pagination_parameters_are_not_unknown_fields(api):
    assert api["member"].get("/api/v1/observations", {"page_size": 5}).status_code == 200


def test_every_store_says_why(api):
    first = store(api["member"], NODE_18).json()
    assert first["decision"]["operation"] == "ADD"
    again = store(api["member"], NODE_18 + "!")
    assert again.status_code == 200 and again.json()["decision"]["operation"] == "NOOP"
    assert again.json()["decision"]["compared_with"] == first["memory"]["id"]
    changed = store(api["member"], NODE_20)
    body = changed.json()
    assert changed.status_code == 201 and body["operation"] == "UPDATE"
    assert body["superseded"] == first["memory"]["id"]
    assert body["decision"]["reason"] == "version changed: 18 → 20"
    assert body["decision"]["cosine"] > 0.85 and 0 <= body["decision"]["jaccard"] <= 1
    batch = api["member"].post("/api/v1/observations/batch", {"items": [{"content": NODE_20}]}, format="json")
    assert batch.json()["results"][0]["decision"]["operation"] == "NOOP"


def test_changed_facts_are_for_curators_who_confirm_undo_or_keep_both(api):
    store(api["member"], NODE_18)
    store(api["member"], NODE_20)
    assert api["member"].get("/api/v1/changed-facts").status_code == 403
    listed = api["curator"].get("/api/v1/changed-facts").json()["results"]
    assert len(listed) == 1 and listed[0]["reason"] == "version changed: 18 → 20"
    assert (listed[0]["old"]["content"], listed[0]["new"]["content"]) == (NODE_18, NODE_20)
    change_id = listed[0]["id"]
    assert (
        api["member"]
        .post(f"/api/v1/changed-facts/{change_id}", {"action": "undo"}, format="json")
        .status_code
        == 403
    )
    bad = api["curator"].post(f"/api/v1/changed-facts/{change_id}", {"action": "revert"}, format="json")
    assert bad.status_code == 400
    done = api["curator"].post(f"/api/v1/changed-facts/{change_id}", {"action": "both_true"}, format="json")
    assert done.status_code == 200 and done.json()["status"] == "both_true"
    assert done.json()["old"]["superseded_by"] is None
    again = api["curator"].post(f"/api/v1/changed-facts/{change_id}", {"action": "undo"}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "INVALID_TRANSITION"
    assert api["curator"].get("/api/v1/changed-facts").json()["results"] == []
    assert (
        api["curator"].get("/api/v1/changed-facts", {"status": "both_true"}).json()["results"][0]["id"]
        == change_id
    )
    assert FactChange.objects.get().resolved_by.username == "curator"


def test_a_reinforcement_can_be_split_out_by_a_curator(api):
    memory_id = store(api["member"], "Don't cache the auth responses.").json()["memory"]["id"]
    store(api["member"], "Do not cache the auth responses.")
    listed = api["member"].get(f"/api/v1/observations/{memory_id}/reinforcements").json()
    assert [r["text"] for r in listed] == ["Do not cache the auth responses."]
    assert listed[0]["author"] == "member"
    body = {"reinforcement": listed[0]["id"]}
    assert (
        api["member"].post(f"/api/v1/observations/{memory_id}/split", body, format="json").status_code == 403
    )
    split = api["curator"].post(f"/api/v1/observations/{memory_id}/split", body, format="json")
    assert (
        split.status_code == 201 and split.json()["memory"]["content"] == "Do not cache the auth responses."
    )
    again = api["curator"].post(f"/api/v1/observations/{memory_id}/split", body, format="json")
    assert again.status_code == 409


def _settled(team) -> Memory:
    """NODE_18, approved by a curator: the team's settled knowledge."""
    from memory.services.curation import memory_approve
    from memory.services.store import memory_store
    from tests.conftest import voter

    memory = memory_store(team=team, content=NODE_18).memory
    return memory_approve(memory=memory, actor=join(voter(7), team, "curator"))


def test_a_members_change_of_settled_knowledge_is_proposed_and_a_curators_takes_effect(api, team):
    old = _settled(team)
    proposed = store(api["member"], NODE_20)
    assert proposed.status_code == 201
    body = proposed.json()
    assert body["operation"] == "PROPOSED" and body["proposal_for"] == str(old.pk)
    assert body["superseded"] is None and body["memory"]["status"] == "pending_review"
    assert (
        body["decision"]["operation"] == "PROPOSED"
        and "approved or edited by a curator" in body["decision"]["reason"]
    )
    found = api["member"].get("/api/v1/search", {"q": "node version billing"}).json()["results"]
    assert [hit["memory"]["content"] for hit in found][:1] == [NODE_18]
    # The same change written by a curator's token is a confirmation: the proposal takes effect.
    confirmed = store(api["curator"], NODE_20)
    assert confirmed.json()["operation"] == "NOOP"
    assert FactChange.objects.get().status == "confirmed"
    found = api["member"].get("/api/v1/search", {"q": "node version billing"}).json()["results"]
    assert [hit["memory"]["content"] for hit in found][:1] == [NODE_20]


def test_a_curators_token_changes_settled_knowledge_directly_and_a_batch_is_governed(api, team):
    old = _settled(team)
    batch = (
        api["member"]
        .post("/api/v1/observations/batch", {"items": [{"content": NODE_20}]}, format="json")
        .json()["results"]
    )
    assert batch[0]["operation"] == "PROPOSED"
    FactChange.objects.all().delete()
    Memory.objects.exclude(pk=old.pk).delete()
    direct = store(api["curator"], NODE_20).json()
    assert direct["operation"] == "UPDATE" and direct["superseded"] == str(old.pk)


def test_a_token_that_claims_curate_after_its_member_was_demoted_only_proposes(api, team):
    _settled(team)
    assert store(api["member_claiming_curate"], NODE_20).json()["operation"] == "PROPOSED"


def test_a_proposal_is_accepted_as_a_changed_fact_not_approved_on_its_own(api, team):
    _settled(team)
    proposal = store(api["member"], NODE_20).json()["memory"]["id"]
    response = api["curator"].patch(f"/api/v1/observations/{proposal}", {"status": "active"}, format="json")
    assert response.status_code == 409
    change = FactChange.objects.get()
    assert f"changed fact {change.pk}" in response.json()["error"]["message"]
    assert Memory.objects.get(pk=proposal).status == "pending_review"
    listed = api["curator"].get("/api/v1/changed-facts").json()
    assert [(c["id"], c["kind"]) for c in listed["results"]] == [(change.pk, "proposal")]
    accepted = api["curator"].post(f"/api/v1/changed-facts/{change.pk}", {"action": "confirm"}, format="json")
    assert accepted.status_code == 200 and accepted.json()["status"] == "confirmed"
    assert Memory.objects.get(pk=proposal).status == "active"
