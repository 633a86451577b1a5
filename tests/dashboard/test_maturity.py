"""The maturity board: four columns with counts; curator actions re-render the board."""

from __future__ import annotations

import pytest

from memory.services.feedback import feedback_record
from tests.conftest import voter

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}


def test_the_board_has_a_column_per_maturity_with_counts(clients, team, member, active_memory, store):
    established = store("Release notes come from PR titles.", category="workflow")
    for index in range(3):
        feedback_record(memory=established, signal="helpful", user=voter(index, team))
    html = clients["member"].get("/maturity/").content.decode()
    for column in ("Candidate", "Established", "Proven", "Deprecated"):
        assert column in html
    assert html.index(str(active_memory.pk)) < html.index("col-established") < html.index(str(established.pk))
    assert "Promote" not in html  # members read the board


def test_promote_on_the_board_moves_the_card_to_the_proven_column(clients, active_memory):
    response = clients["curator"].post(
        f"/memories/{active_memory.pk}/maturity/", {"action": "promote"}, headers=HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<div id="board"')
    assert "Promoted to proven." in html
    assert html.index("col-proven") < html.index(str(active_memory.pk)) < html.index("col-deprecated")


def test_a_refused_board_action_says_why(clients, active_memory):
    response = clients["curator"].post(
        f"/memories/{active_memory.pk}/maturity/", {"action": "deprecate", "reason": " "}, headers=HTMX
    )
    assert response.status_code == 422 and "Say why" in response.content.decode()


def test_an_empty_board_says_none(clients, db):
    assert clients["member"].get("/maturity/").content.decode().count("None.") == 4
