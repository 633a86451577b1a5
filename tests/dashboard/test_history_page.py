"""The memory detail page's versions and timeline, and a curator's Restore (DESIGN.md §4.3, §6):
curators and owners restore; members and readers see no button and are refused; another team's
memory is a 404."""

from __future__ import annotations

import pytest

from memory.models import Action, MemoryEvent
from memory.services.curation import memory_update
from memory.services.store import UPDATE, memory_store

NODE_18 = "Always pin Node 18 for the billing service."
NODE_20 = "Always pin Node 20 for the billing service."
NODE_22 = "Always pin Node 22 for the billing service."


@pytest.fixture
def fact(team, curator, member, embedder):
    """NODE_18 superseded by a member's NODE_20, which a curator edited to NODE_22."""
    memory_store(team=team, content=NODE_18)
    result = memory_store(team=team, content=NODE_20, author=member)
    assert result.operation == UPDATE
    return memory_update(memory=result.memory, actor=curator, content=NODE_22)


def restore_url(memory) -> str:
    return f"/memories/{memory.pk}/restore/"


@pytest.mark.parametrize("role", ["curator", "owner"])
def test_a_curator_sees_the_versions_with_restore_buttons_and_the_timeline(clients, fact, role):
    html = clients[role].get(f"/memories/{fact.pk}/").content.decode()
    for text in ("Versions", "Version 1", "Version 3", "current", "History", "Newest first", "supersedes"):
        assert text in html, text
    assert html.count('aria-label="Restore version') == 2  # not the current one
    assert html.index("Text edited") < html.index("Replaced an earlier memory")  # newest first


@pytest.mark.parametrize("role", ["member", "reader"])
def test_members_and_readers_see_the_history_but_no_restore_button_and_are_refused(clients, fact, role):
    html = clients[role].get(f"/memories/{fact.pk}/").content.decode()
    assert "Version 1" in html and "Text edited" in html
    assert "Restore" not in html
    assert clients[role].post(restore_url(fact), {"version": 1}).status_code == 403
    fact.refresh_from_db()
    assert fact.content == NODE_22


def test_another_teams_memory_is_a_404(clients, fact):
    assert clients["outsider"].get(f"/memories/{fact.pk}/").status_code == 404
    assert clients["outsider"].post(restore_url(fact), {"version": 1}).status_code == 404
    fact.refresh_from_db()
    assert fact.content == NODE_22


def test_anonymous_visitors_are_sent_to_log_in(clients, fact):
    response = clients["anonymous"].post(restore_url(fact), {"version": 1})
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_restore_without_htmx_redirects_to_the_page_with_a_message(clients, fact):
    response = clients["curator"].post(restore_url(fact), {"version": 1}, follow=True)
    assert response.redirect_chain[-1][0] == f"/memories/{fact.pk}/"
    assert "Version 1 restored" in response.content.decode()
    fact.refresh_from_db()
    assert fact.content == NODE_18
    assert MemoryEvent.objects.get(memory=fact, action=Action.RESTORED).diff["version"] == 1


def test_a_restore_with_htmx_answers_with_the_page_fragment(clients, fact):
    response = clients["curator"].post(restore_url(fact), {"version": 2}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="memory-page">') and "<html" not in html
    assert "Version 2 restored" in html and "Version 4" in html


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("3", "current text already"),
        ("9", "Choose a version from 1 to 3"),
        ("x", "whole number"),
        ("", "Choose"),
    ],
)
def test_a_bad_version_is_a_readable_error_and_changes_nothing(clients, fact, version, message):
    response = clients["curator"].post(restore_url(fact), {"version": version}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and message in response.content.decode()
    fact.refresh_from_db()
    assert fact.content == NODE_22
