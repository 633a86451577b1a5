"""The review queue: what it holds, and approve / reject / edit / merge swapping one item."""

from __future__ import annotations

import pytest

from memory.models import Memory, MemoryEvent
from memory.services.curation import memory_approve, memory_reject

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}


def test_the_queue_holds_quarantined_pending_and_unreviewed_candidates_quarantined_first(
    clients, curator, store, quarantined, pending
):
    reviewed = store("Use poetry lock --no-update when bumping one dependency.")
    memory_approve(memory=reviewed, actor=curator)
    rejected = store("Tabs are better than spaces in Python files.")
    memory_reject(memory=rejected, actor=curator)
    fresh = store("Redis keys for sessions expire after 14 days.")
    page = clients["curator"].get("/review/").content.decode()
    assert str(fresh.pk) in page and str(pending.pk) in page and str(quarantined.pk) in page
    assert str(reviewed.pk) not in page and str(rejected.pk) not in page
    assert page.index(str(quarantined.pk)) < page.index(str(pending.pk)) < page.index(str(fresh.pk))
    assert "Why it is here" in page  # the quarantine reason
    assert "Source chunk" in page and "mia" in page  # provenance


def test_the_tabs_filter_the_queue(clients, quarantined, pending):
    page = clients["curator"].get("/review/?show=pending").content.decode()
    assert str(pending.pk) in page and str(quarantined.pk) not in page


def test_an_empty_queue_says_so(clients, db):
    assert "Nothing to review" in clients["curator"].get("/review/").content.decode()


