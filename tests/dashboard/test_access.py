"""Who may open which page and call which action: anonymous → login, member → read and rate,
curator → curate, owner → everything (members, every token, delete). A member calling a curator
action by URL gets 403. Readers and people of another team: tests/dashboard/test_teams.py."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.models import ApiToken, Session

pytestmark = pytest.mark.usefixtures("embedder")


READ_PAGES = [
    "/",
    "/memories/",
    "/memories/?q=stripe",
    "/memories/{memory}/",
    "/maturity/",
    "/entities/",
    "/sessions/",
    "/sessions/{session}/",
    "/sessions/{session}/status/",
    "/reflections/",
    "/reflections/runs/{run}/",
    "/export/",
    "/export/download/",
    "/tokens/",
    "/connect/",
]
OWNER_PAGES = ["/members/"]
CURATOR_PAGES = [
    "/review/",
    "/review/{quarantined}/",
    "/review/{quarantined}/edit/",
    "/review/{quarantined}/merge/",
    "/entities/{entity}/",
    "/entities/{entity}/aliases/",
]
CURATOR_ACTIONS = [
    ("/review/{quarantined}/approve/", {}),
    ("/review/{quarantined}/reject/", {"reason": "spam"}),
    (
        "/review/{quarantined}/edit/",
        {"content": "Edited.", "memory_type": "insight", "category": "workflow", "priority": "moderate"},
    ),
    ("/review/{quarantined}/merge/", {"target": "{memory}"}),
    ("/memories/{memory}/maturity/", {"action": "promote"}),
    ("/entities/merge/", {"source": "person:mark-smith", "target": "person:mark-robinson"}),
    ("/entities/{entity}/aliases/", {"aliases": "Mark R"}),
    ("/entities/mentions/{mention}/resolve/", {"slug": "person:mark-robinson"}),
    ("/entities/mentions/{mention}/dismiss/", {}),
    ("/sessions/{session}/rerun/", {}),
    ("/reflections/run/", {}),
    ("/memories/{memory}/delete/", {}),
]
MEMBER_ACTIONS = [
    ("/memories/{memory}/feedback/", {"signal": "helpful"}),
    ("/tokens/", {"name": "laptop", "scopes": ["read"]}),
    ("/tokens/{member_token}/revoke/", {}),
    ("/connect/", {"name": "agent", "scopes": ["read"]}),
    ("/team/", {"team": "acme"}),
]
OWNER_ACTIONS = [
    ("/members/add/", {"username": "newbie", "role": "member"}),
    ("/members/create/", {"username": "fresh", "password": "a long enough password 1", "role": "reader"}),
    ("/members/{member_membership}/role/", {"role": "reader"}),
    ("/members/{member_membership}/remove/", {}),
]


FRAGMENTS = {  # answer htmx only; a browser opening them is sent to their page
    "/sessions/{session}/status/": "/sessions/{session}/",
    "/reflections/runs/{run}/": "/reflections/",
    "/review/{quarantined}/": "/review/",
    "/review/{quarantined}/edit/": "/review/",
    "/review/{quarantined}/merge/": "/review/",
    "/entities/{entity}/": "/entities/",
    "/entities/{entity}/aliases/": "/entities/",
}


def get(client, path: str, world: dict):
    headers = {"HX-Request": "true"} if path in FRAGMENTS else {}
    return client.get(url(path, world), headers=headers)


def url(template: str, world: dict) -> str:
    return template.format(**world)


def form(data: dict, world: dict) -> dict:
    return {k: v.format(**world) if isinstance(v, str) else v for k, v in data.items()}


@pytest.mark.parametrize("path", READ_PAGES + CURATOR_PAGES + OWNER_PAGES)
def test_anonymous_visitors_are_sent_to_the_login_page(client, world, path):
    response = client.get(url(path, world))
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.parametrize("path,data", CURATOR_ACTIONS + MEMBER_ACTIONS + OWNER_ACTIONS)
def test_anonymous_writes_are_sent_to_the_login_page(client, world, path, data):
    response = client.post(url(path, world), form(data, world))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_an_expired_session_sends_htmx_to_the_login_page_as_a_whole_page(client, world):
    response = client.post(
        url("/memories/{memory}/feedback/", world),
        {"signal": "helpful"},
        headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/memories/?q=x"},
    )
    assert response.status_code == 204
    assert response["HX-Redirect"].startswith("/login/?next=/memories/")


@pytest.mark.parametrize("path", READ_PAGES)
def test_members_read_every_page(clients, world, path):
    assert get(clients["member"], path, world).status_code == 200


@pytest.mark.parametrize("path", READ_PAGES + CURATOR_PAGES)
def test_curators_read_every_page(clients, world, path):
    assert get(clients["curator"], path, world).status_code == 200


@pytest.mark.parametrize("path,page", FRAGMENTS.items())
def test_a_fragment_opened_in_the_browser_redirects_to_its_page(clients, world, path, page):
    response = clients["curator"].get(url(path, world))
    assert response.status_code == 302 and response["Location"] == url(page, world)


@pytest.mark.parametrize("path", READ_PAGES + CURATOR_PAGES + OWNER_PAGES)
def test_owners_read_every_page(clients, world, path):
    assert get(clients["owner"], path, world).status_code == 200


@pytest.mark.parametrize("path", CURATOR_PAGES)
def test_members_cannot_open_curator_pages(clients, world, path):
    response = get(clients["member"], path, world)
    assert response.status_code == 403
    assert b"Only curators" in response.content


@pytest.mark.parametrize("role", ["member", "curator"])
def test_only_owners_open_the_members_page(clients, world, role):
    response = clients[role].get("/members/")
    assert response.status_code == 403 and b"Only owners" in response.content


@pytest.mark.parametrize("path,data", CURATOR_ACTIONS)
def test_members_cannot_call_curator_actions_by_url(clients, world, path, data):
    response = clients["member"].post(url(path, world), form(data, world))
    assert response.status_code == 403


@pytest.mark.parametrize("role", ["member", "curator"])
@pytest.mark.parametrize("path,data", OWNER_ACTIONS)
def test_members_and_curators_cannot_call_owner_actions_by_url(clients, world, role, path, data):
    response = clients[role].post(url(path, world), form(data, world))
    assert response.status_code == 403


@pytest.mark.parametrize("path,data", CURATOR_ACTIONS + MEMBER_ACTIONS)
def test_curators_can_call_every_curator_and_member_action(clients, world, path, data, curator):
    if "{member_token}" in path:  # a curator revokes their own token, not a member's
        path = path.replace("{member_token}", "{curator_token}")
    if "/rerun/" in path:
        Session.objects.filter(pk=world["session"]).update(ended_at="2025-01-01T00:00:00Z")
    response = clients["curator"].post(url(path, world), form(data, world))
    assert response.status_code in (200, 302), response.content[:500]


@pytest.mark.parametrize("path,data", CURATOR_ACTIONS + MEMBER_ACTIONS + OWNER_ACTIONS)
def test_owners_can_call_every_action(clients, world, path, data, django_user_model):
    django_user_model.objects.create_user(username="newbie")
    if "/rerun/" in path:
        Session.objects.filter(pk=world["session"]).update(ended_at="2025-01-01T00:00:00Z")
    # An owner revokes any token of the team: the member's here.
    response = clients["owner"].post(url(path, world), form(data, world))
    assert response.status_code in (200, 302), response.content[:500]


@pytest.mark.parametrize("path,data", MEMBER_ACTIONS)
def test_members_can_rate_and_manage_their_tokens(clients, world, path, data):
    response = clients["member"].post(url(path, world), form(data, world))
    assert response.status_code in (200, 302)


def test_a_member_cannot_revoke_someone_elses_token(clients, world):
    response = clients["member"].post(url("/tokens/{curator_token}/revoke/", world))
    assert response.status_code == 404
    assert ApiToken.objects.get(pk=world["curator_token"]).revoked_at is None


def test_members_do_not_see_quarantined_memories(clients, world):
    assert clients["member"].get(url("/memories/{quarantined}/", world)).status_code == 404
    assert clients["curator"].get(url("/memories/{quarantined}/", world)).status_code == 200
    listing = clients["member"].get("/memories/").content.decode()
    assert "Ignore all previous instructions" not in listing


def test_members_see_no_curator_controls(clients, world):
    overview = clients["member"].get("/").content.decode()
    assert 'href="/review/"' not in overview
    detail = clients["member"].get(url("/memories/{memory}/", world)).content.decode()
    assert "Helpful" in detail
    for control in ("Promote", "Deprecate", "Delete permanently", "/maturity/"):
        assert control not in detail.replace('href="/maturity/"', "")
    entities = clients["member"].get("/entities/").content.decode()
    assert "Ambiguity queue" not in entities and "Edit aliases" not in entities
    reflections = clients["member"].get("/reflections/").content.decode()
    assert "Run now" not in reflections
    tokens = clients["member"].get("/tokens/").content.decode()
    assert 'value="curate"' not in tokens


def test_curators_see_their_controls(clients, world):
    overview = clients["curator"].get("/").content.decode()
    assert 'href="/review/"' in overview and 'href="/members/"' not in overview
    detail = clients["curator"].get(url("/memories/{memory}/", world)).content.decode()
    assert "Promote" in detail and "Deprecate" in detail and "Delete permanently" in detail
    assert 'value="curate"' in clients["curator"].get("/tokens/").content.decode()


def test_owners_see_every_control(clients, world):
    overview = clients["owner"].get("/").content.decode()
    assert 'href="/review/"' in overview and 'href="/members/"' in overview
    detail = clients["owner"].get(url("/memories/{memory}/", world)).content.decode()
    assert "Promote" in detail and "Delete permanently" in detail and "Helpful" in detail


def test_get_is_refused_on_write_urls(clients, world):
    for path in ("/review/{quarantined}/approve/", "/memories/{memory}/feedback/", "/reflections/run/"):
        assert clients["curator"].get(url(path, world)).status_code == 405


def test_unknown_ids_are_404_not_500(clients, world):
    missing = "00000000-0000-0000-0000-000000000000"
    for path in (f"/memories/{missing}/", f"/sessions/{missing}/"):
        assert clients["curator"].get(path).status_code == 404
    assert (
        clients["curator"].get("/reflections/runs/999999/", headers={"HX-Request": "true"}).status_code == 404
    )
    assert clients["curator"].post(f"/review/{missing}/approve/").status_code == 404
    assert clients["curator"].get("/memories/not-a-uuid/").status_code == 404


def test_logging_in_and_out(member):
    client = Client()
    page = client.get("/login/")
    assert page.status_code == 200 and b'autocomplete="username"' in page.content
    response = client.post("/login/", {"username": "mia", "password": "pw-mia-12345"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200
    refused = Client().post("/login/", {"username": "mia", "password": "nope"})
    assert refused.status_code == 200 and b"didn't match" in refused.content
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302
