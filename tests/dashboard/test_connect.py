"""Connect an agent (/connect/), from the outside: who sees what and may mint which token, that the
commands shown carry the server and the token, that the token really works against the API within
its team, role and projects, and that bad input is a form error, never a 500 or a token. The
browser test is in test_browser_connect.py."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.test import Client

from memory.models import ApiToken, Membership

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}
REPO = "https://git.example.com/acme/memory-lane.git"
ALL_SCOPES = ("read", "write", "curate")
OFFERED = {  # role → the scopes its form offers
    "owner": ALL_SCOPES,
    "curator": ALL_SCOPES,
    "member": ("read", "write"),
    "reader": ("read",),
}


@pytest.fixture(autouse=True)
def settings_for_connect(settings):
    settings.MEMORY_LANE = {
        **settings.MEMORY_LANE,
        "CLIENT_REPO_URL": REPO,
        "API_THROTTLE_RATE": "100000/min",
    }


def codes(html: str) -> list[str]:
    """The text of every code block of a page, as a person would copy it."""
    return [unescape(code) for code in re.findall(r"<code[^>]*>(.*?)</code>", html, re.S)]


def code_by_id(html: str, ident: str) -> str:
    return unescape(re.search(rf'<code id="{ident}">(.*?)</code>', html, re.S).group(1))


def shown_key(html: str) -> str:
    return re.search(r'id="new-key" value="(ml_[^"]+)"', html).group(1)


def api(key: str, method: str, path: str, body: dict | None = None):
    client = Client(headers={"Authorization": f"Bearer {key}"})
    if method == "get":
        return client.get(f"/api/v1{path}")
    return client.post(f"/api/v1{path}", json.dumps(body or {}), content_type="application/json")


def mint(client, **data):
    return client.post("/connect/", {"name": "laptop", "scopes": ["read"], **data})


# --- who may open it, who may mint what ---------------------------------------------------------


def test_anonymous_visitors_are_sent_to_log_in(client, db):
    for response in (client.get("/connect/"), mint(client)):
        assert response.status_code == 302 and response["Location"].startswith("/login/?next=/connect/")
    assert not ApiToken.objects.exists()


def test_every_page_links_to_it(clients, world):
    for path in ("/", "/memories/", "/tokens/", "/connect/"):
        assert 'href="/connect/"' in clients["reader"].get(path).content.decode(), path
    page = clients["member"].get("/connect/").content.decode()
    assert '<a href="/connect/" aria-current="page">Connect an agent</a>' in page


@pytest.mark.parametrize("role", list(OFFERED))
def test_each_role_is_offered_the_scopes_its_role_allows_and_no_key_yet(clients, role):
    response = clients[role].get("/connect/")
    html = response.content.decode()
    assert response.status_code == 200 and "Connect an agent" in html and "Acme" in html
    for scope in ALL_SCOPES:
        assert (f'value="{scope}"' in html) == (scope in OFFERED[role]), (role, scope)
    assert 'id="new-key"' not in html and "memlane install" not in html


@pytest.mark.parametrize("role", list(OFFERED))
def test_each_role_mints_a_token_of_its_own_with_every_scope_it_may_hold(clients, team, role, request):
    user = request.getfixturevalue(role)
    response = mint(clients[role], scopes=list(OFFERED[role]))
    assert response.status_code == 200
    token = ApiToken.objects.get(user=user)
    assert token.membership == Membership.objects.get(user=user, team=team)
    assert token.scopes == list(OFFERED[role]) and token.name == "laptop"
    assert shown_key(response.content.decode()).startswith(f"ml_{token.prefix}_")


@pytest.mark.parametrize(
    "role,scopes",
    [("member", ["read", "curate"]), ("reader", ["read", "write"]), ("reader", ["curate"])],
)
def test_no_one_mints_a_scope_above_their_role(clients, role, scopes):
    response = mint(clients[role], scopes=scopes)
    html = response.content.decode()
    assert response.status_code == 422
    assert f"a {role} of acme may not hold the scope" in html and 'id="new-key"' not in html
    assert not ApiToken.objects.exists()


def test_an_outsider_mints_for_their_own_team_and_sees_nothing_of_ours(
    clients, outsider, other_team, active_memory
):
    html = clients["outsider"].get("/connect/").content.decode()
    assert "Globex" in html and "Acme" not in html
    response = mint(clients["outsider"], scopes=["read", "write"])
    token = ApiToken.objects.get(user=outsider)
    assert token.team == other_team
    key = shown_key(response.content.decode())
    assert api(key, "get", f"/observations/{active_memory.pk}").status_code == 404
    found = api(key, "get", "/search?q=stripe+charge+gateway")
    assert found.status_code == 200 and found.json()["results"] == []


# --- what the page shows --------------------------------------------------------------------------


def test_the_commands_carry_the_server_and_the_new_token(clients, member):
    response = mint(clients["member"], scopes=["read", "write"])
    html = response.content.decode()
    key = shown_key(html)
    assert "no-store" in response["Cache-Control"]
    shown = codes(html)
    spec = f'"git+{REPO}#subdirectory=clients"'
    for command in (
        f"pipx install {spec}",
        f"memlane install claude-code --url http://testserver --token {key}",
        "memlane doctor",
        f"memlane config --url http://testserver --token {key}",
        f"/plugin marketplace add {REPO}",
        "/plugin install memory-lane@memory-lane",
        f"memlane install opencode --url http://testserver --token {key}",
    ):
        assert command in shown, command
    assert f"uv tool install {spec}" in unescape(html)
    assert code_by_id(html, "env") == f"export MEMLANE_URL=http://testserver\nexport MEMLANE_TOKEN={key}"
    assert 'id="mcp-url" value="http://testserver/mcp"' in html
    assert f'id="mcp-header" value="Authorization: Bearer {key}"' in html
    entry = json.loads(code_by_id(html, "mcp-json"))["mcpServers"]["memory-lane"]
    assert entry == {
        "type": "http",
        "url": "http://testserver/mcp",
        "headers": {"Authorization": f"Bearer {key}"},
    }
    check = code_by_id(html, "mcp-check")
    assert check.startswith("curl -sS http://testserver/mcp") and f"Bearer {key}" in check


def test_the_key_is_shown_once(clients, member):
    key = shown_key(mint(clients["member"]).content.decode())
    for path in ("/connect/", "/tokens/"):
        assert key not in clients["member"].get(path).content.decode()


def test_the_public_url_setting_wins_over_the_request_host(clients, settings):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "PUBLIC_URL": "https://memory.example.com/"}
    html = mint(clients["member"]).content.decode()
    key = shown_key(html)
    assert f"memlane install claude-code --url https://memory.example.com --token {key}" in codes(html)
    assert 'id="mcp-url" value="https://memory.example.com/mcp"' in html


def test_htmx_gets_the_connect_block_only(clients):
    response = clients["member"].post("/connect/", {"scopes": ["read"]}, headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<div id="connect">')
    assert "<html" not in html and 'id="new-key"' in html and "memlane install claude-code" in html
    refused = clients["member"].post("/connect/", {"scopes": ["bogus"]}, headers=HTMX)
    assert refused.status_code == 422 and refused.content.decode().lstrip().startswith('<div id="connect">')


# --- the token works, within its team, role and projects ------------------------------------------


def test_a_members_token_reads_and_writes_the_team(clients, active_memory):
    key = shown_key(mint(clients["member"], scopes=["read", "write"]).content.decode())
    found = api(key, "get", f"/observations/{active_memory.pk}")
    assert found.status_code == 200 and found.json()["id"] == str(active_memory.pk)
    searched = api(key, "get", "/search?q=stripe+charge+gateway").json()["results"]
    assert str(active_memory.pk) in [hit["memory"]["id"] for hit in searched]  # what the outsider missed
    stored = api(key, "post", "/observations", {"content": "Run the billing migrations before deploys."})
    assert stored.status_code == 201, stored.content


def test_a_readers_token_reads_but_cannot_write(clients, active_memory):
    key = shown_key(mint(clients["reader"], scopes=["read"]).content.decode())
    assert api(key, "get", f"/observations/{active_memory.pk}").status_code == 200
    refused = api(key, "post", "/observations", {"content": "Readers cannot store this."})
    assert refused.status_code == 403


def test_a_project_limited_token_sees_only_its_projects(clients, member, active_memory):
    response = mint(clients["member"], scopes=["read", "write"], projects="mobile-app")
    html = response.content.decode()
    assert ApiToken.objects.get(user=member).projects == ["project:mobile-app"]
    assert "projects: project:mobile-app" in html
    key = shown_key(html)
    assert api(key, "get", f"/observations/{active_memory.pk}").status_code == 404  # billing-api's
    assert str(active_memory.pk) not in api(key, "get", "/observations").content.decode()


def test_the_token_is_listed_on_api_tokens_and_revoking_it_stops_it(clients, member, active_memory):
    key = shown_key(mint(clients["member"], name="connect laptop").content.decode())
    token = ApiToken.objects.get(user=member)
    for role in ("member", "owner"):  # their own; an owner sees every token of the team
        assert f"ml_{token.prefix}_" in clients[role].get("/tokens/").content.decode(), role
    assert f"ml_{token.prefix}_" not in clients["curator"].get("/tokens/").content.decode()
    assert clients["curator"].post(f"/tokens/{token.pk}/revoke/").status_code == 404
    assert api(key, "get", f"/observations/{active_memory.pk}").status_code == 200
    assert clients["owner"].post(f"/tokens/{token.pk}/revoke/", headers=HTMX).status_code == 200
    assert api(key, "get", f"/observations/{active_memory.pk}").status_code == 401


# --- refused input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,message",
    [
        ({"scopes": ["admin"]}, "Select a valid choice. admin is not one of the available choices."),
        ({"scopes": []}, "Pick at least one scope."),
        ({"scopes": ["read"], "projects": "person:mark"}, "projects must be project slugs"),
        ({"scopes": ["read"], "projects": "mobile-app, project:!!!"}, "projects must be project slugs"),
        ({"scopes": ["read"], "expires_days": "0"}, "greater than or equal to 1"),
        ({"scopes": ["read"], "expires_days": "soon"}, "Enter a whole number."),
        ({"scopes": ["read"], "name": "x" * 101}, "at most 100 characters"),
    ],
)
def test_bad_input_is_a_clear_form_error_and_creates_no_token(clients, data, message):
    response = clients["member"].post("/connect/", data)
    html = response.content.decode()
    assert response.status_code == 422 and message in unescape(html), html[-3000:]
    assert 'id="new-key"' not in html and not ApiToken.objects.exists()


def test_a_post_without_the_csrf_token_is_refused(member):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(member)
    refused = strict.post("/connect/", {"scopes": ["read"]})
    assert refused.status_code == 403 and b"CSRF" in refused.content
    assert not ApiToken.objects.exists()
    strict.get("/connect/")  # sets the csrftoken cookie, which htmx sends back as a header
    token = strict.cookies["csrftoken"].value
    accepted = strict.post("/connect/", {"scopes": ["read"]}, headers={**HTMX, "X-CSRFToken": token})
    assert accepted.status_code == 200 and ApiToken.objects.filter(user=member).count() == 1


def test_get_and_post_only(clients):
    assert clients["member"].put("/connect/").status_code == 405
