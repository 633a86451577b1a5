"""A frozen test split stays as it was written: its checksum is the one its description records
(bench/data/dedup_governed.md). A failure on it is answered by a dev case of the same family,
never by editing the test split."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def test_the_governed_dedup_test_split_is_the_one_written_first():
    recorded = re.search(r"- test `([0-9a-f]{64})`", (DATA / "dedup_governed.md").read_text())[1]
    assert hashlib.sha256((DATA / "dedup_governed_test.jsonl").read_bytes()).hexdigest() == recorded


def test_the_dev_and_test_splits_share_no_text():
    def texts(name: str) -> set[str]:
        rows = [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]
        return {row[key] for row in rows for key in ("a", "b")}

    assert not texts("dedup_governed_test.jsonl") & texts("dedup_governed_dev.jsonl")
    assert not texts("dedup_governed_test.jsonl") & texts("dedup_governed_dev_others.jsonl")
    assert not texts("dedup_governed_test.jsonl") & texts("dedup_governed_dev_own.jsonl")


def test_the_issue_43_test_splits_are_the_ones_written_first():
    from bench.splits import SPLITS, checksum, recorded_checksum, split_path

    for bench, splits in SPLITS.items():
        path = splits["test"]
        assert checksum(path) == recorded_checksum(path), f"{path.name} is not the frozen {bench} test split"
        assert split_path(bench, "test") == path


def test_no_dev_text_is_a_test_text():
    from bench.extraction import load_sessions
    from bench.splits import SPLITS

    def rows(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    for bench in ("injections", "secrets"):
        dev, test = ({row["text"].strip() for row in rows(SPLITS[bench][s])} for s in ("dev", "test"))
        assert not dev & test, bench
    dev, test = (
        {
            m["content"]
            for path in paths
            for s in load_sessions(path)
            for m in s.messages
            if m["role"] != "tool" and len(m["content"]) > 40  # two sessions may run the same command
        }
        for paths in (SPLITS["extraction"]["dev"], (SPLITS["extraction"]["test"],))
    )
    assert not dev & test
