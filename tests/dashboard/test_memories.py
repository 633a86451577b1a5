"""The memory browser (live search with explain, filters, feedback) and the memory detail page."""

from __future__ import annotations

import pytest

from memory.models import Memory, MemoryEvent
from memory.services.curation import memory_merge
from memory.services.entities import entity_get_or_create
from memory.services.maturity import memory_deprecate

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}


def test_browsing_lists_newest_first_with_filters(clients, store):
    gotcha = store("Stripe webhooks retry for three days.", category="gotcha", memory_type="insight")
    workflow = store(
        "Squash-merge pull requests into main.", category="workflow", memory_type="workflow_note"
    )
    page = clients["member"].get("/memories/").content.decode()
    assert page.index(str(workflow.pk)) < page.index(str(gotcha.pk))
    filtered = clients["member"].get("/memories/?category=gotcha").content.decode()
    assert str(gotcha.pk) in filtered and str(workflow.pk) not in filtered
    by_type = clients["member"].get("/memories/?type=workflow_note").content.decode()
    assert str(workflow.pk) in by_type and str(gotcha.pk) not in by_type


def test_browsing_pages_through_many_memories(clients, team, store):
    for i in range(21):
        Memory.objects.create(team=team, content=f"Memory number {i}", content_hash=f"h{i}", status="active")
    first = clients["member"].get("/memories/").content.decode()
    assert "Page 1 of 2" in first and "Memory number 20" in first and "Memory number 0<" not in first
    second = clients["member"].get("/memories/?page=2").content.decode()
    assert "Memory number 0" in second
    assert clients["member"].get("/memories/?page=abc").status_code == 200  # a bad page number is page 1


def test_curators_filter_by_status_members_cannot(clients, quarantined, active_memory):
    curator = clients["curator"].get("/memories/?status=quarantined").content.decode()
    assert str(quarantined.pk) in curator and str(active_memory.pk) not in curator
    member = clients["member"].get("/memories/?status=quarantined").content.decode()
    assert str(quarantined.pk) not in member and 'name="status"' not in member


def test_the_entity_filter_resolves_names_and_slugs(clients, active_memory, store):
    other = store("Invoices are generated nightly.", entities=["project:invoicing"])
    page = clients["member"].get("/memories/?entity=project:billing-api").content.decode()
    assert str(active_memory.pk) in page and str(other.pk) not in page
    unknown = clients["member"].get("/memories/?entity=project:nothing").content.decode()
    assert "No entity matches" in unknown


def test_search_shows_results_with_the_explain_breakdown(clients, active_memory, store):
    store("Our office plants are watered on Fridays.", category="workflow")
    response = clients["member"].get("/memories/?q=what+mistake+did+we+make+with+stripe+charges")
    html = response.content.decode()
    assert response.status_code == 200
    assert str(active_memory.pk) in html and "office plants" not in html
    for factor in ("Relevance", "Intent boost", "Feedback score", "Maturity", "= Score"):
        assert factor in html
    active_memory.refresh_from_db()
    assert active_memory.retrieval_count == 0  # a person browsing is not an agent being served


def test_a_reread_result_says_so_in_its_breakdown(clients, settings, store):
    store("Priya on the data team signs off every Postgres migration before it merges.")
    store("Postgres migrations live in the migrations folder and run with make migrate.")
    default = clients["member"].get("/memories/?q=who+reviews+the+Postgres+migrations").content.decode()
    assert "Reread" in default and "late interaction" in default  # the late-interaction stage is on
    assert "a cross-encoder" not in default  # the cross-encoder is off by default
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "LATE_RERANK_ENABLED": False}
    plain = clients["member"].get("/memories/?q=who+reviews+the+Postgres+migrations").content.decode()
    assert "Reread" not in plain
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "RERANK_ENABLED": True}
    reread = clients["member"].get("/memories/?q=who+reviews+the+Postgres+migrations").content.decode()
    assert "Reread" in reread and "a cross-encoder read question and memory together" in reread


def test_htmx_search_returns_only_the_results(clients, active_memory):
    html = clients["member"].get("/memories/?q=stripe", headers=HTMX).content.decode()
    assert html.lstrip().startswith('<section id="results"') and "<html" not in html


def test_search_with_filters_and_an_empty_result(clients, active_memory):
    none = clients["member"].get("/memories/?q=stripe&category=workflow").content.decode()
    assert "No match" in none
    hit = clients["member"].get("/memories/?q=stripe&category=gotcha&maturity=candidate").content.decode()
    assert str(active_memory.pk) in hit


@pytest.mark.parametrize(
    "query,message",
    [
        ("?type=bogus", "Select a valid choice"),
        ("?q=" + "x" * 2001, "at most 2000 characters"),
        ("?q=stripe&entity=Mark", "could mean person:mark-robinson or person:mark-smith"),
        ("?entity=Mark", "could mean person:mark-robinson or person:mark-smith"),
    ],
)
def test_bad_searches_are_readable_errors(clients, team, active_memory, query, message):
    entity_get_or_create("person:mark-robinson", team=team)
    entity_get_or_create("person:mark-smith", team=team)
    response = clients["member"].get("/memories/" + query)
    assert response.status_code == 200
    assert message in response.content.decode()


