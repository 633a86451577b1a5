"""The wall between teams on the agent API (DESIGN.md §11), in healthchecks' shape: the team's
owner and a teammate of every role, an outsider of another team, and a project-limited token,
across every endpoint.

Another team's id answers exactly like a missing one (404, the same code and message), the attempt
is written to DeniedAccess, and nothing of the team shows in the outsider's lists, searches,
context or export.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from memory.models import DeniedAccess, FactChange, FeedbackEvent, Memory, MemoryEvent, Session
from memory.services import teams
from memory.services.feedback import feedback_record
from memory.services.sessions import session_start
from memory.services.store import memory_store
from memory.services.tokens import token_create
from tests.api.conftest import client_with
from tests.conftest import join, voter

pytestmark = pytest.mark.usefixtures("embedder")

ALICE_FACT = "Acme's payment processor key rotation happens on the 3rd of each month via the vault job."
NODE_18 = "Always pin Node 18 for the acme payments service."
NODE_20 = "Always pin Node 20 for the acme payments service."
ACME = "project:acme-payments"
ALL = ["read", "write", "curate"]
ROLE_SCOPES = {"owner": ALL, "curator": ALL, "member": ["read", "write"], "reader": ["read"]}


def user(username: str):
    return get_user_model().objects.create_user(username=username)


@pytest.fixture
def acme(team, other_team, owner, curator, member, reader, outsider):
    """The team ``acme`` with something behind every id the API takes, and tokens of every role;
    ``globex`` with its own memory; Dana, a member of both teams; Bob, a contractor whose tokens
    are limited to project:mobile-app."""
    alice = join(user("alice"), team, "member")
    bob = join(user("bob"), team, "member")
    dana = join(join(user("dana"), team, "member"), other_team, "curator")

    fact = memory_store(team=team, author=alice, content=ALICE_FACT, entities=[ACME]).memory
    # Two stores of one fact: a reinforcement to split out.
    reinforced = memory_store(
        team=team, author=alice, content="Don't cache the acme auth responses.", entities=[ACME]
    ).memory
    memory_store(team=team, author=alice, content="Do not cache the acme auth responses.", entities=[ACME])
    reinforcement = MemoryEvent.objects.for_team(team).get(memory=reinforced, action="reinforced")
    # A changed fact for curators.
    memory_store(team=team, author=alice, content=NODE_18, entities=[ACME])
    memory_store(team=team, author=alice, content=NODE_20, entities=[ACME])
    change = FactChange.objects.for_team(team).get()
    reflection = memory_store(
        team=team,
        content="Acme payments work keeps coming back to the vault job's rotation schedule.",
        kind="reflection",
        entities=[ACME],
    ).memory
    ledger = memory_store(
        team=team, content="The acme ledger exports close at 18:00 UTC.", entities=["project:acme-ledger"]
    ).memory
    mobile = memory_store(
        team=team, content="The mobile app ships through fastlane lanes.", entities=["project:mobile-app"]
    ).memory
    dana_session, _ = session_start(team=team, user=dana, external_id="cc-acme", project=ACME)
    for memory in (fact, mobile):  # established: exported
        for index in range(3):
            feedback_record(memory=memory, signal="helpful", user=voter(index, team))

    globex = memory_store(
        team=other_team,
        content="Globex deploys the web frontend from the main branch.",
        entities=["project:web"],
    ).memory

    def key(person, scopes, *, of=team, projects=()):
        return token_create(user=person, team=of, scopes=scopes, projects=projects)[1]

    keys = {
        role: key(person, ROLE_SCOPES[role])
        for role, person in [("owner", owner), ("curator", curator), ("member", member), ("reader", reader)]
    }
    keys |= {
        "alice": key(alice, ["read", "write"]),
        "outsider": key(outsider, ALL, of=other_team),
        "dana_acme": key(dana, ["read", "write"]),
        "dana_globex": key(dana, ALL, of=other_team),  # the same person, through their other team
        "bob_read": key(bob, ["read"], projects=["project:mobile-app"]),
        "bob": key(bob, ["read", "write"], projects=["project:mobile-app"]),
    }
    return SimpleNamespace(
        team=team,
        other_team=other_team,
        people={"owner": owner, "curator": curator, "member": member, "reader": reader, "outsider": outsider},
        alice=alice,
        bob=bob,
        dana=dana,
        fact=fact,
        reinforced=reinforced,
        reinforcement=reinforcement,
        change=change,
        reflection=reflection,
        ledger=ledger,
        mobile=mobile,
        dana_session=dana_session,
        globex=globex,
        acme_memories=list(Memory.objects.for_team(team)),
        keys=keys,
        api={name: client_with(value) for name, value in keys.items()},
    )


def call(client, method: str, path: str, body: dict | None = None):
    request = getattr(client, method)
    return request(f"/api/v1{path}", body, format="json") if body is not None else request(f"/api/v1{path}")


# --- the outsider: another team's ids answer like missing ones --------------------------------------

# (name, method, path, body): {memory} {reinforced} {event} {change} {session} {own} are filled in.
BY_ID = [
    ("get memory", "get", "/observations/{memory}", None),
    ("patch memory", "patch", "/observations/{memory}", {"priority": "critical"}),
    ("delete memory", "delete", "/observations/{memory}", None),
    ("reinforcements", "get", "/observations/{memory}/reinforcements", None),
    ("split", "post", "/observations/{reinforced}/split", {"reinforcement": "{event}"}),
    ("split another team's event", "post", "/observations/{own}/split", {"reinforcement": "{event}"}),
    ("feedback", "post", "/feedback", {"memory_id": "{memory}", "signal": "harmful"}),
    ("changed fact", "get", "/changed-facts/{change}", None),
    ("resolve changed fact", "post", "/changed-facts/{change}", {"action": "undo"}),
    ("merge entities", "post", "/entities/merge", {"source": ACME, "target": "project:web"}),
    ("get session", "get", "/sessions/{session}", None),
    ("session by agent id", "get", "/sessions/{agent_session}", None),
    ("read messages", "get", "/sessions/{session}/messages", None),
    (
        "append messages",
        "post",
        "/sessions/{session}/messages",
        {"messages": [{"seq": 1, "role": "user", "content": "hi"}]},
    ),
    ("end session", "post", "/sessions/{session}/end", {"success": False}),
]


def fill(value, ids: dict):
    if isinstance(value, str):
        for name, replacement in ids.items():
            if value == "{" + name + "}" and isinstance(replacement, int):
                return replacement
            value = value.replace("{" + name + "}", str(replacement))
        return value
    if isinstance(value, dict):
        return {k: fill(v, ids) for k, v in value.items()}
    return value


class Undo(Exception):
    pass


@contextmanager
def undone():
    """Run one case and undo what it wrote, so every case starts from the same team."""
    try:
        with transaction.atomic():
            yield
            raise Undo
    except Undo:
        pass


@pytest.mark.parametrize("who", ["outsider", "dana_globex"])
def test_another_team_s_id_answers_exactly_like_a_missing_one(acme, who):
    acme_ids = {
        "memory": acme.fact.pk,
        "reinforced": acme.reinforced.pk,
        "event": acme.reinforcement.pk,
        "change": acme.change.pk,
        "session": acme.dana_session.pk,
        "agent_session": "cc-acme",
        "own": acme.globex.pk,
    }
    missing_ids = {
        "memory": uuid.uuid4(),
        "reinforced": uuid.uuid4(),
        "event": 2**31 - 1,
        "change": 2**31 - 1,
        "session": uuid.uuid4(),
        "agent_session": "cc-nowhere",
        "own": acme.globex.pk,
    }
    client = acme.api[who]
    caller = acme.people["outsider"] if who == "outsider" else acme.dana
    for name, method, path, body in BY_ID:
        with undone():
            missing_body = fill(body, missing_ids)
            if name == "merge entities":
                missing_body = {"source": "project:nowhere", "target": "project:web"}

            theirs = call(client, method, fill(path, acme_ids), fill(body, acme_ids))
            missing = call(client, method, fill(path, missing_ids), missing_body)

            assert theirs.status_code == missing.status_code == 404, (name, theirs.content[:300])
            error, nothing = theirs.json()["error"], missing.json()["error"]
            assert error["code"] == nothing["code"] == "NOT_FOUND", name
            assert set(error) == set(nothing), name
            # The messages differ only by the reference asked for (the longest first: an event id's
            # digits may occur in a UUID).
            used = sorted(
                (key for key in acme_ids if "{" + key + "}" in f"{path}{body}"),
                key=lambda key: -len(str(acme_ids[key])),
            )
            for key in used:
                error["message"] = error["message"].replace(str(acme_ids[key]), "<id>")
                nothing["message"] = nothing["message"].replace(str(missing_ids[key]), "<id>")
            error["message"] = error["message"].replace(ACME, "<id>")
            nothing["message"] = nothing["message"].replace("project:nowhere", "<id>")
            assert error["message"] == nothing["message"], name

            # Written down for the caller's team, as what it asked for.
            denied = DeniedAccess.objects.for_team(acme.other_team).filter(surface="api", user=caller)
            assert denied.count() == 2, name
            asked = {str(value) for key, value in acme_ids.items() if key != "own"} | {ACME}
            assert any(attempt.reference in asked for attempt in denied), name
            assert not DeniedAccess.objects.for_team(acme.team).exists(), name

            # And nothing of acme changed.
            assert Memory.objects.filter(pk=acme.fact.pk, priority="moderate").exists(), name
            assert FeedbackEvent.objects.filter(memory=acme.fact).count() == 3, name  # the fixture's
            assert FactChange.objects.get(pk=acme.change.pk).status == "open", name
            assert not MemoryEvent.objects.filter(memory=acme.reinforced, action="split").exists(), name
            session = Session.objects.get(pk=acme.dana_session.pk)
            assert session.ended_at is None and not session.messages.exists(), name
            assert not Memory.objects.for_team(acme.other_team).exclude(pk=acme.globex.pk).exists(), name


READS = [
    ("get", "/observations", None),
    ("get", "/observations?entity=project:acme-payments", None),
    ("get", "/search?q=payment+processor+key+rotation+vault+job", None),
    ("get", "/search?q=acme+payments+key+rotation", None),
    ("post", "/search", {"q": "when does the acme payment key rotate?", "entities": [ACME]}),
    ("post", "/search", {"q": "which Node version do we pin?"}),
    ("get", "/context?q=payment+key+rotation", None),
    ("get", "/context?q=payment+key+rotation&format=json&project=acme-payments", None),
    ("get", "/export", None),
    ("get", "/export?project=acme-payments", None),
    ("get", "/entities", None),
    ("get", "/entities?q=acme", None),
    ("post", "/entities/resolve", {"names": ["acme-payments", ACME, "Acme Payments"]}),
    ("get", "/reflections", None),
    ("get", "/changed-facts", None),
]


def words_of(path: str, body) -> list[str]:
    """The text a request sent (query parameters, body strings), longest first."""
    words = [value for _, value in parse_qsl(urlsplit(path).query)]

    def walk(value) -> None:
        if isinstance(value, str):
            words.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return sorted(set(words), key=len, reverse=True)


def assert_shows_nothing_of(response, memories, asked: list[str]) -> None:
    """Nothing of ``memories`` — ids, text, the slugs of their projects — is in the answer, apart
    from what the caller sent themselves echoed back (a search's query, a name it did not know)."""
    text = response.content.decode()
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        # No entity of the team is reported as known.
        assert body.get("resolved", {}) == {} and body.get("ambiguities", {}) == {}
        assert body.get("entities", []) == [] and body.get("detected_entities", []) == []
    for word in asked:
        text = text.replace(word, "")
    assert "acme-payments" not in text and "acme-ledger" not in text and "vault job" not in text
    for memory in memories:
        assert str(memory.pk) not in text
        assert memory.content[:40] not in text


@pytest.mark.parametrize("who", ["outsider", "dana_globex"])
def test_the_outsider_s_lists_searches_context_and_export_show_nothing_of_the_team(acme, who):
    for method, path, body in READS:
        response = call(acme.api[who], method, path, body)
        assert response.status_code == 200, (path, response.content[:300])
        assert_shows_nothing_of(response, acme.acme_memories, words_of(path, body))


def test_the_outsider_sees_their_own_team_s_memories(acme):
    """Not an empty answer for everyone: the outsider's own team's memory is there."""
    listed = acme.api["outsider"].get("/api/v1/observations").json()["results"]
    assert [memory["id"] for memory in listed] == [str(acme.globex.pk)]
    found = (
        acme.api["outsider"].get("/api/v1/search", {"q": "how does globex deploy the web frontend"}).json()
    )
    assert [hit["memory"]["id"] for hit in found["results"]] == [str(acme.globex.pk)]
    assert [e["slug"] for e in acme.api["outsider"].get("/api/v1/entities").json()["results"]] == [
        "project:web"
    ]


def test_a_store_by_the_outsider_stays_in_their_team(acme):
    """The same text stored by another team is a new memory of that team, never a NOOP or an UPDATE
    of this team's (dedup and supersession compare within one team)."""
    response = acme.api["outsider"].post(
        "/api/v1/observations", {"content": ALICE_FACT, "entities": [ACME]}, format="json"
    )
    assert response.status_code == 201 and response.json()["operation"] == "ADD"
    stored = Memory.objects.get(pk=response.json()["memory"]["id"])
    assert stored.team_id == acme.other_team.pk
    acme.fact.refresh_from_db()
    assert acme.fact.superseded_by_id is None
    assert not MemoryEvent.objects.filter(memory=acme.fact, action="reinforced").exists()
    # Alice's team still sees one memory with that text, its own.
    found = acme.api["member"].get("/api/v1/search", {"q": "payment processor key rotation"}).json()
    ids = [hit["memory"]["id"] for hit in found["results"]]
    assert str(acme.fact.pk) in ids and str(stored.pk) not in ids


def test_a_session_id_of_another_team_starts_a_session_of_the_caller_s_own(acme):
    """Dana's agent session id names a session in acme; through her globex token, registering it
    gives her a new globex session, and nothing of the acme one."""
    response = acme.api["dana_globex"].post(
        "/api/v1/sessions", {"session_id": "cc-acme", "agent": "claude-code"}, format="json"
    )
    assert response.status_code == 201 and response.json()["id"] != str(acme.dana_session.pk)
    assert Session.objects.get(pk=response.json()["id"]).team_id == acme.other_team.pk
    searched = acme.api["dana_globex"].get(
        "/api/v1/search", {"q": "payment key rotation", "session_id": str(acme.dana_session.pk)}
    )
    assert searched.status_code == 200 and searched.json()["results"] == []
    assert not acme.dana_session.recalls.exists()


# --- the team's own people, by role -------------------------------------------------------------

R, W, C = "read", "write", "curate"
TEAM_ENDPOINTS = [
    # (method, path, body, scope, success)
    ("get", "/observations", None, R, 200),
    ("get", "/observations/{memory}", None, R, 200),
    ("get", "/observations/{memory}/reinforcements", None, R, 200),
    ("post", "/observations", {"content": "Acme runs ruff before every push.", "entities": [ACME]}, W, 201),
    ("post", "/observations/batch", {"items": [{"content": "Acme runs mypy before every push."}]}, W, 201),
    ("patch", "/observations/{memory}", {"priority": "critical"}, C, 200),
    ("delete", "/observations/{memory}", None, C, 204),
    ("post", "/observations/{reinforced}/split", {"reinforcement": "{event}"}, C, 201),
    ("get", "/search?q=payment+key+rotation", None, R, 200),
    ("get", "/context?q=payment+key+rotation", None, R, 200),
    ("get", "/export", None, R, 200),
    ("post", "/feedback", {"memory_id": "{memory}", "signal": "helpful"}, W, 201),
    ("get", "/entities", None, R, 200),
    ("post", "/entities/resolve", {"names": ["acme-payments"]}, R, 200),
    ("post", "/entities/merge", {"source": "project:acme-ledger", "target": ACME}, C, 200),
    ("get", "/reflections", None, R, 200),
    ("get", "/changed-facts", None, C, 200),
    ("get", "/changed-facts/{change}", None, C, 200),
    ("post", "/changed-facts/{change}", {"action": "confirm"}, C, 200),
    ("post", "/sessions", {"session_id": "s-new", "agent": "claude-code", "project": ACME}, W, 201),
    ("get", "/sessions/s-own", None, R, 200),
    ("get", "/sessions/s-own/messages", None, R, 200),
    ("post", "/sessions/s-own/messages", {"messages": [{"seq": 1, "role": "user", "content": "hi"}]}, W, 200),
    ("post", "/sessions/s-own/end", {"success": True}, W, 202),
]


@pytest.mark.parametrize("role", ["owner", "curator", "member", "reader"])
def test_every_role_of_the_team_gets_what_its_role_allows(acme, role):
    session_start(team=acme.team, user=acme.people[role], external_id="s-own")
    ids = {"memory": acme.fact.pk, "reinforced": acme.reinforced.pk, "event": acme.reinforcement.pk}
    ids["change"] = acme.change.pk
    for method, path, body, scope, success in TEAM_ENDPOINTS:
        with undone():
            response = call(acme.api[role], method, fill(path, ids), fill(body, ids))
            expected = success if scope in ROLE_SCOPES[role] else 403
            assert response.status_code == expected, (method, path, response.content[:300])
            if expected == 403:
                assert response.json()["error"]["code"] == "PERMISSION_DENIED"
    assert not DeniedAccess.objects.exists()


def test_a_reader_s_token_cannot_write_anything(acme):
    reader = acme.api["reader"]
    before = Memory.objects.count()
    refused = [
        reader.post("/api/v1/observations", {"content": "Readers cannot store this."}, format="json"),
        reader.post("/api/v1/observations/batch", {"items": [{"content": "Nor this."}]}, format="json"),
        reader.post("/api/v1/feedback", {"memory_id": str(acme.fact.pk), "signal": "harmful"}, format="json"),
        reader.post("/api/v1/sessions", {"session_id": "s-reader"}, format="json"),
        reader.patch(f"/api/v1/observations/{acme.fact.pk}", {"priority": "critical"}, format="json"),
    ]
    assert [response.status_code for response in refused] == [403] * 5
    assert "'write' scope" in refused[0].json()["error"]["message"]
    assert Memory.objects.count() == before
    assert not FeedbackEvent.objects.filter(user=acme.people["reader"]).exists()
    assert not Session.objects.filter(external_id="s-reader").exists()


def test_a_token_never_exceeds_its_member_s_role(team, reader, member):
    """Scopes never exceed the role: asking for more is refused when the token is made."""
    from memory.services.tokens import InvalidScopes

    with pytest.raises(InvalidScopes):
        token_create(user=reader, scopes=["read", "write"])
    with pytest.raises(InvalidScopes):
        token_create(user=member, scopes=ALL)


def test_a_demoted_member_s_tokens_shrink_at_once(acme):
    curator = acme.api["curator"]
    url = f"/api/v1/observations/{acme.fact.pk}"
    assert curator.patch(url, {"priority": "critical"}, format="json").status_code == 200
    membership = acme.people["curator"].memberships.get(team=acme.team)
    teams.member_set_role(membership=membership, role="member")
    assert curator.patch(url, {"priority": "moderate"}, format="json").status_code == 403
    assert (
        curator.post("/api/v1/observations", {"content": "Still a writer."}, format="json").status_code == 201
    )
    teams.member_set_role(membership=membership, role="reader")
    assert (
        curator.post("/api/v1/observations", {"content": "Not any more."}, format="json").status_code == 403
    )
    assert curator.get(url).status_code == 200


def test_a_member_removed_from_the_team_gets_401_at_once(acme):
    member = acme.api["member"]
    assert member.get("/api/v1/observations").status_code == 200
    teams.member_remove(membership=acme.people["member"].memberships.get(team=acme.team))
    response = member.get("/api/v1/observations")
    assert response.status_code == 401 and response.json()["error"]["code"] == "AUTHENTICATION_FAILED"
    assert member.get(f"/api/v1/observations/{acme.fact.pk}").status_code == 401


def test_removing_a_member_of_two_teams_keeps_their_other_team_s_tokens(acme):
    teams.member_remove(membership=acme.dana.memberships.get(team=acme.team))
    assert acme.api["dana_acme"].get("/api/v1/observations").status_code == 401
    assert acme.api["dana_globex"].get("/api/v1/observations").status_code == 200


# --- a project-limited token --------------------------------------------------------------------


def test_alice_s_memory_is_invisible_to_bob_s_token_of_another_project(acme):
    """The issue's case: Alice stores under project:acme-payments; Bob's read-only token, made for
    project:mobile-app, gets nothing of it — by id, by search, in context or export."""
    alice_stored = acme.api["alice"].post(
        "/api/v1/observations",
        {
            "content": "Acme's refunds over 10,000 EUR need a second approver in the vault.",
            "entities": [ACME],
        },
        format="json",
    )
    assert alice_stored.status_code == 201
    hidden = [acme.fact, Memory.objects.get(pk=alice_stored.json()["memory"]["id"]), acme.ledger]
    bob = acme.api["bob_read"]
    for memory in hidden:
        missing = bob.get(f"/api/v1/observations/{memory.pk}")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
        assert bob.get(f"/api/v1/observations/{memory.pk}/reinforcements").status_code == 404
    for method, path, body in READS:
        response = call(bob, method, path, body)
        if path == "/changed-facts":  # a read-only token: 403
            assert response.status_code == 403
            continue
        assert response.status_code == 200, (path, response.content[:300])
        assert_shows_nothing_of(response, hidden, words_of(path, body))
    # What Bob's token does see: the mobile app's memory, and only it.
    listed = bob.get("/api/v1/observations").json()["results"]
    assert [memory["id"] for memory in listed] == [str(acme.mobile.pk)]
    found = bob.get("/api/v1/search", {"q": "how does the mobile app ship?"}).json()["results"]
    assert [hit["memory"]["id"] for hit in found] == [str(acme.mobile.pk)]
    assert "fastlane" in bob.get("/api/v1/export").content.decode()  # established, so exported
    assert "fastlane" in bob.get("/api/v1/context", {"q": "ship the mobile app"}).content.decode()
    entities = [e["slug"] for e in bob.get("/api/v1/entities").json()["results"]]
    assert entities == ["project:mobile-app"]
    assert bob.get(f"/api/v1/observations/{acme.mobile.pk}").status_code == 200
    assert DeniedAccess.objects.for_team(acme.team).filter(user=acme.bob).count() == 2 * len(hidden)
    # The same memory by Alice's token (the whole team) is there.
    assert acme.api["alice"].get(f"/api/v1/observations/{acme.fact.pk}").status_code == 200


def test_a_project_limited_token_stores_only_in_its_projects(acme):
    bob = acme.api["bob"]
    before = Memory.objects.count()
    for body in (
        {"content": "Release builds need the signing key from the vault."},  # about no project
        {"content": "Payment retries back off exponentially.", "entities": [ACME]},  # another project
        {"content": "Both apps share the retry helper.", "entities": ["project:mobile-app", ACME]},
    ):
        refused = bob.post("/api/v1/observations", body, format="json")
        assert refused.status_code == 400, refused.content[:300]
        error = refused.json()["error"]
        assert error["code"] == "VALIDATION_ERROR" and list(error["fields"]) == ["entities"]
        assert "limited to the projects project:mobile-app" in error["message"]
    batch = bob.post(
        "/api/v1/observations/batch",
        {
            "items": [
                {"content": "Mobile crash reports go to Sentry.", "entities": ["project:mobile-app"]},
                {"content": "Nightly jobs run at 02:00."},
            ]
        },
        format="json",
    )
    assert batch.status_code == 400 and list(batch.json()["error"]["fields"]) == ["items[1].entities"]
    assert Memory.objects.count() == before  # all or nothing
    stored = bob.post(
        "/api/v1/observations",
        {"content": "Mobile crash reports go to Sentry.", "entities": ["project:mobile-app"]},
        format="json",
    )
    assert stored.status_code == 201 and stored.json()["memory"]["entities"] == ["project:mobile-app"]
    # A store whose text names the project (detected, not listed) is about it too.
    detected = bob.post(
        "/api/v1/observations", {"content": "The Mobile App build caches pods between runs."}, format="json"
    )
    assert detected.status_code == 201, detected.content[:300]
    assert detected.json()["memory"]["entities"] == ["project:mobile-app"]


def test_a_project_limited_token_s_sessions_are_of_its_projects(acme):
    bob = acme.api["bob"]
    refused = bob.post("/api/v1/sessions", {"session_id": "s-1", "project": ACME}, format="json")
    assert refused.status_code == 400 and list(refused.json()["error"]["fields"]) == ["project"]
    assert "limited to the projects project:mobile-app" in refused.json()["error"]["message"]
    created = bob.post("/api/v1/sessions", {"session_id": "s-2", "project": "mobile-app"}, format="json")
    assert created.status_code == 201 and created.json()["project"] == "project:mobile-app"
    unnamed = bob.post("/api/v1/sessions", {"session_id": "s-3"}, format="json")
    assert unnamed.status_code == 201 and unnamed.json()["project"] == "project:mobile-app"
    # A session started on first use (search with a new session id) is of its project too.
    bob.get("/api/v1/search", {"q": "crash reports", "session_id": "s-4"})
    assert Session.objects.get(user=acme.bob, external_id="s-4").project.slug == "project:mobile-app"
    # Bob's session of another project, registered through a whole-team token, is not this token's.
    whole = client_with(token_create(user=acme.bob, scopes=["read", "write"])[1])
    assert (
        whole.post("/api/v1/sessions", {"session_id": "s-acme", "project": ACME}, format="json").status_code
        == 201
    )
    assert bob.get("/api/v1/sessions/s-acme").status_code == 404
    assert bob.post("/api/v1/sessions/s-acme/end", {}, format="json").status_code == 404


# --- a dashboard session calling the API ----------------------------------------------------------


def test_a_dashboard_session_reads_its_current_team(client, acme):
    client.force_login(acme.dana)  # a member of acme and a curator of globex
    first = client.get("/api/v1/observations").json()["results"]  # the first team by slug: acme
    assert str(acme.fact.pk) in [memory["id"] for memory in first]
    session = client.session
    session["team"] = "globex"
    session.save()
    switched = client.get("/api/v1/observations")
    assert [memory["id"] for memory in switched.json()["results"]] == [str(acme.globex.pk)]
    assert client.get(f"/api/v1/observations/{acme.fact.pk}").status_code == 404


def test_a_signed_in_user_of_no_team_is_refused(client, db):
    client.force_login(user("nobody"))
    response = client.get("/api/v1/observations")
    assert response.status_code == 403 and "not a member of any team" in response.json()["error"]["message"]


# --- the second wall ------------------------------------------------------------------------------


def test_a_view_that_forgot_the_team_filter_still_shows_nothing_of_another_team(acme, monkeypatch, settings):
    """With ROW_LEVEL_SECURITY on, the API acts for its caller's team under row-level security
    (DESIGN.md §11): were a view to read every team's memories, the database would still return only
    the caller's."""
    from memory.services.teams import row_security_available

    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "ROW_LEVEL_SECURITY": True}
    assert row_security_available()
    import api.access

    monkeypatch.setattr(api.access, "team_memories", lambda caller: Memory.objects.all())
    outsider = acme.api["outsider"]
    assert outsider.get(f"/api/v1/observations/{acme.fact.pk}").status_code == 404
    listed = outsider.get("/api/v1/observations").json()["results"]
    assert [memory["id"] for memory in listed] == [str(acme.globex.pk)]
    # The same forgetful view, for the team itself, shows the team's memory.
    assert acme.api["member"].get(f"/api/v1/observations/{acme.fact.pk}").status_code == 200