def test_approve_swaps_the_item_and_records_the_reviewer(clients, curator, quarantined):
    response = clients["curator"].post(f"/review/{quarantined.pk}/approve/", headers=HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and f'id="item-{quarantined.pk}"' in html and "Approved" in html
    quarantined.refresh_from_db()
    assert quarantined.status == "active" and quarantined.reviewed_by == curator


def test_approve_without_htmx_redirects_back_with_a_message(clients, quarantined):
    response = clients["curator"].post(f"/review/{quarantined.pk}/approve/", follow=True)
    assert response.redirect_chain[-1][0] == "/review/"
    assert "Approved" in response.content.decode()


def test_approving_a_duplicate_explains_instead_of_failing(clients, curator, store):
    text = "Our staging database is reset every Sunday night."
    first = store(text, status="pending_review")
    memory_reject(memory=first, actor=curator)
    store(text)  # the same text, live again
    response = clients["curator"].post(f"/review/{first.pk}/approve/", headers=HTMX)
    assert response.status_code == 422
    assert "already has this content; merge them instead" in response.content.decode()


def test_reject_keeps_the_reason(clients, pending):
    response = clients["curator"].post(f"/review/{pending.pk}/reject/", {"reason": "outdated"}, headers=HTMX)
    assert response.status_code == 200 and "Rejected" in response.content.decode()
    pending.refresh_from_db()
    assert pending.status == "rejected" and pending.status_reason == "outdated"


def test_reject_with_a_too_long_reason_is_a_readable_error(clients, pending):
    response = clients["curator"].post(f"/review/{pending.pk}/reject/", {"reason": "x" * 1001}, headers=HTMX)
    assert response.status_code == 422 and "at most 1000 characters" in response.content.decode()


def test_edit_opens_an_inline_form_with_the_current_values(clients, pending):
    response = clients["curator"].get(f"/review/{pending.pk}/edit/", headers=HTMX)
    html = response.content.decode()
    assert "<form" in html and "staging-eu" in html and "autofocus" in html
    assert '<label for="edit-' in html  # labelled fields


def test_edit_saves_and_re_embeds(clients, pending):
    before = list(pending.embedding)
    data = {
        "content": "Deploy previews run on the staging-us cluster.",
        "memory_type": "decision",
        "category": "architecture",
        "priority": "critical",
        "tags": "deploy, previews",
        "entities": "project:web-app",
    }
    response = clients["curator"].post(f"/review/{pending.pk}/edit/", data, headers=HTMX)
    assert response.status_code == 200 and "Saved." in response.content.decode()
    pending.refresh_from_db()
    assert pending.content == data["content"] and pending.memory_type == "decision"
    assert pending.tags == ["deploy", "previews"] and list(pending.embedding) != before
    assert pending.mentions.filter(entity__slug="project:web-app").exists()
    assert MemoryEvent.objects.filter(memory=pending, action="updated").exists()


@pytest.mark.parametrize(
    "change,message",
    [
        ({"content": "   "}, "This field is required"),
        ({"memory_type": "nonsense"}, "Select a valid choice"),
        ({"entities": "Mark"}, "could mean person:mark-robinson or person:mark-smith"),
        ({"content": "x" * 8001}, "at most 8000 characters"),
    ],
)
def test_bad_edits_come_back_as_readable_errors(clients, team, pending, change, message):
    from memory.services.entities import entity_get_or_create

    entity_get_or_create("person:mark-robinson", team=team)
    entity_get_or_create("person:mark-smith", team=team)
    data = {
        "content": "Fine.",
        "memory_type": "insight",
        "category": "workflow",
        "priority": "moderate",
        **change,
    }
    response = clients["curator"].post(f"/review/{pending.pk}/edit/", data, headers=HTMX)
    assert response.status_code == 422
    assert message in response.content.decode()
    pending.refresh_from_db()
    assert "staging-eu" in pending.content


def test_merge_offers_similar_memories_and_folds_the_item_into_one(clients, curator, store):
    target = store("Always run the database migrations before the test suite.", tags=["tests"])
    # The same lesson in other words; the upsert reinforces such a rewording now, so this one was
    # stored as it was before (an import, or a store from before the upsert knew it).
    source = store(
        "Run the DB migrations before running the tests.",
        status="pending_review",
        tags=["db"],
        entities=["project:billing-api"],
        dedupe=False,
    )
    picker = clients["curator"].get(f"/review/{source.pk}/merge/", headers=HTMX).content.decode()
    assert str(target.pk) in picker and "similar" in picker
    response = clients["curator"].post(
        f"/review/{source.pk}/merge/", {"target": str(target.pk)}, headers=HTMX
    )
    assert response.status_code == 200 and "Merged into" in response.content.decode()
    source.refresh_from_db()
    target.refresh_from_db()
    assert source.status == "archived" and source.superseded_by == target
    assert set(target.tags) == {"tests", "db"} and target.reinforcement_count == 1
    assert target.mentions.filter(entity__slug="project:billing-api").exists()
    assert MemoryEvent.objects.filter(memory=target, action="merged").exists()


@pytest.mark.parametrize(
    "data,message",
    [
        ({}, "Pick the memory to merge into."),
        ({"target_id": "not-an-id"}, "That is not a memory id."),
        ({"target_id": "00000000-0000-0000-0000-000000000000"}, "No memory has that id."),
    ],
)
def test_bad_merges_are_readable_errors(clients, pending, data, message):
    response = clients["curator"].post(f"/review/{pending.pk}/merge/", data, headers=HTMX)
    assert response.status_code == 422 and message in response.content.decode()


def test_a_memory_cannot_be_merged_into_itself_or_into_a_quarantined_one(clients, pending, quarantined):
    itself = clients["curator"].post(
        f"/review/{pending.pk}/merge/", {"target_id": str(pending.pk)}, headers=HTMX
    )
    assert itself.status_code == 422 and "cannot be merged into itself" in itself.content.decode()
    other = clients["curator"].post(
        f"/review/{pending.pk}/merge/", {"target": str(quarantined.pk)}, headers=HTMX
    )
    assert other.status_code == 422 and "Merge into an active memory" in other.content.decode()
    assert Memory.objects.get(pk=pending.pk).status == "pending_review"


def test_a_proposal_is_resolved_by_curators_only_and_another_teams_is_missing(
    clients, team, member, curator, embedder
):
    from memory.models import FactChange
    from memory.services.curation import memory_approve
    from memory.services.store import memory_store

    old = memory_approve(
        memory=memory_store(team=team, content="Deploy billing on Tuesdays only.").memory, actor=curator
    )
    memory_store(team=team, author=member, content="Deploy billing on Thursdays only.")
    change = FactChange.objects.get(kind="proposal")
    url = f"/review/changed/{change.pk}/"
    page = clients["curator"].get("/review/?show=changed").content.decode()
    assert "Proposal by mia" in page and "In force" in page and ">Accept<" in page
    # It waits there, beside the memory it would change, not among the pending memories.
    pending = clients["curator"].get("/review/?show=pending").content.decode()
    assert "Thursdays" not in pending
    assert clients["member"].post(url, {"action": "confirm"}).status_code == 403
    assert clients["reader"].post(url, {"action": "confirm"}).status_code == 403
    assert clients["outsider"].post(url, {"action": "confirm"}).status_code == 404
    old.refresh_from_db()
    assert old.superseded_by is None and FactChange.objects.get().status == "open"
    response = clients["curator"].post(url, {"action": "undo"}, headers={"hx-request": "true"})
    assert response.status_code == 200 and "Declined" in response.content.decode()
    old.refresh_from_db()
    assert old.superseded_by is None and old.status == "active"
