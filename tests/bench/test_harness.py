"""The benchmark harnesses run end to end and print their table and final JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.workers import ROOT

pytestmark = pytest.mark.slow

DATASET = [
    {
        "memory": {
            "id": "a",
            "content": "Run make migrate-test before pytest; the test database is not migrated.",
            "type": "commitment",
            "category": "workflow",
            "namespace": "billing",
        }
    },
    {
        "memory": {
            "id": "b",
            "content": "We chose Celery beat over cron because cron jobs were invisible.",
            "type": "decision",
            "category": "architecture",
            "entities": ["project:infra"],
        }
    },
    {
        "memory": {
            "id": "c",
            "content": "The Stripe webhook handler skipped signature checks; that was a bug.",
            "type": "correction",
            "category": "gotcha",
            "created_at": "2026-10-01T10:00:00Z",
        }
    },
    {
        "memory": {
            "id": "d",
            "content": "Stripe webhooks arrive out of order, so handlers must be idempotent.",
            "type": "insight",
            "category": "gotcha",
            "unknown_key": 1,
        }
    },
    {
        "query": {
            "id": "q1",
            "text": "what mistake did we make with stripe webhooks?",
            "relevant": ["c"],
            "kind": "intent",
        }
    },
    {"query": {"id": "q2", "text": "why did we pick celery beat", "relevant": ["b"], "kind": "intent"}},
    {
        "query": {
            "id": "q3",
            "text": "how do I keep the test db schema current",
            "relevant": ["a"],
            "kind": "paraphrase",
            "namespace": "billing",
        }
    },
]


def test_the_retrieval_harness_reports_every_mode(tmp_path, db):
    dataset = tmp_path / "tiny.jsonl"
    dataset.write_text("\n".join(json.dumps(row) for row in DATASET) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "bench.retrieval", str(dataset), "--k", "1", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[0].split()[:4] == ["mode", "kind", "recall@1", "recall@3"]
    report = json.loads(lines[-1])
    assert (report["memories"], report["queries"]) == (4, 3)
    assert set(report["modes"]) == {"fts", "vector", "hybrid", "full"}
    full = report["modes"]["full"]
    assert {"recall@1", "recall@3", "mrr", "ndcg@10", "by_kind"} <= set(full)
    assert set(full["by_kind"]) == {"intent", "paraphrase"}
    assert full["recall@3"] == 1.0 and full["mrr"] > 0.8
    assert full["recall_any@3"] == 1.0 and full["recall_any@1"] >= full["recall@1"]


def test_recall_counts_the_share_of_relevant_memories_and_recall_any_one_of_them():
    from bench.retrieval import metrics_for

    row = metrics_for(["a", "x", "y", "b"], {"a", "b"}, [1, 3])
    assert row["recall@1"] == 0.5 and row["recall@3"] == 0.5 and row["recall_any@1"] == 1.0
    assert metrics_for(["x", "a"], {"a"}, [1])["recall_any@1"] == 0.0


def test_the_retrieval_harness_refuses_a_dataset_with_unknown_relevant_ids(tmp_path):
    dataset = tmp_path / "bad.jsonl"
    dataset.write_text(json.dumps({"query": {"id": "q", "text": "x", "relevant": ["nope"]}}) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "bench.retrieval", str(dataset)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "unknown memories" in result.stderr


@pytest.mark.parametrize("harness", ["bench.retrieval", "bench.latency"])
def test_a_setting_override_that_names_no_setting_is_refused(tmp_path, harness):
    dataset = tmp_path / "tiny.jsonl"
    dataset.write_text("\n".join(json.dumps(row) for row in DATASET) + "\n")
    arguments = [str(dataset)] if harness == "bench.retrieval" else []
    for item, complaint in [
        ("FUSION_ALPHA_MAKS=0.8", "'FUSION_ALPHA_MAKS' is not a MEMORY_LANE setting"),
        ("FUSION_ALPHA_MAX=0.8;0.9", "--set takes one value"),
        ("FUSION_ALPHA_MAX", "expected KEY=JSON"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", harness, *arguments, "--set", item],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2 and complaint in result.stderr, result.stderr[-1000:]


def run_latency(*arguments: str) -> tuple[dict, str]:
    """``python -m bench.latency`` with ``arguments``: its JSON line and all it printed."""
    result = subprocess.run(
        [sys.executable, "-m", "bench.latency", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stdout


def test_the_latency_harness_measures_a_tiny_corpus_end_to_end(db):
    report, _ = run_latency(
        *("--memories", "160", "--queries", "10", "--recall-queries", "10"),
        *("--store-batched", "40", "--store-single", "5", "--profile"),
        *("--rerank", "5", "--rerank-queries", "10", "--late", "5", "--after-late", "2"),
    )
    assert report["memories"] == 160
    # So is the late-interaction stage, every memory's token vectors computed first, and the
    # cross-encoder after it at its default depth.
    assert report["late"]["vectors"]["kept"] == 160 and report["late"]["vectors"]["bytes_per_memory"] > 0
    for depth in ("0", "5", "50+cross 2"):
        for name in ("search_service", "search_http"):
            assert report["late"][depth][name]["n"] == 10
    # The second stage is timed in the same run, on the same questions.
    for name in ("search_service", "search_http"):
        assert report["rerank"]["5"][name]["n"] == 10 and report["rerank"]["5"][name]["p50_ms"] > 0
    assert report["rerank"]["5"]["reread"] == 1.0
    for name in (
        "search_service",
        "search_service_entity_1pct",
        "search_http",
        "vector_hnsw",
        "vector_exact",
    ):
        assert report[name]["n"] >= 10 and report[name]["p95_ms"] >= report[name]["p50_ms"] > 0
    assert report["store_batched"]["memories"] == 40
    # The filtered vector search finds what an exact scan of the same filter finds.
    assert report["recall_entity_project"]["recall"] == 1.0
    # So does the list an unfiltered search ranks: no question's list is stranded.
    assert report["recall_unfiltered"]["search"]["recall"] == 1.0
    assert report["recall_unfiltered"]["search"]["stranded"] == 0
    assert {"lexical: the query's words", "lexical: BM25 candidates"} <= set(report["profile_service"]["sql"])
    assert "memory_search (all of it)" in report["profile_service"]["python"]


def test_the_latency_harness_measures_teams_beside_one_team_of_their_size(db):
    """``--teams``: each team's search before and after the teams get their own indexes, beside a
    one-team deployment of a team's size measured in the same run."""
    report, printed = run_latency(
        *("--teams", "3", "--memories", "600", "--queries", "12", "--recall-queries", "6"),
        *("--measured-teams", "3", "--store-batched", "20", "--store-single", "2"),
        *("--set", "TEAM_INDEX_MIN_MEMORIES=150", "--set", "TEAM_INDEX_KEEP_MEMORIES=75"),
    )
    assert report["teams"] == 3 and report["load"]["per_team"] == 200
    assert report["single_team"]["memories"] == 200
    assert report["team_index_build"]["teams"] == 3 and report["team_index_bytes"] > 0
    assert report["without_team_indexes"]["recall_at_10"]["plans"] == {"exact": 6}
    assert report["with_team_indexes"]["recall_at_10"]["plans"] == {"hnsw": 6}
    for name in ("without_team_indexes", "with_team_indexes"):
        assert report[name]["search_service"]["n"] == 12
        assert report[name]["recall_at_10"]["recall"] == 1.0
        assert name.replace("_", " ") in printed  # the table shows both, beside the one team
    assert "single team (same run)" in printed


