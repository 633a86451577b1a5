"""Reflections with Run now, the export preview and download, and API tokens."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.models import ApiToken, TaskRun
from memory.services.maturity import memory_promote
from memory.services.store import memory_store
from memory.services.tokens import token_authenticate

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}


# --- reflections -----------------------------------------------------------------------------


def test_reflections_are_listed_with_their_sources(clients, team, active_memory):
    reflection = memory_store(
        team=team, content="Payments: go through the gateway.", kind="reflection", source="reflection"
    ).memory
    reflection.sources.add(active_memory)
    html = clients["member"].get("/reflections/").content.decode()
    assert "Payments: go through the gateway." in html and "1 source observation" in html
    assert f'href="/memories/{active_memory.pk}/"' in html


def test_no_reflections_yet_is_explained(clients, db):
    html = clients["curator"].get("/reflections/").content.decode()
    assert "No reflections yet" in html and "has not run yet" in html


def test_run_now_queues_a_run_and_polls_its_progress(clients, curator):
    response = clients["curator"].post("/reflections/run/", headers=HTMX)
    html = response.content.decode()
    run = TaskRun.objects.get(task="reflect")
    assert run.status == "queued" and run.triggered_by == curator
    assert f'hx-get="/reflections/runs/{run.pk}/"' in html and 'hx-trigger="every 1s"' in html
    TaskRun.objects.filter(pk=run.pk).update(status="running", progress_done=1, progress_total=4)
    running = clients["member"].get(f"/reflections/runs/{run.pk}/", headers=HTMX)
    assert "25%" in running.content.decode() and "every 1s" in running.content.decode()
    assert "HX-Trigger" not in running
    TaskRun.objects.filter(pk=run.pk).update(status="done", progress_done=4, summary={"clusters": 2})
    done = clients["member"].get(f"/reflections/runs/{run.pk}/", headers=HTMX)
    assert "every 1s" not in done.content.decode() and "clusters: <strong>2</strong>" in done.content.decode()
    assert done["HX-Trigger"] == "reflections-changed"  # the list reloads once


def test_a_failed_run_shows_its_error(clients, team):
    run = TaskRun.objects.create(task="reflect", status="failed", error="database went away", team=team)
    html = clients["member"].get(f"/reflections/runs/{run.pk}/", headers=HTMX).content.decode()
    assert "failed" in html and "database went away" in html


# --- export ----------------------------------------------------------------------------------


@pytest.fixture
def exported(curator, store):
    memory = store(
        "Never call stripe.Charge.create directly.", priority="critical", entities=["project:billing-api"]
    )
    memory_promote(memory=memory, actor=curator)
    team = store("Squash-merge pull requests into main.", category="workflow")
    memory_promote(memory=team, actor=curator)
    other = store("The mobile app ships on Thursdays.", entities=["project:mobile"])
    memory_promote(memory=other, actor=curator)
    return memory, team, other


def test_the_export_preview_shows_the_markdown(clients, exported):
    html = clients["member"].get("/export/").content.decode()
    assert "# Team memory" in html and "stripe.Charge.create" in html and "mobile app" in html
    assert 'href="/export/download/"' in html


def test_the_export_can_be_scoped_to_a_project(clients, exported):
    html = clients["member"].get("/export/?project=billing-api", headers=HTMX).content.decode()
    assert "stripe.Charge.create" in html and "Squash-merge" in html and "mobile app" not in html
    assert 'href="/export/download/?project=billing-api"' in html


def test_download_is_an_attachment_named_for_the_project(clients, exported):
    response = clients["member"].get("/export/download/?project=project:billing-api")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    assert response["Content-Disposition"] == 'attachment; filename="MEMORY-billing-api.md"'
    assert response.content.decode().startswith("# Team memory")


def test_an_ambiguous_project_is_a_readable_error(clients, team, store):
    store("One.", entities=["project:web-app"])
    store("Two.", entities=["project:web-api"])
    from memory.models import Entity
    from memory.services.entities import entity_set_aliases

    for entity in Entity.objects.for_team(team).filter(type="project"):
        entity_set_aliases(entity=entity, aliases=["web"])
    preview = clients["member"].get("/export/?project=web")
    assert preview.status_code == 422 and "could mean" in preview.content.decode()
    download = clients["member"].get("/export/download/?project=web")
    assert download.status_code == 400 and "could mean" in download.content.decode()


def test_an_empty_export_explains_itself(clients, db):
    assert "Nothing has been established yet" in clients["member"].get("/export/").content.decode()


# --- tokens ----------------------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_works(clients, member):
    response = clients["member"].post(
        "/tokens/", {"name": "laptop", "scopes": ["read", "write"], "expires_days": "30"}
    )
    html = response.content.decode()
    assert response.status_code == 200 and "it will not be shown again" in html
    key = html.split('id="new-key" value="')[1].split('"')[0]
    token = token_authenticate(key)
    assert token.user == member and token.scopes == ["read", "write"] and token.expires_at is not None
    listing = clients["member"].get("/tokens/").content.decode()
    assert key not in listing and f"ml_{token.prefix}_" in listing


def test_members_cannot_create_curate_tokens(clients, member):
    page = clients["member"].get("/tokens/").content.decode()
    assert 'value="curate"' not in page and 'value="write"' in page  # only what the role allows is offered
    response = clients["member"].post("/tokens/", {"scopes": ["read", "curate"]})
    assert response.status_code == 422
    assert "a member of acme may not hold the scope curate" in response.content.decode()
    assert not ApiToken.objects.filter(user=member).exists()


def test_curators_can_create_curate_tokens(clients, curator):
    clients["curator"].post("/tokens/", {"scopes": ["read", "curate"]})
    assert ApiToken.objects.get(user=curator).scopes == ["read", "curate"]


@pytest.mark.parametrize(
    "data,message",
    [
        ({"scopes": []}, "Pick at least one scope."),
        ({"scopes": ["read"], "expires_days": "0"}, "greater than or equal to 1"),
    ],
)
def test_bad_token_requests_are_readable_errors(clients, data, message):
    response = clients["member"].post("/tokens/", data)
    assert response.status_code == 422 and message in response.content.decode()


def test_each_person_sees_and_revokes_only_their_own_tokens(clients, team, member, curator):
    from memory.services.tokens import token_create

    mine, _ = token_create(user=member, team=team, scopes=["read"], name="mine")
    theirs, _ = token_create(user=curator, team=team, scopes=["read"], name="theirs")
    listing = clients["member"].get("/tokens/").content.decode()
    assert theirs.prefix not in listing and mine.prefix in listing
    response = clients["member"].post(f"/tokens/{mine.pk}/revoke/", headers=HTMX)
    assert response.status_code == 200 and "revoked" in response.content.decode()
    mine.refresh_from_db()
    assert mine.revoked_at is not None and token_authenticate is not None
    assert clients["member"].post(f"/tokens/{theirs.pk}/revoke/").status_code == 404
    assert Client().get("/tokens/").status_code == 302


def test_the_new_token_page_is_not_cached(clients):
    response = clients["member"].post("/tokens/", {"scopes": ["read"]})
    assert response["Cache-Control"] == "no-store"