def test_search_says_it_covers_active_memories_only(clients, quarantined):
    html = clients["curator"].get("/memories/?q=instructions&status=quarantined").content.decode()
    assert "Search covers active memories only" in html


def test_helpful_records_feedback_and_swaps_the_card(clients, member, active_memory):
    response = clients["member"].post(
        f"/memories/{active_memory.pk}/feedback/", {"signal": "helpful"}, headers=HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert f'id="memory-{active_memory.pk}"' in html and "recorded <strong>helpful</strong>" in html
    assert "1 helpful" in html
    active_memory.refresh_from_db()
    assert active_memory.helpful_count == 1 and active_memory.feedback_score == pytest.approx(1.1)
    assert active_memory.feedback_events.get().user == member


def test_harmful_and_irrelevant_are_recorded_too(clients, active_memory):
    for signal in ("harmful", "irrelevant"):
        clients["member"].post(f"/memories/{active_memory.pk}/feedback/", {"signal": signal}, headers=HTMX)
    active_memory.refresh_from_db()
    assert (active_memory.harmful_count, active_memory.irrelevant_count) == (1, 1)
    assert active_memory.feedback_score == pytest.approx(0.5)


def test_feedback_without_htmx_redirects_to_where_it_came_from(clients, active_memory):
    response = clients["member"].post(
        f"/memories/{active_memory.pk}/feedback/", {"signal": "helpful", "next": "/memories/?q=stripe"}
    )
    assert response.status_code == 302 and response["Location"] == "/memories/?q=stripe"
    offsite = clients["member"].post(
        f"/memories/{active_memory.pk}/feedback/", {"signal": "helpful", "next": "https://evil.example/"}
    )
    assert offsite["Location"] == f"/memories/{active_memory.pk}/"


def test_bad_feedback_is_a_readable_error(clients, curator, active_memory):
    bad = clients["member"].post(f"/memories/{active_memory.pk}/feedback/", {"signal": "meh"}, headers=HTMX)
    assert bad.status_code == 422 and "Select a valid choice" in bad.content.decode()
    memory_deprecate(memory=active_memory, actor=curator, reason="wrong")
    retired = clients["member"].post(
        f"/memories/{active_memory.pk}/feedback/", {"signal": "helpful"}, headers=HTMX
    )
    assert retired.status_code == 422 and "can be rated" in retired.content.decode()
    assert active_memory.feedback_events.count() == 0


def test_the_detail_page_shows_history_feedback_chain_and_session(clients, curator, active_memory, store):
    clients["member"].post(
        f"/memories/{active_memory.pk}/feedback/", {"signal": "helpful", "note": "saved me"}
    )
    newer = store(
        "Use payments/gateway.py for every Stripe call; it adds idempotency keys.", category="gotcha"
    )
    memory_merge(source=active_memory, target=newer, actor=curator)
    html = clients["curator"].get(f"/memories/{active_memory.pk}/").content.decode()
    for text in (
        "History",
        "created",
        "feedback",
        "merged",
        "“saved me”",
        "Supersession chain",
        "project:billing-api",
    ):
        assert text in html, text
    assert f'href="/memories/{newer.pk}/"' in html


def test_promote_deprecate_and_reset_from_the_detail_page(clients, active_memory):
    url = f"/memories/{active_memory.pk}/maturity/"
    promoted = clients["curator"].post(url, {"action": "promote"}, follow=True)
    assert "Promoted to proven." in promoted.content.decode()
    active_memory.refresh_from_db()
    assert active_memory.maturity == "proven" and active_memory.maturity_pinned
    no_reason = clients["curator"].post(url, {"action": "deprecate", "reason": ""}, follow=True)
    assert "Say why the memory is deprecated." in no_reason.content.decode()
    clients["curator"].post(url, {"action": "deprecate", "reason": "The gateway was removed."})
    active_memory.refresh_from_db()
    assert (
        active_memory.maturity == "deprecated" and active_memory.status_reason == "The gateway was removed."
    )
    refused = clients["curator"].post(url, {"action": "promote"}, follow=True)
    assert "must be reset before it can be promoted" in refused.content.decode()
    clients["curator"].post(url, {"action": "reset"})
    active_memory.refresh_from_db()
    assert active_memory.maturity == "candidate" and not active_memory.maturity_pinned


def test_an_unknown_maturity_action_is_a_readable_error(clients, active_memory):
    response = clients["curator"].post(
        f"/memories/{active_memory.pk}/maturity/", {"action": "explode"}, follow=True
    )
    assert "Select a valid choice" in response.content.decode()


def test_delete_removes_the_memory_and_keeps_the_audit_entry(clients, active_memory):
    # Curators delete (DESIGN.md §6, as the API's curate scope); a member may not.
    assert clients["member"].post(f"/memories/{active_memory.pk}/delete/").status_code == 403
    response = clients["curator"].post(f"/memories/{active_memory.pk}/delete/", follow=True)
    assert response.redirect_chain[-1][0] == "/memories/" and "Deleted." in response.content.decode()
    assert not Memory.objects.filter(pk=active_memory.pk).exists()
    assert (
        MemoryEvent.objects.get(memory_ref=active_memory.pk, action="deleted")
        .diff["content"]
        .startswith("Never")
    )