@pytest.fixture
def load_keys(live_server, embedder, team) -> list[str]:
    """Twenty memories of the team to search, and two read/write tokens of one of its members for
    the load's clients."""
    from django.contrib.auth import get_user_model

    from memory.services.store import memory_store_batch
    from memory.services.tokens import token_create
    from tests.conftest import join

    memory_store_batch(
        [{"content": f"Webhook retries are capped at {i} attempts."} for i in range(20)], team=team
    )
    loader = join(get_user_model().objects.create_user(username="loader"), team, "member")
    return [token_create(user=loader, team=team, scopes=["read", "write"])[1] for _ in range(2)]


def test_the_load_harness_drives_a_live_server_with_searches_stores_and_sessions(live_server, load_keys):
    from bench.load import run_load

    report = run_load(live_server.url, load_keys, clients=4, seconds=3, session_share=0.5)
    assert report["errors"] == {}
    operations = report["operations"]
    assert operations["search"]["n"] > 0 and operations["session_start"]["n"] == 2
    assert operations["session_end"]["n"] == 2
    assert report["requests_per_second"] > 0
    assert {"p50_ms", "p95_ms", "p99_ms"} <= set(operations["search"])


def test_a_paced_load_sends_its_schedule_and_no_more(live_server, load_keys):
    from bench.load import due_times, run_load, schedule_rng

    report = run_load(live_server.url, load_keys, clients=4, seconds=3, rate=8, session_share=0.5, seed=3)
    assert report["errors"] == {} and report["rate"] == 8
    # Each client sends exactly its Poisson schedule (2 a second each), plus the two sessions' start
    # and end: a closed loop would have sent as many as the server could answer.
    scheduled = sum(len(list(due_times(schedule_rng(3, i), 2.0, 0.0, 3.0))) for i in range(4))
    assert 0 < scheduled < 60
    assert report["requests"] == scheduled + 4


