"""The MCP server at /mcp through the real MCP SDK client over streamable HTTP, against a live
server process (uvicorn + memorylane.asgi) on the test database."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.integrations.conftest import api, uvicorn_server

pytestmark = pytest.mark.slow

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def session(base: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http))


def run(coroutine):
    return asyncio.run(coroutine)


def post_mcp(base: str, headers: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        f"{base}/mcp",
        data=json.dumps(INITIALIZE).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_it_answers_401_without_a_valid_token(lane_server, tokens):
    for headers in ({}, {"Authorization": "Bearer ml_nope_nope"}, {"Authorization": "Basic eDp5"}):
        status, response_headers, body = post_mcp(lane_server, headers)
        assert status == 401
        assert response_headers["www-authenticate"].startswith("Bearer ")
        assert body["error"] == "invalid_token"
    status, _, body = post_mcp(lane_server, {"Authorization": f"Bearer {tokens['member']}"})
    assert status == 200 and body["result"]["serverInfo"]["name"] == "memory-lane"


def test_it_lists_the_tools_with_typed_described_arguments_and_the_export_resource(lane_server, tokens):
    async def scenario():
        async with session(lane_server, tokens["member"]) as client:
            return await client.list_tools(), await client.list_resources()

    tools, resources = run(scenario())
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {
        "memory_lane_find",
        "memory_lane_store",
        "memory_lane_feedback",
        "memory_lane_context",
        "semantic_memory_find",
        "semantic_memory_store",
    }
    store = by_name["memory_lane_store"].input_schema
    assert store["required"] == ["information", "type"]
    assert "correction" in json.dumps(store["properties"]["type"])
    assert all(prop.get("description") for prop in store["properties"].values())
    assert "type" not in by_name["semantic_memory_store"].input_schema["properties"]
    assert set(by_name["memory_lane_find"].input_schema["properties"]) == {"query", "entities", "limit"}
    assert set(by_name["memory_lane_feedback"].input_schema["required"]) == {"id", "signal"}
    assert by_name["memory_lane_find"].output_schema["type"] == "object"
    assert [str(r.uri) for r in resources.resources] == ["memory://export/MEMORY.md"]


def test_store_then_find_returns_the_rest_api_shapes(lane_server, tokens):
    async def scenario():
        async with session(lane_server, tokens["member"]) as client:
            stored = await client.call_tool(
                "memory_lane_store",
                {
                    "information": "Never call stripe.Charge.create directly; go through payments/gateway.py.",
                    "type": "correction",
                    "entities": ["project:billing-api"],
                    "tags": ["stripe"],
                    "category": "gotcha",
                    "priority": "critical",
                },
            )
            again = await client.call_tool(
                "memory_lane_store",
                {
                    "information": "Never call stripe.Charge.create directly; go through payments/gateway.py.",
                    "type": "correction",
                },
            )
            learned = await client.call_tool(
                "semantic_memory_store", {"information": "The staging database is reset every Sunday night."}
            )
            found = await client.call_tool(
                "memory_lane_find", {"query": "what mistake did we make with stripe?"}
            )
            alias = await client.call_tool(
                "semantic_memory_find", {"query": "staging database reset", "limit": 1}
            )
            return stored, again, learned, found, alias

    stored, again, learned, found, alias = run(scenario())
    assert not stored.is_error
    memory = stored.structured_content["memory"]
    assert stored.structured_content["operation"] == "ADD"
    assert memory["type"] == "correction" and memory["priority"] == "critical"
    assert memory["entities"] == ["project:billing-api"] and memory["author"] == "ada"
    assert memory["agent_name"] == "mcp"
    assert json.loads(stored.content[0].text) == stored.structured_content  # text is the same JSON
    assert again.structured_content["operation"] == "NOOP"
    assert learned.structured_content["memory"]["type"] == "learning"

    results = found.structured_content["results"]
    assert results[0]["memory"]["id"] == memory["id"]
    assert set(results[0]) == {"memory", "score", "explain"} and "similarity" in json.dumps(
        results[0]["explain"]
    )
    assert "correction" in found.structured_content["intent_types"]
    status, rest = api(lane_server, tokens["member"], "GET", "/search", query="?q=stripe+mistake")
    assert status == 200 and set(rest) == set(found.structured_content)
    assert set(rest["results"][0]["memory"]) == set(results[0]["memory"])
    assert alias.structured_content["results"][0]["memory"]["content"].startswith("The staging database")


def test_feedback_context_and_the_export_resource(lane_server, tokens):
    status, body = api(
        lane_server,
        tokens["member"],
        "POST",
        "/observations",
        {"content": "Run migrations with --plan before applying them in production.", "priority": "critical"},
    )
    assert status == 201
    memory_id = body["memory"]["id"]

    async def scenario():
        async with session(lane_server, tokens["member"]) as client:
            rated = await client.call_tool(
                "memory_lane_feedback", {"id": memory_id, "signal": "helpful", "note": "saved a deploy"}
            )
            missing = await client.call_tool(
                "memory_lane_feedback", {"id": "00000000-0000-0000-0000-000000000000", "signal": "helpful"}
            )
            context = await client.call_tool("memory_lane_context", {"query": "deploy the migrations"})
            exported = await client.read_resource("memory://export/MEMORY.md")
            return rated, missing, context, exported

    rated, missing, context, exported = run(scenario())
    assert not rated.is_error
    assert rated.structured_content["event"]["signal"] == "helpful"
    assert rated.structured_content["memory"]["helpful_count"] == 1
    assert rated.structured_content["memory"]["feedback_score"] == pytest.approx(1.1)
    assert missing.is_error and missing.structured_content["error"]["code"] == "NOT_FOUND"

    assert not context.is_error
    assert set(context.structured_content) == {"markdown", "items", "budget_tokens", "used_tokens"}
    assert context.structured_content["items"][0] == {
        "section": "critical",
        "memory": context.structured_content["items"][0]["memory"],
    }
    assert memory_id in context.structured_content["markdown"]
    assert context.structured_content["markdown"].startswith('<team-memory source="memory-lane">')

    content = exported.contents[0]
    assert content.mime_type == "text/markdown"
    assert content.text.startswith("# Team memory")


def test_an_ambiguous_entity_is_a_tool_error_that_lists_the_candidates(lane_server, tokens):
    for slug, content in (
        ("person:mark-robinson", "Mark Robinson reviews every change to the billing schema."),
        ("person:mark-smith", "Ask Mark Smith before touching the CI runners; he owns their images."),
    ):
        status, _ = api(
            lane_server, tokens["member"], "POST", "/observations", {"content": content, "entities": [slug]}
        )
        assert status == 201

    async def scenario():
        async with session(lane_server, tokens["member"]) as client:
            return await client.call_tool(
                "memory_lane_find", {"query": "who reviews schema changes", "entities": ["Mark"]}
            )

    result = run(scenario())
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "CLARIFICATION_REQUIRED"
    assert error["ambiguities"] == {"Mark": ["person:mark-robinson", "person:mark-smith"]}
    text = result.content[0].text
    assert "person:mark-robinson" in text and "person:mark-smith" in text and "full slug" in text


def test_invalid_arguments_and_missing_scopes_are_tool_errors(lane_server, tokens):
    async def scenario():
        async with session(lane_server, tokens["read_only"]) as client:
            denied = await client.call_tool("memory_lane_store", {"information": "x y z", "type": "decision"})
            empty = await client.call_tool("memory_lane_find", {"query": ""})
            wrong_type = await client.call_tool("memory_lane_store", {"information": "x", "type": "rumour"})
            return denied, empty, wrong_type

    denied, empty, wrong_type = run(scenario())
    assert denied.is_error and denied.structured_content["error"]["code"] == "PERMISSION_DENIED"
    assert "'write' scope" in denied.content[0].text
    assert empty.is_error and empty.structured_content["error"]["code"] == "VALIDATION_ERROR"
    assert "q" in empty.structured_content["error"]["fields"]
    assert wrong_type.is_error  # refused by the input schema before any database work


def test_the_mcp_endpoint_works_when_the_server_runs_without_lifespan_events(
    test_database_url, tmp_path, tokens
):
    """`make run` starts uvicorn with --lifespan off: the first request starts the session manager."""
    with uvicorn_server(test_database_url, tmp_path / "uvicorn.log", lifespan="off") as base:

        async def scenario():
            async with session(base, tokens["member"]) as client:
                return await client.list_tools(), await client.read_resource("memory://export/MEMORY.md")

        tools, exported = run(scenario())
    assert len(tools.tools) == 6
    assert exported.contents[0].text.startswith("# Team memory")


def test_tool_calls_share_the_token_s_rate_limit_with_the_rest_api(test_database_url, tmp_path, tokens):
    env = {"MEMORYLANE_THROTTLE_RATE": "3/min"}
    with uvicorn_server(test_database_url, tmp_path / "uvicorn.log", extra_env=env) as base:
        assert api(base, tokens["member"], "GET", "/observations")[0] == 200  # one REST request

        async def scenario():
            async with session(base, tokens["member"]) as client:
                return [await client.call_tool("memory_lane_find", {"query": "deploys"}) for _ in range(3)]

        results = run(scenario())
    assert [r.is_error for r in results] == [False, False, True]
    assert results[2].structured_content["error"]["code"] == "THROTTLED"


def test_unknown_arguments_are_refused_naming_them_and_stores_explain_their_decision(lane_server, tokens):
    async def scenario():
        async with session(lane_server, tokens["member"]) as client:
            typo = await client.call_tool(
                "memory_lane_store",
                {
                    "information": "Always pin Node 18 for billing.",
                    "type": "decision",
                    "entites": ["project:x"],
                },
            )
            first = await client.call_tool(
                "memory_lane_store",
                {"information": "Always pin Node 18 for the billing service.", "type": "decision"},
            )
            changed = await client.call_tool(
                "memory_lane_store",
                {"information": "Always pin Node 20 for the billing service.", "type": "decision"},
            )
            return typo, first, changed

    typo, first, changed = run(scenario())
    assert typo.is_error and typo.structured_content["error"]["code"] == "VALIDATION_ERROR"
    assert "entites → entities?" in typo.structured_content["error"]["fields"]["entites"][0]
    assert first.structured_content["decision"]["operation"] == "ADD"
    decision = changed.structured_content["decision"]
    assert decision["operation"] == "UPDATE" and decision["reason"] == "version changed: 18 → 20"
    assert decision["compared_with"] == first.structured_content["memory"]["id"]

    # Once a curator approved it, the same member's agent only proposes a change of it.
    from django.contrib.auth import get_user_model

    from memory.models import Memory
    from memory.services.curation import memory_approve

    settled = Memory.objects.get(pk=changed.structured_content["memory"]["id"])
    memory_approve(memory=settled, actor=get_user_model().objects.create_user(username="cleo"))

    async def propose():
        async with session(lane_server, tokens["member"]) as client:
            return await client.call_tool(
                "memory_lane_store",
                {"information": "Always pin Node 22 for the billing service.", "type": "decision"},
            )

    proposed = run(propose()).structured_content
    assert proposed["operation"] == "PROPOSED" and proposed["proposal_for"] == str(settled.pk)
    assert proposed["memory"]["status"] == "pending_review"
    settled.refresh_from_db()
    assert settled.superseded_by is None


def test_memlane_mcp_relays_over_stdio_and_ties_tool_calls_to_the_agent_session(
    lane_server, tokens, memlane_env, tmp_path
):
    """What Claude Code runs from .mcp.json: `memlane mcp` over stdio, with the session the
    SessionStart hook recorded for this directory; stores and finds belong to that session."""
    from mcp.client.stdio import StdioServerParameters

    from memory.models import Memory, Recall
    from tests.integrations.conftest import MEMLANE, hook_payload, run_memlane

    project = tmp_path / "billing-api"
    project.mkdir()
    start = hook_payload("session_start", session_id="cc-mcp-1", cwd=str(project), source="startup")
    started, _ = run_memlane(
        ["hook", "session-start"], memlane_env, stdin=json.dumps(start), cwd=str(project)
    )
    assert started.returncode == 0, started.stderr

    async def scenario():
        server = StdioServerParameters(command=MEMLANE, args=["mcp"], env=memlane_env, cwd=str(project))
        async with Client(server) as client:
            tools = await client.list_tools()
            stored = await client.call_tool(
                "memory_lane_store",
                {"information": "The billing API pins Node 20 in CI.", "type": "decision"},
            )
            found = await client.call_tool("memory_lane_find", {"query": "which Node does billing pin?"})
            return tools, stored, found

    tools, stored, found = run(scenario())
    assert "memory_lane_store" in {tool.name for tool in tools.tools}
    assert not stored.is_error, stored.content
    memory = Memory.objects.get(pk=stored.structured_content["memory"]["id"])
    assert memory.session.external_id == "cc-mcp-1" and memory.agent_name == "claude-code"
    assert found.structured_content["results"][0]["memory"]["id"] == str(memory.pk)
    assert Recall.objects.filter(session=memory.session, memory=memory).exists()

    # The server down: each request gets a JSON-RPC error saying so, and the relay keeps serving.
    down = {**memlane_env, "MEMLANE_URL": "http://127.0.0.1:9"}
    lines = json.dumps(INITIALIZE) + "\n" + json.dumps({**INITIALIZE, "id": 2}) + "\n"
    relayed, _ = run_memlane(["mcp"], down, stdin=lines, cwd=str(project))
    replies = [json.loads(line) for line in relayed.stdout.splitlines()]
    assert relayed.returncode == 0 and [reply["id"] for reply in replies] == [1, 2]
    assert all("unreachable" in reply["error"]["message"] for reply in replies)


# --- the wall between teams (DESIGN.md §11) --------------------------------------------------------

ACME_FACT = "Acme's payment processor key rotation happens on the 3rd of each month via the vault job."


def other_team_token(username: str, *, role: str = "owner", scopes=("read", "write", "curate"), projects=()):
    """A committed token of a member of another team (globex), or of ``acme`` with ``projects``."""
    from django.contrib.auth import get_user_model

    from memory.models import Team
    from memory.services.tokens import token_create
    from tests.conftest import join

    slug = "acme" if projects else "globex"
    team = Team.objects.get_or_create(slug=slug, defaults={"name": slug.title()})[0]
    person = join(get_user_model().objects.create_user(username=username), team, role)
    return token_create(user=person, team=team, scopes=list(scopes), projects=projects)[1]


def test_an_outsider_s_tools_and_resource_reach_nothing_of_another_team(lane_server, tokens):
    from memory.models import DeniedAccess, FeedbackEvent, Memory

    status, body = api(
        lane_server,
        tokens["member"],
        "POST",
        "/observations",
        {"content": ACME_FACT, "entities": ["project:acme-payments"], "priority": "critical"},
    )
    assert status == 201
    acme_id = body["memory"]["id"]
    outsider = other_team_token("otto")

    async def scenario():
        async with session(lane_server, outsider) as client:
            return {
                "find": await client.call_tool(
                    "memory_lane_find", {"query": "payment processor key rotation"}
                ),
                "alias": await client.call_tool(
                    "semantic_memory_find", {"query": "when do acme keys rotate"}
                ),
                "by_entity": await client.call_tool(
                    "memory_lane_find", {"query": "key rotation", "entities": ["project:acme-payments"]}
                ),
                "theirs": await client.call_tool(
                    "memory_lane_feedback", {"id": acme_id, "signal": "harmful"}
                ),
                "missing": await client.call_tool(
                    "memory_lane_feedback",
                    {"id": "00000000-0000-0000-0000-000000000000", "signal": "harmful"},
                ),
                "context": await client.call_tool(
                    "memory_lane_context", {"query": "payment key rotation", "project": "acme-payments"}
                ),
                "export": await client.read_resource("memory://export/MEMORY.md"),
                "store": await client.call_tool(
                    "memory_lane_store",
                    {"information": ACME_FACT, "type": "insight", "entities": ["project:acme-payments"]},
                ),
            }

    results = run(scenario())
    for name in ("find", "alias", "by_entity", "context"):
        assert not results[name].is_error, results[name].content
        text = json.dumps(results[name].structured_content)
        assert acme_id not in text and "vault job" not in text, name
    assert results["find"].structured_content["results"] == []
    assert results["by_entity"].structured_content["unknown_entities"] == ["project:acme-payments"]
    assert results["context"].structured_content["items"] == []
    assert "vault job" not in results["export"].contents[0].text

    # Another team's id is refused exactly like a missing one, and the attempt is written down.
    theirs, missing = results["theirs"], results["missing"]
    assert theirs.is_error and missing.is_error
    assert (
        theirs.structured_content["error"]["code"]
        == missing.structured_content["error"]["code"]
        == "NOT_FOUND"
    )
    assert theirs.structured_content["error"]["message"].replace(
        acme_id, "<id>"
    ) == missing.structured_content["error"]["message"].replace(
        "00000000-0000-0000-0000-000000000000", "<id>"
    )
    assert not FeedbackEvent.objects.filter(memory_id=acme_id).exists()
    attempts = DeniedAccess.objects.filter(surface="mcp", team__slug="globex", user__username="otto")
    assert sorted(attempt.reference for attempt in attempts) == sorted(
        [acme_id, "00000000-0000-0000-0000-000000000000"]
    )

    # The same text stored through the outsider's token is a memory of their own team, not a NOOP.
    stored = results["store"].structured_content
    assert stored["operation"] == "ADD" and stored["memory"]["id"] != acme_id
    assert Memory.objects.get(pk=stored["memory"]["id"]).team.slug == "globex"
    status, found = api(lane_server, tokens["member"], "GET", "/search", query="?q=payment+key+rotation")
    assert status == 200 and [hit["memory"]["id"] for hit in found["results"]] == [acme_id]


def test_a_project_limited_token_finds_and_stores_only_in_its_projects(lane_server, tokens):
    for content, project in (
        (ACME_FACT, "project:acme-payments"),
        ("The mobile app ships with fastlane.", "project:mobile-app"),
    ):
        status, _ = api(
            lane_server,
            tokens["member"],
            "POST",
            "/observations",
            {"content": content, "entities": [project]},
        )
        assert status == 201
    contractor = other_team_token(
        "bob", role="member", scopes=("read", "write"), projects=["project:mobile-app"]
    )

    async def scenario():
        async with session(lane_server, contractor) as client:
            return (
                await client.call_tool("memory_lane_find", {"query": "payment processor key rotation vault"}),
                await client.call_tool("memory_lane_find", {"query": "how does the mobile app ship?"}),
                await client.call_tool(
                    "semantic_memory_store", {"information": "Release notes go out on Fridays."}
                ),
                await client.call_tool(
                    "memory_lane_store",
                    {
                        "information": "Crash reports go to Sentry.",
                        "type": "insight",
                        "entities": ["project:mobile-app"],
                    },
                ),
            )

    other, own, unscoped, scoped = run(scenario())
    assert "vault job" not in json.dumps(other.structured_content)
    assert [hit["memory"]["content"] for hit in own.structured_content["results"]] == [
        "The mobile app ships with fastlane."
    ]
    error = unscoped.structured_content["error"]
    assert unscoped.is_error and error["code"] == "VALIDATION_ERROR" and list(error["fields"]) == ["entities"]
    assert "limited to the projects project:mobile-app" in error["message"]
    assert not scoped.is_error and scoped.structured_content["memory"]["entities"] == ["project:mobile-app"]
