"""The dashboard behind the team wall (DESIGN.md §11), in healthchecks' shape: the owner, curator,
member and reader of ``team``, and ``outsider`` — the owner of another team — on every page, HTMX
partial and POST. Another team's id answers 404 exactly like a missing one and is written to the
audit log (DeniedAccess); lists show nothing of the other team; the switcher offers only the
person's own teams; the Members page lets owners manage their team and no one else."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory.models import (
    ApiToken,
    DeniedAccess,
    EntityMention,
    FactChange,
    Membership,
    Memory,
    Session,
    SessionMessage,
    TaskRun,
)
from memory.services.entities import entity_get_or_create, record_unresolved
from memory.services.tokens import token_create
from tests.conftest import join
from tests.dashboard.conftest import logged_in
from tests.dashboard.test_access import (
    CURATOR_ACTIONS,
    CURATOR_PAGES,
    MEMBER_ACTIONS,
    OWNER_ACTIONS,
    OWNER_PAGES,
    READ_PAGES,
    form,
    get,
    url,
)

pytestmark = pytest.mark.usefixtures("embedder")
HTMX = {"HX-Request": "true"}
MISSING_UUID = "00000000-0000-0000-0000-000000000000"
MISSING_INT = 987654

THEIR_TEXT = "Globex settles ledger invoices through the clearing-house batch at midnight."
THEIR_PENDING = "Globex contractors may deploy the ledger service on Fridays."
THEIR_SESSION = "globex-session-7"
THEIR_ENTITY = "person:gus-globex"
CHANGED_FACT = ("/review/changed/{fact}/", {"action": "confirm"})

# Every URL that names a row, with what it needs.
ID_PAGES = [path for path in READ_PAGES + CURATOR_PAGES if "{" in path]
ID_ACTIONS = [
    (path, data) for path, data in CURATOR_ACTIONS + MEMBER_ACTIONS + OWNER_ACTIONS if "{" in path
] + [CHANGED_FACT]
LISTS = [
    "/",
    "/memories/",
    "/memories/?q=ledger+invoices+clearing+house",
    "/memories/?q=deploy+on+fridays",
    "/memories/?status=pending_review",
    "/maturity/",
    "/entities/",
    "/entities/?q=gus",
    "/sessions/",
    "/reflections/",
    "/export/",
    "/tokens/",
    "/review/",
    "/review/?show=changed",
    "/review/?show=pending",
    "/members/",
]
PARTIALS = [  # the same lists as htmx asks for them
    "/memories/?q=ledger+invoices",
    "/memories/?category=gotcha",
    "/entities/?q=gus",
    "/sessions/?q=globex",
    "/reflections/",
    "/export/?project=project:ledger",
    "/maturity/",
]


@pytest.fixture
def theirs(other_team, outsider, store) -> dict:
    """One of everything in ``other_team``, whose owner is ``outsider``."""
    memory = store(
        THEIR_TEXT, team=other_team, author=outsider, category="gotcha", entities=["project:ledger"]
    )
    pending = store(THEIR_PENDING, team=other_team, author=outsider, status="pending_review")
    old = store("Always pin Node 18 for the ledger service.", team=other_team, author=outsider)
    store("Always pin Node 20 for the ledger service.", team=other_team, author=outsider)
    fact = FactChange.objects.get(old=old)
    session = Session.objects.create(team=other_team, user=outsider, external_id=THEIR_SESSION)
    SessionMessage.objects.create(
        team=other_team, session=session, seq=1, role="user", content="globex hello"
    )
    gus = entity_get_or_create(THEIR_ENTITY, team=other_team)
    entity_get_or_create("person:gus-other", team=other_team)
    record_unresolved(memory, {"Gus": [THEIR_ENTITY, "person:gus-other"]})
    token, _ = token_create(user=outsider, team=other_team, scopes=["read"], name="globex laptop")
    return {
        "memory": memory.pk,
        "quarantined": pending.pk,
        "session": session.pk,
        "entity": gus.pk,
        "mention": EntityMention.objects.get(memory=memory, resolved=False).pk,
        "run": TaskRun.objects.create(task="reflect", team=other_team).pk,
        "member_token": token.pk,
        "curator_token": token.pk,
        "member_membership": Membership.objects.get(user=outsider, team=other_team).pk,
        "fact": fact.pk,
        "token_prefix": token.prefix,
    }


@pytest.fixture
def ours(world, team, active_memory, quarantined) -> dict:
    """``world`` and a changed fact of ``team``."""
    fact = FactChange.objects.create(team=team, old=quarantined, new=active_memory, reason="version changed")
    return {**world, "fact": fact.pk}


def missing(ids: dict) -> dict:
    return {
        key: MISSING_UUID if isinstance(value, type(ids["memory"])) else MISSING_INT
        for key, value in ids.items()
    }


def without_tokens(html: str) -> str:
    """A page with its per-request CSRF tokens taken out, to compare two answers."""
    html = re.sub(r'"x-csrftoken": "[^"]*"', "", html)
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)


def denials(user) -> list[str]:
    return list(
        DeniedAccess.objects.filter(user=user, surface="dashboard").values_list("reference", flat=True)
    )


def send(client, path: str, data: dict | None, ids: dict):
    if data is None:
        return get(client, path, ids)
    return client.post(url(path, ids), form(data, ids), headers=HTMX)


# --- every role of the team on every page and action ----------------------------------------


EXPECTED_PAGE_STATUS = {
    # role: (read pages, curator pages, owner pages)
    "owner": (200, 200, 200),
    "curator": (200, 200, 403),
    "member": (200, 403, 403),
    "reader": (200, 403, 403),
}


@pytest.mark.parametrize("role", list(EXPECTED_PAGE_STATUS))
def test_each_role_opens_the_pages_its_role_allows(clients, world, role):
    read, curate, own = EXPECTED_PAGE_STATUS[role]
    for paths, expected in ((READ_PAGES, read), (CURATOR_PAGES, curate), (OWNER_PAGES, own)):
        for path in paths:
            assert get(clients[role], path, world).status_code == expected, (role, path)


@pytest.mark.parametrize("path,data", CURATOR_ACTIONS + MEMBER_ACTIONS[:1] + OWNER_ACTIONS)
def test_readers_are_refused_every_write(clients, world, path, data):
    response = clients["reader"].post(url(path, world), form(data, world))
    assert response.status_code == 403
    assert Memory.objects.get(pk=world["memory"]).helpful_count == 0


def test_readers_see_no_feedback_buttons(clients, world):
    for path in ("/memories/", "/memories/?q=stripe", "/memories/{memory}/"):
        html = clients["reader"].get(url(path, world)).content.decode()
        assert "stripe.Charge.create" in html and 'value="helpful"' not in html, path
    assert 'value="helpful"' in clients["member"].get("/memories/").content.decode()


def test_readers_get_read_only_tokens(clients, reader):
    page = clients["reader"].get("/tokens/").content.decode()
    assert 'value="read"' in page and 'value="write"' not in page and 'value="curate"' not in page
    refused = clients["reader"].post("/tokens/", {"scopes": ["read", "write"]})
    assert (
        refused.status_code == 422
        and "a reader of acme may not hold the scope write" in refused.content.decode()
    )
    assert clients["reader"].post("/tokens/", {"scopes": ["read"]}).status_code == 200
    assert ApiToken.objects.get(user=reader).scopes == ["read"]


def test_roles_not_the_staff_flag_decide(clients, curator, owner, other_team, world):
    assert not owner.is_staff and clients["owner"].get("/review/").status_code == 200
    join(curator, other_team, "member")  # staff, but only a member of globex
    clients["curator"].post("/team/", {"team": "globex"})
    assert clients["curator"].get("/review/").status_code == 403
    response = clients["curator"].post(url("/memories/{memory}/maturity/", world), {"action": "promote"})
    assert response.status_code == 403


def test_a_user_of_no_team_is_told_so(db):
    loner = get_user_model().objects.create_user(username="lone", password="pw-lone-12345", is_staff=True)
    client = logged_in(loner)
    for path in ("/", "/memories/", "/tokens/", "/members/", "/review/"):
        response = client.get(path)
        assert response.status_code == 403, path
        assert "You belong to no team" in response.content.decode()
    assert client.get("/memories/", headers=HTMX).status_code == 403
    assert client.post("/team/", {"team": "acme"}).status_code == 403


# --- the outsider: another team's owner, on every one of our ids ------------------------------


@pytest.mark.parametrize("path", ID_PAGES)
def test_another_teams_page_ids_answer_404_like_missing_ones_and_are_recorded(
    clients, ours, other_team, outsider, path
):
    response = get(clients["outsider"], path, ours)
    absent = get(clients["outsider"], path, missing(ours))
    assert response.status_code == absent.status_code == 404
    assert without_tokens(response.content.decode()) == without_tokens(absent.content.decode())
    # Both attempts are written down, in the outsider's own team: what was asked, not whose it is.
    recorded = DeniedAccess.objects.filter(team=other_team, user=outsider, surface="dashboard")
    assert recorded.count() == 2
    assert str(ours[re.findall(r"\{(\w+)\}", path)[0]]) in denials(outsider)


@pytest.mark.parametrize("path,data", ID_ACTIONS)
def test_another_teams_ids_in_actions_answer_404_like_missing_ones_and_change_nothing(
    clients, ours, outsider, path, data
):
    if "/rerun/" in path:
        Session.objects.filter(pk=ours["session"]).update(ended_at="2025-01-01T00:00:00Z")
    before = Memory.objects.get(pk=ours["memory"])
    response = send(clients["outsider"], path, data, ours)
    absent = send(clients["outsider"], path, data, missing(ours))
    assert response.status_code == absent.status_code == 404, response.content[:300]
    referenced = re.findall(r"\{(\w+)\}", path)[0]
    assert str(ours[referenced]) in denials(outsider)
    after = Memory.objects.get(pk=ours["memory"])
    assert (after.status, after.maturity, after.helpful_count) == (before.status, before.maturity, 0)
    assert Membership.objects.filter(pk=ours["member_membership"]).exists()
    assert ApiToken.objects.get(pk=ours["member_token"]).revoked_at is None


@pytest.mark.parametrize("path", ID_PAGES)
def test_our_owner_meets_the_same_wall_with_their_ids(clients, theirs, owner, path):
    response = get(clients["owner"], path, theirs)
    assert response.status_code == 404
    assert str(theirs[re.findall(r"\{(\w+)\}", path)[0]]) in denials(owner)


@pytest.mark.parametrize("path,data", ID_ACTIONS)
def test_our_owner_cannot_act_on_their_ids(clients, theirs, world, owner, path, data):
    assert send(clients["owner"], path, data, theirs).status_code == 404
    assert Memory.objects.get(pk=theirs["memory"]).helpful_count == 0
    assert FactChange.objects.get(pk=theirs["fact"]).status == "open"
    assert ApiToken.objects.get(pk=theirs["member_token"]).revoked_at is None


def test_their_ids_inside_forms_are_refused_and_recorded(clients, theirs, world, owner):
    merge = clients["owner"].post(
        url("/review/{quarantined}/merge/", world), {"target_id": str(theirs["memory"])}, headers=HTMX
    )
    assert merge.status_code == 422 and "No memory has that id." in merge.content.decode()
    entities = clients["owner"].post(
        "/entities/merge/", {"source": THEIR_ENTITY, "target": "person:mark-robinson"}, follow=True
    )
    assert f"No entity “{THEIR_ENTITY}”" in entities.content.decode()
    assert {str(theirs["memory"]), THEIR_ENTITY} <= set(denials(owner))
    assert Memory.objects.get(pk=theirs["memory"]).status == "active"


# --- lists show nothing of the other team ------------------------------------------------------


@pytest.mark.parametrize("role", ["owner", "curator", "member", "reader"])
def test_our_lists_show_nothing_of_theirs(clients, world, theirs, role):
    for path in LISTS + [f"{p}#htmx" for p in PARTIALS]:
        plain, _, htmx = path.partition("#")
        response = clients[role].get(plain, headers=HTMX if htmx else {})
        if response.status_code == 403:
            continue  # a page of another role
        html = response.content.decode()
        assert response.status_code in (200, 422), path
        # Whole phrases, not the query words some pages echo back.
        for text in (
            "Globex",
            "clearing-house",
            "Globex contractors",
            "Node 20",
            THEIR_SESSION,
            THEIR_ENTITY,
            "gus-other",
            f"ml_{theirs['token_prefix']}",
            str(theirs["memory"]),
            str(theirs["session"]),
        ):
            assert text not in html, (role, path, text)
        assert not re.search(r"\botto\b", html), (role, path)


def test_their_lists_show_nothing_of_ours(clients, world, outsider):
    for path in LISTS + ["/memories/?q=stripe", "/memories/?entity=project:billing-api"]:
        html = clients["outsider"].get(path).content.decode()
        for text in ("stripe.Charge.create", "Ignore all previous instructions", "Mark Robinson"):
            assert text not in html, (path, text)
        for word in ("mia", "cora", "olga", "rita", "acme", "Acme"):
            assert not re.search(rf"\b{word}\b", html), (path, word)
        for key in ("memory", "quarantined", "session"):
            assert str(world[key]) not in html, (path, key)


def test_filters_by_their_slugs_find_nothing(clients, theirs, world):
    html = clients["owner"].get("/memories/?entity=project:ledger").content.decode()
    assert "No entity matches" in html and THEIR_TEXT not in html
    export = clients["owner"].get("/export/download/?project=project:ledger")
    assert THEIR_TEXT not in export.content.decode()


def test_the_overview_counts_only_the_teams_rows(clients, world, theirs):
    ours = clients["owner"].get("/").content.decode()
    theirs_page = clients["outsider"].get("/").content.decode()
    assert re.search(r'stat-value">(\d+)</span><span class="stat-label">active', ours).group(1) == "1"
    their_active = Memory.objects.filter(team__slug="globex", status="active").count()
    assert re.search(r'stat-value">(\d+)</span><span class="stat-label">active', theirs_page).group(1) == str(
        their_active
    )


def test_the_review_badge_counts_only_the_teams_queue(clients, team, world, theirs):
    from memory.services.curation import review_queue

    html = clients["owner"].get("/memories/").content.decode()
    badge = re.search(r'Review <span class="count">(\d+)</span>', html)
    assert badge and badge.group(1) == str(review_queue(team=team).count())


# --- the team switcher ------------------------------------------------------------------------


def test_the_switcher_offers_only_the_users_teams(clients, member, other_team, db):
    single = clients["member"].get("/").content.decode()
    assert 'id="team-switch"' not in single and "Acme" in single  # one team: its name, no switcher
    from memory.models import Team

    Team.objects.create(slug="initech", name="Initech")  # a team she is not in
    join(member, other_team, "reader")
    html = clients["member"].get("/").content.decode()
    options = re.findall(r'<option value="([^"]+)"', html.split('id="team-switch"')[1].split("</select>")[0])
    assert options == ["acme", "globex"]


def test_switching_changes_the_team_every_page_reads(clients, member, world, theirs, other_team):
    join(member, other_team, "reader")
    assert "stripe.Charge.create" in clients["member"].get("/memories/").content.decode()
    response = clients["member"].post("/team/", {"team": "globex", "next": "/memories/?category=gotcha"})
    assert response.status_code == 302 and response["Location"] == "/memories/?category=gotcha"
    html = clients["member"].get("/memories/").content.decode()
    assert THEIR_TEXT in html and "stripe.Charge.create" not in html
    assert 'value="helpful"' not in html  # a reader there
    assert clients["member"].get(url("/memories/{memory}/", world)).status_code == 404
    assert clients["member"].get(url("/memories/{memory}/", theirs)).status_code == 200
    back = clients["member"].post("/team/", {"team": "acme", "next": url("/memories/{memory}/", theirs)})
    assert back["Location"] == "/memories/"  # a page of one row of the old team: its list instead
    assert "stripe.Charge.create" in clients["member"].get("/memories/").content.decode()


def test_switching_to_a_team_you_are_not_in_is_refused(clients, member, world, theirs, other_team):
    for slug in ("globex", "no-such-team"):
        response = clients["member"].post("/team/", {"team": slug})
        assert response.status_code == 404
        assert slug in denials(member)
    html = clients["member"].get("/memories/").content.decode()
    assert "stripe.Charge.create" in html and THEIR_TEXT not in html
    assert clients["member"].session.get("team") in (None, "acme")


def test_a_team_left_behind_falls_back_to_the_first_team(clients, member, world, other_team):
    join(member, other_team, "member")
    clients["member"].post("/team/", {"team": "globex"})
    assert "stripe.Charge.create" not in clients["member"].get("/memories/").content.decode()
    Membership.objects.filter(user=member, team=other_team).delete()
    html = clients["member"].get("/memories/").content.decode()
    assert "stripe.Charge.create" in html


def test_a_new_token_belongs_to_the_current_team(clients, member, other_team, world):
    join(member, other_team, "member")
    clients["member"].post("/team/", {"team": "globex"})
    response = clients["member"].post("/tokens/", {"name": "globex laptop", "scopes": ["read"]})
    assert response.status_code == 200
    token = ApiToken.objects.get(name="globex laptop")
    assert token.team == other_team and token.user == member


# --- tokens per team ---------------------------------------------------------------------------


def test_a_token_can_be_limited_to_projects(clients, member):
    response = clients["member"].post(
        "/tokens/", {"name": "mobile", "scopes": ["read", "write"], "projects": "project:mobile-app, web"}
    )
    assert response.status_code == 200
    token = ApiToken.objects.get(name="mobile")
    assert token.projects == ["project:mobile-app", "project:web"]
    listing = clients["member"].get("/tokens/").content.decode()
    assert "project:mobile-app" in listing
    bad = clients["member"].post("/tokens/", {"scopes": ["read"], "projects": "person:mark"})
    assert bad.status_code == 422 and "projects must be project slugs" in bad.content.decode()


def test_owners_see_and_revoke_every_token_of_their_team_only(clients, world, theirs, owner, member):
    html = clients["owner"].get("/tokens/").content.decode()
    member_token = ApiToken.objects.get(pk=world["member_token"])
    curator_token = ApiToken.objects.get(pk=world["curator_token"])
    assert member_token.prefix in html and curator_token.prefix in html and "mia" in html
    assert theirs["token_prefix"] not in html
    assert clients["owner"].post(f"/tokens/{member_token.pk}/revoke/", headers=HTMX).status_code == 200
    member_token.refresh_from_db()
    assert member_token.revoked_at is not None
    assert clients["owner"].post(f"/tokens/{theirs['member_token']}/revoke/").status_code == 404
    own, _ = token_create(user=owner, scopes=["read"], name="the owner's")
    member_view = clients["member"].get("/tokens/").content.decode()
    assert own.prefix not in member_view and curator_token.prefix not in member_view
    assert clients["member"].post(f"/tokens/{own.pk}/revoke/").status_code == 404
    assert str(own.pk) in denials(member)


# --- the Members page ----------------------------------------------------------------------------


def test_the_members_page_lists_members_and_roles(clients, member, curator, reader, outsider):
    html = clients["owner"].get("/members/").content.decode()
    for username in ("olga", "cora", "mia", "rita"):
        assert username in html
    assert "otto" not in html  # a member of another team
    membership = Membership.objects.get(user=reader)
    row = html.split(f'id="member-{membership.pk}"')[1].split("</tr>")[0]
    assert '<option value="reader" selected>' in row


@pytest.mark.parametrize("role", ["curator", "member", "reader", "outsider"])
def test_non_owners_get_403_on_the_members_page(clients, world, role):
    if role == "outsider":  # an owner, but of globex: our memberships are not theirs to see
        response = clients[role].post(url("/members/{member_membership}/remove/", world))
        assert response.status_code == 404
        return
    assert clients[role].get("/members/").status_code == 403
    assert clients[role].post("/members/add/", {"username": "x", "role": "owner"}).status_code == 403


def test_an_owner_adds_an_existing_user(clients, team, outsider):
    response = clients["owner"].post("/members/add/", {"username": "otto", "role": "reader"}, follow=True)
    assert "otto joined Acme as reader" in response.content.decode()
    assert Membership.objects.get(user=outsider, team=team).role == "reader"
    # otto now belongs to two teams: his own stays his, and Acme is offered by the switcher.
    assert 'value="acme"' in clients["outsider"].get("/").content.decode()


@pytest.mark.parametrize(
    "data,message",
    [
        ({"username": "nobody", "role": "member"}, "No user “nobody”. Create one below."),
        ({"username": "mia", "role": "member"}, "mia is a member already"),
        ({"username": "otto", "role": "emperor"}, "Select a valid choice"),
    ],
)
def test_bad_additions_are_readable_errors(clients, member, outsider, data, message):
    response = clients["owner"].post("/members/add/", data)
    assert response.status_code == 422 and message in response.content.decode()


def test_an_owner_creates_a_user_who_can_log_in(clients, team):
    response = clients["owner"].post(
        "/members/create/", {"username": "newcomer", "password": "correct horse battery", "role": "member"}
    )
    assert response.status_code == 302
    assert Membership.objects.get(user__username="newcomer", team=team).role == "member"
    client = Client()
    assert (
        client.post("/login/", {"username": "newcomer", "password": "correct horse battery"}).status_code
        == 302
    )
    assert "Acme" in client.get("/").content.decode()


@pytest.mark.parametrize(
    "data,message",
    [
        ({"username": "mia", "password": "correct horse battery"}, "exists already"),
        ({"username": "bad name!", "password": "correct horse battery"}, "Enter a valid username"),
        ({"username": "shorty", "password": "abc"}, "too short"),
    ],
)
def test_bad_new_users_are_readable_errors(clients, member, data, message):
    response = clients["owner"].post("/members/create/", {**data, "role": "member"})
    assert response.status_code == 422 and message in response.content.decode()
    assert not get_user_model().objects.filter(username=data["username"], memberships__isnull=True).exists()


def test_an_owner_changes_a_role_in_place(clients, member, team):
    membership = Membership.objects.get(user=member, team=team)
    response = clients["owner"].post(f"/members/{membership.pk}/role/", {"role": "curator"}, headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and "mia is a curator now" in html
    membership.refresh_from_db()
    assert membership.role == "curator"
    assert clients["member"].get("/review/").status_code == 200


def test_the_last_owner_cannot_step_down_or_leave(clients, owner, team):
    membership = Membership.objects.get(user=owner, team=team)
    demote = clients["owner"].post(f"/members/{membership.pk}/role/", {"role": "member"}, headers=HTMX)
    assert demote.status_code == 422 and "A team keeps at least one owner." in demote.content.decode()
    leave = clients["owner"].post(f"/members/{membership.pk}/remove/", follow=True)
    assert leave.status_code == 200 and "A team keeps at least one owner." in leave.content.decode()
    membership.refresh_from_db()
    assert membership.role == "owner"


def test_removing_a_member_revokes_their_tokens_of_the_team(clients, member, team, world):
    membership = Membership.objects.get(user=member, team=team)
    response = clients["owner"].post(f"/members/{membership.pk}/remove/", headers=HTMX)
    assert response.status_code == 200 and "mia left Acme" in response.content.decode()
    assert not ApiToken.objects.filter(pk=world["member_token"]).exists()
    again = clients["member"].get("/memories/")
    assert again.status_code == 403 and "You belong to no team" in again.content.decode()


def test_owners_see_who_of_their_team_was_refused(clients, member, theirs, world, outsider):
    clients["member"].get(f"/memories/{theirs['memory']}/")
    clients["outsider"].get(url("/memories/{memory}/", world))  # written to globex's log, not ours
    html = clients["owner"].get("/members/").content.decode()
    panel = html.split('id="denied-title"')[1]
    assert "mia" in panel and f'memory <code class="small">{theirs["memory"]}' in panel
    assert str(world["memory"]) not in panel
