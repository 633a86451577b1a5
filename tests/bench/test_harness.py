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
