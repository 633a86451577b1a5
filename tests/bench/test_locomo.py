"""bench/locomo.py on a tiny conversation written in LoCoMo's shape (the real data is never committed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.locomo import convert, evidence_ids, parse_date
from tests.workers import ROOT

SAMPLE = [
    {
        "sample_id": "conv_7",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:1",
                    "text": "I went to the LGBTQ support group yesterday.",
                },
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds lovely! How was it?"},
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:3",
                    "text": "Look at this.",
                    "blip_caption": "a rainbow flag on a table",
                },
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [
                {
                    "speaker": "Melanie",
                    "dia_id": "D2:1",
                    "text": "I painted a sunrise over the lake last week.",
                },
                {"speaker": "Caroline", "dia_id": "D2:2", "text": ""},
            ],
        },
        "qa": [
            {"question": "When did Caroline go to the support group?", "evidence": ["D1:1"], "category": 2},
            {"question": "What did Melanie paint?", "evidence": ["D2:1; D1:2"], "category": 4},
            {"question": "What flag did Caroline show?", "evidence": ["D:1:3"], "category": 1},
            {"question": "What is Caroline's cat called?", "evidence": [], "category": 5},
            {"question": "What did Caroline paint?", "evidence": ["D2:1"], "category": 5},
            {"question": "Who is Bob?", "evidence": ["D9:9"], "category": 3},
        ],
    }
]


def test_parse_date_and_lenient_evidence():
    assert parse_date("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
    assert parse_date("sometime") is None
    assert evidence_ids(["D8:6; D9:17", "D:11:26", "D8:6"]) == ["D8:6", "D9:17", "D11:26"]


def test_turns_become_memories_and_questions_queries_with_their_evidence():
    rows, stats = convert(SAMPLE)
    memories = [row["memory"] for row in rows if "memory" in row]
    queries = [row["query"] for row in rows if "query" in row]
    assert [m["id"] for m in memories] == [
        "locomo-conv-7:D1:1",
        "locomo-conv-7:D1:2",
        "locomo-conv-7:D1:3",
        "locomo-conv-7:D2:1",
    ]
    assert memories[0] == {
        "id": "locomo-conv-7:D1:1",
        "content": "Caroline: I went to the LGBTQ support group yesterday.",
        "namespace": "locomo-conv-7",
        "created_at": "2023-05-08T13:56:00Z",
    }
    assert memories[2]["content"] == "Caroline: Look at this. [shares a photo: a rainbow flag on a table]"
    assert [(q["kind"], q["relevant"]) for q in queries] == [
        ("temporal", ["locomo-conv-7:D1:1"]),
        ("single-hop", ["locomo-conv-7:D2:1", "locomo-conv-7:D1:2"]),
        ("multi-hop", ["locomo-conv-7:D1:3"]),
    ]
    assert all(q["namespace"] == "locomo-conv-7" for q in queries)
    assert stats == {
        "conversations": 1,
        "turns": 4,
        "questions": 3,
        "skipped_category_5": 2,
        "skipped_no_evidence": 1,
        "evidence_dropped": 1,
        "evidence_malformed": 2,
    }


def test_all_five_categories_keep_the_adversarial_questions_that_name_turns():
    rows, stats = convert(SAMPLE, all_categories=True)
    queries = [row["query"] for row in rows if "query" in row]
    assert ("adversarial", ["locomo-conv-7:D2:1"]) in [(q["kind"], q["relevant"]) for q in queries]
    assert stats["questions"] == 4 and stats["skipped_category_5"] == 0
    assert stats["skipped_no_evidence"] == 2  # the cat question names no turn


@pytest.mark.slow
def test_the_converted_file_runs_in_the_retrieval_harness(tmp_path, db):
    source, converted = tmp_path / "locomo10.json", tmp_path / "locomo.jsonl"
    source.write_text(json.dumps(SAMPLE))
    done = subprocess.run(
        [sys.executable, "-m", "bench.locomo", str(source), "-o", str(converted)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["questions"] == 3
    harness = subprocess.run(
        [sys.executable, "-m", "bench.retrieval", str(converted), "--modes", "fts,full"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert harness.returncode == 0, harness.stderr[-2000:]
    report = json.loads(harness.stdout.strip().splitlines()[-1])
    assert (report["memories"], report["queries"]) == (4, 3)
    assert report["modes"]["full"]["recall@10"] == 1.0  # four turns: every answer is in the top ten
    assert set(report["modes"]["full"]["by_kind"]) == {"temporal", "single-hop", "multi-hop"}
