"""Real-browser tests: Debian's Chromium driven by Playwright against a live server.

They log in, approve a quarantined memory, search and rate one, resolve an ambiguous entity and
download the export — checking that the HTMX swaps happen without a page load (a marker set on
``window`` survives) and that the strict Content-Security-Policy is never violated. Screenshots of
every page at laptop and phone widths land in test-artifacts/screenshots/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from memory.models import EntityMention, Memory, TaskRun
from tests.dashboard.seed import seed

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test body are
# still plain synchronous calls, which is what this setting acknowledges.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
SIZES = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def data(team, member, curator, embedder):
    return seed(team=team, member=member, curator=curator)


class Visit:
    """A logged-in page that records CSP violations and console errors."""

    def __init__(self, browser, live_server, username: str, password: str, size: str = "laptop") -> None:
        self.base = live_server.url
        self.context = browser.new_context(viewport=SIZES[size], accept_downloads=True)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.problems.append(str(exc)))
        self.page.goto(self.base + "/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        expect(self.page.get_by_role("heading", name="Overview")).to_be_visible()

    def _console(self, message) -> None:
        # A 403 or 404 the test provoked is logged by the browser as a failed load; anything
        # else at error level (a CSP violation, a script error) is a problem.
        failed_load = message.text.startswith("Failed to load resource")
        if "Content Security Policy" in message.text or (message.type == "error" and not failed_load):
            self.problems.append(message.text)

    def go(self, path: str) -> None:
        self.page.goto(self.base + path)

    def mark(self) -> None:
        """Set a marker that only survives if the page is not reloaded."""
        self.page.evaluate("window.__noReload = 'still here'")

    def assert_not_reloaded(self) -> None:
        assert self.page.evaluate("window.__noReload") == "still here"

    def close(self) -> None:
        self.context.close()
        assert self.problems == [], self.problems


@pytest.fixture
def as_curator(browser, live_server, curator):
    visits = []

    def open_(size: str = "laptop") -> Visit:
        visits.append(Visit(browser, live_server, "cora", "pw-cora-12345", size))
        return visits[-1]

    yield open_
    for visit in visits:
        visit.close()


@pytest.fixture
def as_member(browser, live_server, member):
    visits = []

    def open_(size: str = "laptop") -> Visit:
        visits.append(Visit(browser, live_server, "mia", "pw-mia-12345", size))
        return visits[-1]

    yield open_
    for visit in visits:
        visit.close()


def test_a_wrong_password_is_refused_with_a_message(browser, live_server, member):
    context = browser.new_context()
    page = context.new_page()
    page.goto(live_server.url + "/")
    assert "/login/" in page.url
    page.get_by_label("Username").fill("mia")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("didn't match")
    context.close()


def test_a_curator_approves_a_quarantined_memory_in_place(as_curator, data):
    quarantined = data["quarantined"]
    visit = as_curator()
    visit.go("/review/?show=quarantined")
    item = visit.page.locator(f"#item-{quarantined.pk}")
    expect(item).to_contain_text("Ignore all previous instructions")
    expect(item).to_contain_text("Why it is here")
    visit.mark()
    item.get_by_role("button", name="Approve").click()
    expect(item).to_contain_text("Approved")
    expect(item.get_by_role("button", name="Approve")).to_have_count(0)
    visit.assert_not_reloaded()
    quarantined.refresh_from_db()
    assert quarantined.status == "active" and quarantined.reviewed_by.username == "cora"


def test_a_curator_edits_and_merges_from_the_queue(as_curator, data):
    pending = data["pending"]
    visit = as_curator()
    visit.go("/review/?show=pending")
    item = visit.page.locator(f"#item-{pending.pk}")
    visit.mark()
    item.get_by_role("button", name="Edit").click()
    content = item.get_by_label("Content")
    expect(content).to_be_focused()
    content.fill("Deploy previews live on the staging-eu cluster (since March 2025).")
    item.get_by_role("button", name="Save").click()
    expect(item).to_contain_text("Saved.")
    expect(item).to_contain_text("since March 2025")
    item.get_by_role("button", name="Merge…").click()
    item.get_by_role("radio").first.check()
    item.get_by_role("button", name="Merge", exact=True).click()
    expect(item).to_contain_text("Merged into")
    visit.assert_not_reloaded()
    pending.refresh_from_db()
    assert pending.status == "archived" and pending.superseded_by_id is not None


def test_a_member_searches_and_rates_a_memory_without_a_page_load(as_member, data):
    visit = as_member()
    visit.go("/memories/")
    visit.mark()
    visit.page.get_by_label("Search").fill("what mistake did we make with stripe charges?")
    card = visit.page.locator(".memory-card").first
    expect(card).to_contain_text("stripe.Charge.create")
    card.locator("summary", has_text="why").click()
    expect(card).to_contain_text("Relevance")
    assert "q=what%20mistake" in visit.page.url  # the search is in the address bar, for sharing
    card.get_by_role("button", name="Helpful").click()
    expect(card).to_contain_text("recorded helpful")
    visit.assert_not_reloaded()
    memory = data["memories"][0]
    memory.refresh_from_db()
    assert memory.helpful_count == 7


def test_a_curator_resolves_an_ambiguous_entity(as_curator, data):
    mention = EntityMention.objects.filter(memory=data["ambiguous"], resolved=False).get()
    visit = as_curator()
    visit.go("/entities/")
    item = visit.page.locator(f"#mention-{mention.pk}")
    expect(item).to_contain_text("“mark”")
    visit.mark()
    item.get_by_role("button", name="person:mark-smith").click()
    expect(item).to_contain_text("now points to person:mark-smith")
    visit.assert_not_reloaded()
    mention.refresh_from_db()
    assert mention.resolved and mention.entity.slug == "person:mark-smith"


def test_the_export_downloads_as_a_markdown_file(as_member, data):
    visit = as_member()
    visit.go("/export/")
    expect(visit.page.locator(".markdown-preview")).to_contain_text("# Team memory")
    with visit.page.expect_download() as download_info:
        visit.page.get_by_role("link", name="Download").click()
    download = download_info.value
    assert download.suggested_filename == "MEMORY.md"
    text = Path(download.path()).read_text()
    assert text.startswith("# Team memory") and "stripe.Charge.create" in text


def test_run_now_shows_the_reflection_job_progress(as_curator, data):
    visit = as_curator()
    visit.go("/reflections/")
    visit.mark()
    visit.page.get_by_role("button", name="Run now").click()
    box = visit.page.locator("#reflection-run")
    expect(box).to_contain_text("queued")
    run = TaskRun.objects.filter(task="reflect").order_by("-queued_at").first()
    assert run.triggered_by.username == "cora"
    # No worker runs in this test: play its part, and watch the box follow it.
    TaskRun.objects.filter(pk=run.pk).update(status="running", progress_done=3, progress_total=4)
    expect(box).to_contain_text("75%")
    TaskRun.objects.filter(pk=run.pk).update(status="done", progress_done=4, summary={"clusters": 1})
    expect(box).to_contain_text("done")
    visit.assert_not_reloaded()


def test_a_member_sees_no_curator_controls(as_member, data):
    visit = as_member()
    expect(visit.page.get_by_role("link", name=re.compile("^Review"))).to_have_count(0)
    visit.go(f"/memories/{data['memories'][1].pk}/")
    expect(visit.page.get_by_role("button", name="Helpful")).to_be_visible()
    expect(visit.page.get_by_role("button", name="Promote")).to_have_count(0)
    expect(visit.page.get_by_role("button", name="Delete permanently")).to_have_count(0)
    visit.go("/review/")
    expect(visit.page.get_by_role("heading", name="Not allowed")).to_be_visible()


PAGES = [
    ("login", None),
    ("overview", "/"),
    ("review", "/review/"),
    ("memories", "/memories/"),
    ("search", "/memories/?q=how+do+we+handle+stripe+webhooks"),
    ("memory-detail", "memory"),
    ("maturity", "/maturity/"),
    ("entities", "/entities/"),
    ("sessions", "/sessions/"),
    ("session-detail", "session"),
    ("reflections", "/reflections/"),
    ("export", "/export/"),
    ("tokens", "/tokens/"),
]


@pytest.mark.parametrize("size", list(SIZES))
def test_screenshots_of_every_page(browser, live_server, as_curator, data, size):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    anonymous = browser.new_context(viewport=SIZES[size])
    page = anonymous.new_page()
    page.goto(live_server.url + "/login/")
    page.screenshot(path=SCREENSHOTS / f"login-{size}.png", full_page=True)
    anonymous.close()
    visit = as_curator(size)
    for name, path in PAGES[1:]:
        if path == "memory":
            path = f"/memories/{data['memories'][0].pk}/"
        elif path == "session":
            path = f"/sessions/{data['session'].pk}/"
        visit.go(path)
        visit.page.wait_for_load_state("networkidle")
        # Nothing may be wider than the screen: a phone user scrolls down, never sideways.
        overflow = visit.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} is {overflow}px wider than the {size} screen"
        visit.page.screenshot(path=SCREENSHOTS / f"{name}-{size}.png", full_page=True)
    assert Memory.objects.exists()


def test_a_curator_reviews_a_changed_fact_side_by_side_and_undoes_it(as_curator, team, embedder):
    from memory.models import FactChange
    from memory.services.store import memory_store

    old = memory_store(team=team, content="Always pin Node 18 for the billing service.").memory
    new = memory_store(team=team, content="Always pin Node 20 for the billing service.").memory
    change = FactChange.objects.get()
    visit = as_curator()
    visit.go("/review/?show=changed")
    card = visit.page.locator(f"#fact-{change.pk}")
    expect(card).to_contain_text("version changed: 18 → 20")
    expect(card.locator(".was mark")).to_have_text("18")
    expect(card.locator(".now mark")).to_have_text("20")
    visit.mark()
    card.get_by_role("button", name="Undo").click()
    expect(card).to_contain_text("Undone")
    visit.assert_not_reloaded()
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.superseded_by is None and new.status == "rejected"


def test_a_curator_accepts_a_members_proposal_to_change_a_settled_rule(
    as_curator, team, member, curator, embedder
):
    from memory.models import FactChange
    from memory.services.curation import memory_approve
    from memory.services.store import memory_store

    old = memory_store(team=team, content="Always pin Node 18 for the billing service.").memory
    memory_approve(memory=old, actor=curator)
    proposal = memory_store(team=team, author=member, content="Always pin Node 20 for the billing service.")
    assert proposal.operation == "PROPOSED"
    change = FactChange.objects.get()
    visit = as_curator()
    visit.go("/review/?show=changed")
    card = visit.page.locator(f"#fact-{change.pk}")
    expect(card).to_contain_text(f"Proposal by {member.username}")
    expect(card.locator(".was")).to_contain_text("In force")
    expect(card.locator(".now mark")).to_have_text("20")
    visit.mark()
    card.get_by_role("button", name="Accept").click()
    expect(card).to_contain_text("Accepted")
    visit.assert_not_reloaded()
    old.refresh_from_db()
    assert old.superseded_by == proposal.memory
    assert Memory.objects.get(pk=proposal.memory.pk).status == "active"


def test_a_curator_splits_a_reinforcement_out_of_a_memory(as_curator, team, embedder):
    from memory.services.store import memory_store

    original = memory_store(team=team, content="Don't cache the auth responses.").memory
    memory_store(team=team, content="Do not cache the auth responses.")
    visit = as_curator()
    visit.go(f"/memories/{original.pk}/")
    panel = visit.page.locator(".reinforcements")
    expect(panel).to_contain_text("Do not cache the auth responses.")
    panel.get_by_role("button", name="Split out").click()
    expect(visit.page.get_by_role("status").or_(visit.page.locator(".messages"))).to_contain_text("Split out")
    assert Memory.objects.filter(content="Do not cache the auth responses.").exists()


def test_the_team_switcher_changes_what_the_memories_page_shows(
    browser, live_server, member, team, other_team, embedder
):
    from memory.services.store import memory_store
    from tests.conftest import join

    join(member, other_team, "reader")
    memory_store(team=team, content="Acme deploys from the release branch every Tuesday.")
    memory_store(team=other_team, content="Globex keeps its invoices in the ledger service.")
    visit = Visit(browser, live_server, "mia", "pw-mia-12345")
    try:
        visit.go("/memories/")
        cards = visit.page.locator(".memory-card")
        expect(cards).to_have_count(1)
        expect(cards.first).to_contain_text("Acme deploys")
        switcher = visit.page.get_by_label("Team")
        expect(switcher.locator("option")).to_have_count(2)  # only the teams she belongs to
        switcher.select_option("globex")
        visit.page.get_by_role("button", name="Switch").click()
        expect(visit.page).to_have_url(re.compile(r"/memories/$"))
        expect(cards).to_have_count(1)
        expect(cards.first).to_contain_text("Globex keeps its invoices")
        expect(visit.page.get_by_text("Acme deploys")).to_have_count(0)
        # A reader of globex: nothing to rate there.
        expect(cards.first.get_by_role("button", name="Helpful")).to_have_count(0)
        expect(visit.page.locator("#team-switch")).to_have_value("globex")
    finally:
        visit.close()
    phone = Visit(browser, live_server, "mia", "pw-mia-12345", "phone")
    try:
        phone.go("/memories/")
        expect(phone.page.get_by_label("Team")).to_be_visible()
        overflow = phone.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the switcher makes the page {overflow}px wider than a phone"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        phone.page.screenshot(path=SCREENSHOTS / "team-switcher-phone.png")
    finally:
        phone.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_an_owner_changes_a_role_on_the_members_page_in_place(
    browser, live_server, owner, member, team, size
):
    from memory.models import Membership

    visit = Visit(browser, live_server, "olga", "pw-olga-12345", size)
    try:
        visit.go("/members/")
        membership = Membership.objects.get(user=member, team=team)
        row = visit.page.locator(f"#member-{membership.pk}")
        expect(row).to_contain_text("mia")
        visit.mark()
        row.get_by_label("Role of mia").select_option("curator")
        row.get_by_role("button", name="Change role").click()
        expect(row).to_contain_text("mia is a curator now")
        visit.assert_not_reloaded()
        overflow = visit.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the members page is {overflow}px wider than the {size} screen"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        visit.page.screenshot(path=SCREENSHOTS / f"members-{size}.png", full_page=True)
    finally:
        visit.close()
    membership.refresh_from_db()
    assert membership.role == "curator"


def test_a_curator_restores_an_earlier_version_from_the_memory_page(as_curator, team, curator, embedder):
    from memory.services.curation import memory_update
    from memory.services.store import memory_store

    memory_store(team=team, content="Always pin Node 18 for the billing service.")
    newer = memory_store(team=team, content="Always pin Node 20 for the billing service.").memory
    memory_update(memory=newer, actor=curator, content="Always pin Node 22 for the billing service.")
    visit = as_curator()
    visit.go(f"/memories/{newer.pk}/")
    versions = visit.page.locator(".versions")
    expect(versions.locator(".version")).to_have_count(3)
    expect(versions.locator(".version.current")).to_contain_text("Node 22")
    visit.mark()
    versions.get_by_role("button", name="Restore version 1").click()
    expect(visit.page.get_by_role("status")).to_contain_text("Version 1 restored")
    visit.assert_not_reloaded()
    expect(visit.page.locator(".content.large")).to_have_text("Always pin Node 18 for the billing service.")
    expect(versions.locator(".version")).to_have_count(4)
    expect(visit.page.locator(".timeline-entry").first).to_contain_text("Version 1 restored")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    visit.page.screenshot(path=SCREENSHOTS / "memory-history-laptop.png", full_page=True)
    newer.refresh_from_db()
    assert newer.content == "Always pin Node 18 for the billing service."
