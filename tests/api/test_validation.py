"""Bad input gets a clear error in one shape and changes nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.conf import settings

from api.parsers import LimitedJSONParser, PayloadTooLarge
from memory.models import FeedbackEvent, Memory
from memory.services.store import memory_store

pytestmark = pytest.mark.usefixtures("embedder")


def error_of(response, status: int) -> dict:
    assert response.status_code == status, response.content[:500]
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"])
    return body["error"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "ok", "type": "rumour"}, "type"),
        ({"content": "ok", "category": "misc"}, "category"),
        ({"content": "ok", "priority": "soon"}, "priority"),
        ({"content": "ok", "confidence": 101}, "confidence"),
        ({"content": "ok", "confidence": "high"}, "confidence"),
        ({"content": "ok", "entities": [f"feature:f{i}" for i in range(21)]}, "entities"),
        ({"content": "ok", "entities": "project:x"}, "entities"),
        ({"content": "ok", "tags": [f"t{i}" for i in range(21)]}, "tags"),
        ({"content": "ok", "tags": ["x" * 65]}, "tags[0]"),
        ({"content": "ok\x00null"}, "content"),
        ({"content": "ok", "valid_from": "yesterday"}, "valid_from"),
        ({"content": ["not", "text"]}, "content"),
    ],
)
def test_storing_invalid_memories_names_the_field_and_stores_nothing(api, body, field):
    error = error_of(api["member"].post("/api/v1/observations", body, format="json"), 400)
    assert error["code"] == "VALIDATION_ERROR"
    assert any(name == field or name.startswith(field) for name in error["fields"]), error
    assert not Memory.objects.exists()


def test_content_over_the_limit_is_refused_with_its_own_code(api):
    error = error_of(api["member"].post("/api/v1/observations", {"content": "x" * 8001}, format="json"), 400)
    assert error["code"] == "CONTENT_TOO_LARGE" and "content" in error["fields"]


def test_a_batch_with_one_bad_item_stores_none(api):
    body = {
        "items": [{"content": "Good memory about queues."}, {"content": ""}, {"content": "Another good one."}]
    }
    error = error_of(api["member"].post("/api/v1/observations/batch", body, format="json"), 400)
    assert "items[1].content" in error["fields"]
    assert not Memory.objects.exists()
    too_many = {"items": [{"content": f"memory {i}"} for i in range(101)]}
    assert (
        "items"
        in error_of(api["member"].post("/api/v1/observations/batch", too_many, format="json"), 400)["fields"]
    )


@pytest.mark.parametrize(
    "params,field",
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "x", "limit": 51}, "limit"),
        ({"q": "x", "limit": 0}, "limit"),
        ({"q": "x", "limit": "ten"}, "limit"),
        ({"q": "x", "type": "rumour"}, "type"),
        ({"q": "x" * 2001}, "q"),
    ],
)
def test_bad_searches_are_refused(api, params, field):
    error = error_of(api["member"].get("/api/v1/search", params), 400)
    assert field in error["fields"]


@pytest.mark.parametrize(
    "params,field",
    [
        ({"budget_tokens": 10}, "budget_tokens"),
        ({"budget_tokens": 10**6}, "budget_tokens"),
        ({"format": "pdf"}, "format"),
        ({"session_id": "s" * 201}, "session_id"),
    ],
)
def test_bad_context_requests_are_refused(api, params, field):
    assert field in error_of(api["member"].get("/api/v1/context", params), 400)["fields"]


def test_feedback_validation_and_unknown_memories(api, memory):
    assert (
        "signal"
        in error_of(
            api["member"].post(
                "/api/v1/feedback", {"memory_id": str(memory.pk), "signal": "meh"}, format="json"
            ),
            400,
        )["fields"]
    )
    assert (
        "memory_id"
        in error_of(
            api["member"].post("/api/v1/feedback", {"memory_id": "42", "signal": "helpful"}, format="json"),
            400,
        )["fields"]
    )
    error = error_of(
        api["member"].post(
            "/api/v1/feedback",
            {"memory_id": "00000000-0000-4000-8000-000000000000", "signal": "helpful"},
            format="json",
        ),
        404,
    )
    assert error["code"] == "NOT_FOUND"
    assert not FeedbackEvent.objects.exists()


def test_patch_validation(api, memory):
    url = f"/api/v1/observations/{memory.pk}"
    error_of(api["curator"].patch(url, {}, format="json"), 400)
    assert (
        "reason"
        in error_of(api["curator"].patch(url, {"maturity": "deprecated"}, format="json"), 400)["fields"]
    )
    assert (
        "category" in error_of(api["curator"].patch(url, {"category": "misc"}, format="json"), 400)["fields"]
    )
    memory.refresh_from_db()
    assert (memory.category, memory.maturity) == ("gotcha", "candidate")
    error_of(api["curator"].get("/api/v1/observations/00000000-0000-4000-8000-000000000000"), 404)
    error_of(api["curator"].get("/api/v1/observations/not-a-uuid"), 404)


def test_an_ambiguous_name_asks_for_clarification(api, team):
    memory_store(team=team, content="Mark Robinson owns billing", entities=["person:mark-robinson"])
    memory_store(team=team, content="Mark Smith owns mobile releases", entities=["person:mark-smith"])
    error = error_of(api["member"].get("/api/v1/search", {"q": "code review", "entities": "Mark"}), 409)
    assert error["code"] == "CLARIFICATION_REQUIRED"
    assert error["ambiguities"] == {"Mark": ["person:mark-robinson", "person:mark-smith"]}
    assert "slug" in error["hint"]
    error = error_of(
        api["member"].post(
            "/api/v1/observations", {"content": "Mark prefers small PRs", "entities": ["Mark"]}, format="json"
        ),
        409,
    )
    assert error["code"] == "CLARIFICATION_REQUIRED"
    assert Memory.objects.count() == 2
    ok = api["member"].get("/api/v1/search", {"q": "who owns billing", "entities": "person:mark-robinson"})
    assert ok.status_code == 200 and len(ok.json()["results"]) == 1


def test_a_body_one_byte_over_the_limit_gets_413(api, settings):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    prefix, suffix = b'{"content": "', b'"}'
    exact = prefix + b"x" * (limit - len(prefix) - len(suffix)) + suffix
    assert len(exact) == limit
    over = exact[:-2] + b'x"}'
    response = api["member"].post("/api/v1/observations", over, content_type="application/json")
    assert error_of(response, 413)["code"] == "PAYLOAD_TOO_LARGE"
    response = api["member"].post("/api/v1/observations", exact, content_type="application/json")
    assert response.status_code == 400  # within the limit: judged on content (too long), not on size
    assert not Memory.objects.exists()


def test_the_parser_refuses_oversized_bodies_without_a_content_length():
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    with pytest.raises(PayloadTooLarge):
        LimitedJSONParser().parse(io.BytesIO(b"[" + b"1," * limit + b"1]"))


def test_malformed_json_wrong_methods_and_unknown_paths_keep_the_error_shape(api):
    assert (
        error_of(api["member"].post("/api/v1/observations", "{oops", content_type="application/json"), 400)[
            "code"
        ]
        == "MALFORMED_REQUEST"
    )
    nested = "[" * 100000 + "]" * 100000
    assert error_of(api["member"].post("/api/v1/search", nested, content_type="application/json"), 400)
    assert (
        error_of(
            api["member"].post(
                "/api/v1/observations", "a=b", content_type="application/x-www-form-urlencoded"
            ),
            415,
        )["code"]
        == "UNSUPPORTED_MEDIA_TYPE"
    )
    assert (
        error_of(api["member"].put("/api/v1/search", {}, format="json"), 405)["code"] == "METHOD_NOT_ALLOWED"
    )
    assert error_of(api["member"].get("/api/v1/nothing-here"), 404)["code"] == "NOT_FOUND"
    assert (
        "cursor" in error_of(api["member"].get("/api/v1/observations", {"cursor": "garbage"}), 400)["fields"]
    )


def test_throttling_answers_429_with_a_retry_time(api, settings):
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "API_THROTTLE_RATE": "3/min"}
    from django.core.cache import cache

    cache.clear()
    statuses = [api["read_only"].get("/api/v1/entities").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    error = api["read_only"].get("/api/v1/entities").json()["error"]
    assert error["code"] == "THROTTLED" and error["retry_after_seconds"] > 0
    assert api["member"].get("/api/v1/entities").status_code == 200  # another token has its own budget
    cache.clear()


def test_a_page_size_is_capped(api, team):
    for i in range(3):
        memory_store(
            team=team,
            content=f"Memory number {i} about the ledger service and its {i * 7} shards",
            dedupe=False,
        )
    body = api["member"].get("/api/v1/observations", {"page_size": 2}).json()
    assert len(body["results"]) == 2 and body["next"]
    second = api["member"].get(body["next"]).json()
    assert len(second["results"]) == 1
    assert len(api["member"].get("/api/v1/observations", {"page_size": 10**6}).json()["results"]) == 3
    assert json.dumps(body)


@pytest.mark.parametrize("host", ["", "bad host!"])
def test_a_request_with_an_invalid_host_header_is_a_400_in_the_apis_error_shape(db, host):
    from django.test import Client

    response = Client().get("/api/v1/health", headers={"host": host})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("accept", ["text/html", "v:{", "application/xml;q=1, */*;q=0"])
def test_an_accept_header_the_api_cannot_satisfy_still_gets_json(api, accept):
    response = api["member"].post(
        "/api/v1/observations/batch",
        {"items": [{"content": "Run make test before pushing the api repo."}]},
        format="json",
        HTTP_ACCEPT=accept,
    )
    assert response.status_code == 201, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["results"][0]["operation"] == "ADD"
