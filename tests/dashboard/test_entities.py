"""Entities: mention counts, the ambiguity queue, merging and aliases."""

from __future__ import annotations

import pytest

from memory.models import Entity, EntityMention
from memory.services.entities import entity_get_or_create, record_unresolved

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}


@pytest.fixture
def marks(team):
    return (
        entity_get_or_create("person:mark-robinson", team=team),
        entity_get_or_create("person:mark-smith", team=team),
    )


@pytest.fixture
def ambiguous(active_memory, marks) -> EntityMention:
    record_unresolved(active_memory, {"Mark": [m.slug for m in marks]}, ["Priya"])
    return EntityMention.objects.get(memory=active_memory, raw="Mark")


def test_the_list_shows_entities_with_their_mention_counts(clients, active_memory, marks):
    html = clients["member"].get("/entities/").content.decode()
    assert "project:billing-api" in html and "person:mark-robinson" in html
    assert 'href="/memories/?entity=project%3Abilling-api">1</a>' in html


def test_the_list_filters_by_name_and_type(clients, active_memory, marks):
    html = clients["member"].get("/entities/?q=mark&type=person").content.decode()
    assert 'small">person:mark-smith</code>' in html and 'small">project:billing-api</code>' not in html
    assert "No entity matches" in clients["member"].get("/entities/?q=zzz").content.decode()


def test_the_ambiguity_queue_lists_unresolved_mentions_with_their_candidates(clients, ambiguous):
    html = clients["curator"].get("/entities/").content.decode()
    assert "Ambiguity queue" in html and "“Mark”" in html and "“Priya”" in html
    assert 'value="person:mark-smith"' in html


def test_picking_a_candidate_resolves_the_mention(clients, ambiguous, marks):
    response = clients["curator"].post(
        f"/entities/mentions/{ambiguous.pk}/resolve/", {"slug": "person:mark-smith"}, headers=HTMX
    )
    assert response.status_code == 200 and "now points to person:mark-smith" in response.content.decode()
    ambiguous.refresh_from_db()
    assert ambiguous.resolved and ambiguous.entity == marks[1]


def test_a_new_slug_creates_the_entity(clients, team, ambiguous):
    priya = EntityMention.objects.get(raw="Priya")
    clients["curator"].post(
        f"/entities/mentions/{priya.pk}/resolve/", {"slug": "person:priya-shah"}, headers=HTMX
    )
    priya.refresh_from_db()
    assert priya.resolved and Entity.objects.get(team=team, slug="person:priya-shah").name == "Priya Shah"


@pytest.mark.parametrize("slug,message", [("", "Pick or type the entity"), ("Priya", "Give a slug such as")])
def test_a_bad_slug_is_a_readable_error(clients, ambiguous, slug, message):
    response = clients["curator"].post(
        f"/entities/mentions/{ambiguous.pk}/resolve/", {"slug": slug}, headers=HTMX
    )
    assert response.status_code == 422 and message in response.content.decode()
    ambiguous.refresh_from_db()
    assert not ambiguous.resolved


def test_dismiss_takes_a_mention_out_of_the_queue(clients, ambiguous):
    response = clients["curator"].post(f"/entities/mentions/{ambiguous.pk}/dismiss/", headers=HTMX)
    assert "Dismissed" in response.content.decode()
    assert not EntityMention.objects.filter(pk=ambiguous.pk).exists()
    again = clients["curator"].post(f"/entities/mentions/{ambiguous.pk}/dismiss/", headers=HTMX)
    assert again.status_code == 404


def test_merging_two_entities_moves_mentions_and_aliases(clients, store, marks):
    memory = store("Mark Smith owns the deploy scripts.", entities=["person:mark-smith"])
    response = clients["curator"].post(
        "/entities/merge/", {"source": "person:mark-smith", "target": "person:mark-robinson"}, follow=True
    )
    assert "Merged person:mark-smith into person:mark-robinson" in response.content.decode()
    assert memory.mentions.get(resolved=True).entity == marks[0]
    marks[0].refresh_from_db()
    assert "Mark Smith" in marks[0].aliases


@pytest.mark.parametrize(
    "data,message",
    [
        ({"source": "person:nobody", "target": "person:mark-robinson"}, "No entity “person:nobody”"),
        ({"source": "person:mark-smith", "target": "person:mark-smith"}, "cannot be merged into itself"),
        ({"source": "", "target": "person:mark-smith"}, "This field is required"),
    ],
)
def test_bad_merges_are_readable_errors(clients, marks, data, message):
    response = clients["curator"].post("/entities/merge/", data, follow=True)
    assert response.status_code == 200 and message in response.content.decode()


def test_aliases_are_edited_inline(clients, marks):
    entity = marks[0]
    form = clients["curator"].get(f"/entities/{entity.pk}/aliases/", headers=HTMX).content.decode()
    assert 'name="aliases"' in form and "autofocus" in form
    response = clients["curator"].post(
        f"/entities/{entity.pk}/aliases/", {"aliases": "Mark R, MR"}, headers=HTMX
    )
    assert response.status_code == 200 and "Saved." in response.content.decode()
    entity.refresh_from_db()
    assert entity.aliases == ["Mark R", "MR"]
    too_long = clients["curator"].post(
        f"/entities/{entity.pk}/aliases/", {"aliases": "x" * 201}, headers=HTMX
    )
    assert too_long.status_code == 422 and "at most 200 characters" in too_long.content.decode()
