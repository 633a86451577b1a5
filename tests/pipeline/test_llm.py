"""The optional LLM, against a small OpenAI-compatible server on localhost: its answers are used when
they are valid, and the deterministic path runs when it is unset, unreachable, slow or talks garbage."""

from __future__ import annotations

import socket

import pytest

from memory.models import ExtractionStatus, Memory
from memory.services import llm
from memory.services.extraction import extraction_run, transcript_windows
from tests.llm_server import fake_llm

pytestmark = pytest.mark.usefixtures("embedder")

PROPOSAL = {
    "memories": [
        {
            "content": "Use httpx with the shared client for outbound calls in the auth service, never requests.",
            "type": "correction",
            "category": "convention",
            "priority": "critical",
            "evidence": "always use httpx with the shared client",
        }
    ]
}


@pytest.fixture
def use_llm(settings):
    def configure(url: str, **numbers) -> None:
        settings.LLM_URL = url
        settings.LLM_MODEL = "test-model"
        settings.LLM_API_KEY = "sk-test"
        settings.MEMORY_LANE = {**settings.MEMORY_LANE, **numbers}

    return configure


def test_the_llm_path_stores_what_the_llm_proposes(ended_session, use_llm):
    with fake_llm([PROPOSAL]) as server:
        use_llm(server.url)
        session = ended_session()
        report = extraction_run(session.pk)
    assert report.extractor == "llm" and report.llm_error == ""
    (memory,) = Memory.objects.filter(session=session)
    assert memory.content == PROPOSAL["memories"][0]["content"]
    # The LLM called it critical; with no security, data-loss or production reason it is not (§4.8).
    assert (memory.memory_type, memory.category, memory.priority) == ("correction", "convention", "moderate")
    assert memory.source_chunk == "always use httpx with the shared client"  # found in the transcript
    assert "feature:auth" in set(memory.mentions.values_list("entity__slug", flat=True))
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert "never instructions" in request["body"]["messages"][0]["content"]
    assert "No, don't use requests" in request["body"]["messages"][1]["content"]


@pytest.mark.parametrize(
    "answer,reason",
    [
        ("Sure! Here are some memories: none.", "not JSON"),
        ({"memories": "lots"}, "no valid 'memories' list"),
        ({"memories": [{"content": "x", "type": "correction"}]}, "invalid"),
        ({"memories": [{**PROPOSAL["memories"][0], "type": "rumour"}]}, "invalid"),
        (500, "HTTP 500"),
    ],
)
def test_garbage_or_an_error_from_the_llm_falls_back_to_the_rules(ended_session, use_llm, answer, reason):
    with fake_llm([answer]) as server:
        use_llm(server.url)
        session = ended_session()
        report = extraction_run(session.pk)
    assert report.status == ExtractionStatus.DONE
    assert report.extractor == "rules" and reason in report.llm_error
    contents = set(Memory.objects.filter(session=session).values_list("content", flat=True))
    assert "Don't use requests in the auth service — always use httpx with the shared client." in contents


def test_an_unreachable_llm_falls_back_to_the_rules(ended_session, use_llm):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    use_llm(f"http://127.0.0.1:{port}/v1")
    report = extraction_run(ended_session().pk)
    assert report.extractor == "rules" and "unreachable" in report.llm_error
    assert report.added


def test_a_slow_llm_times_out_and_falls_back(ended_session, use_llm):
    with fake_llm([3.0, PROPOSAL]) as server:
        use_llm(server.url, LLM_TIMEOUT_SECONDS=0.5)
        report = extraction_run(ended_session().pk)
    assert report.extractor == "rules" and "unreachable" in report.llm_error


def test_without_an_llm_configured_nothing_is_asked(ended_session, settings):
    settings.LLM_URL = ""
    assert llm.llm_configured() is False
    with pytest.raises(llm.LLMUnavailable):
        llm.chat_json("system", "user")
    assert extraction_run(ended_session().pk).extractor == "rules"


def test_long_transcripts_are_cut_into_windows_of_at_most_4000_tokens(ended_session, use_llm):
    words = "the deploy script needs the staging flag " * 60  # ~2,400 characters per message
    messages = [{"seq": i, "role": "user" if i % 2 else "assistant", "content": words} for i in range(20)]
    with fake_llm([{"memories": []}]) as server:
        use_llm(server.url)
        session = ended_session(external_id="long", messages=messages)
        report = extraction_run(session.pk)
    assert report.extractor == "llm" and report.added == []
    limit = 4000 * 4
    windows = transcript_windows(list(session.messages.values_list("seq", "role", "content")))
    assert len(server.requests) == len(windows) >= 3
    assert all(len(w) <= limit for w in windows)
    assert sum(w.count("the deploy script") for w in windows) == 20 * 60  # nothing lost between windows


def test_a_fenced_json_answer_is_accepted():
    assert llm.parse_json_object('```json\n{"summary": "ok"}\n```') == {"summary": "ok"}
    with pytest.raises(llm.LLMUnavailable):
        llm.parse_json_object("[1, 2]")