class SlowServer:
    """A server that answers one request at a time, each after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        import http.server
        import threading
        import time

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = answer

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_paced_load_counts_the_wait_of_a_request_sent_late():
    """A server that answers 20 requests a second, offered 40: paced, the queue shows in the
    latency (counted from when each request was due); a closed loop would report only the 50 ms."""
    from bench.load import run_load

    server = SlowServer(0.05)
    try:
        closed = run_load(server.url, ["t"], clients=1, seconds=2, session_share=0, search_share=1.0)
        paced = run_load(server.url, ["t"], clients=1, seconds=2, rate=40, session_share=0, search_share=1.0)
    finally:
        server.close()
    assert closed["errors"] == paced["errors"] == {}
    closed_p95, paced_p95 = closed["operations"]["search"]["p95_ms"], paced["operations"]["search"]["p95_ms"]
    assert closed_p95 < 250
    # About 80 requests due in 2 s, 20 answered a second: the last ones wait about two seconds.
    assert paced_p95 > 4 * closed_p95 and paced_p95 > 800


def test_the_embedding_harness_compares_both_backends_on_the_same_texts():
    result = subprocess.run(
        [sys.executable, "-m", "bench.embedding", "--texts", "40", "--queries", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["torch"]["backend"] == "torch" and report["onnx"]["backend"] == "onnx"
    assert report["onnx"]["torch_imported"] is False  # the ONNX server process never loads torch
    # Each backend's own peak, not the parent's: the ONNX process, without torch, is the smaller.
    assert 0 < report["onnx"]["peak_rss_mb"] < report["torch"]["peak_rss_mb"]
    assert report["min_cosine"] > 0.9999
    for backend in ("torch", "onnx"):
        assert report[backend]["texts_per_s"] > 0 and report[backend]["query_p95_ms"] > 0


def test_the_load_harness_counts_the_cpu_of_a_process_tree_including_exited_children():
    from bench.load import tree_cpu_seconds

    before = tree_cpu_seconds(os.getpid())
    burn = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)  # exits (and is reaped) before the count
    assert tree_cpu_seconds(os.getpid()) - before >= 0.4
    assert tree_cpu_seconds(2**22 + 12345) == 0.0  # no such process


@pytest.mark.usefixtures("embedder")
def test_the_governed_dedup_harness_stores_each_pair_in_its_state_and_carries_every_proposal(db):
    """A few dev pairs through the REST API as bench.dedup runs them: a member's change of settled
    knowledge is proposed and never supersedes it; each proposal then takes effect by a second
    person or a curator's confirmation."""
    from bench import dedup_governed

    pairs = dedup_governed.load_split("dev")
    chosen = [p for p in pairs if p["expect"] == "PROPOSE"][:2] + [
        p for p in pairs if p["expect"] == "SUPERSEDE"
    ][:1]
    found = dedup_governed.run_api(chosen)
    assert found["settled_member_writes"] == 2 and found["settled_superseded_by_one_member"] == 0
    assert found["proposals"] == sum(found["outcomes"][p["id"]] == "PROPOSE" for p in chosen)
    assert found["proposals_carried"] == found["proposals"]
    figures = dedup_governed.metrics(chosen, found["outcomes"])
    assert figures["pairs"] == 3 and figures["settled_superseded_by_one_member"] == 0
    assert len(dedup_governed.load_split("test")) == 127  # the frozen split, its checksum checked
