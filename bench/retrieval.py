"""Retrieval quality: ``python -m bench.retrieval DATASET.jsonl [--k 5 10] [--modes fts,vector,hybrid,full]``.

Loads the dataset's memories through the real store service (deduplication and supersession off:
a dataset's memories are distinct by construction) into a throwaway database created and dropped
on the configured server, runs every query in every mode through the real search service, and
prints recall@k (the share of each question's relevant memories in the top k), recall_any@k (some of
them there), MRR and nDCG@10 per mode (and per query kind), then one line of JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from bench.cli import apply_settings, parse_setting
from bench.scratch import scratch_database

ALL_MODES = ["fts", "vector", "hybrid", "full"]


def load_dataset(path: Path) -> tuple[list[dict], list[dict]]:
    memories, queries = [], []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{number}: not JSON: {exc}") from exc
        if "memory" in row:
            memories.append(row["memory"])
        elif "query" in row:
            queries.append(row["query"])
    ids = {m["id"] for m in memories}
    for query in queries:
        missing = set(query.get("relevant", [])) - ids
        if missing:
            raise SystemExit(f"query {query['id']} names unknown memories {sorted(missing)}")
    return memories, queries


def parse_time(value: str | None):
    if not value:
        return None
    from django.utils import timezone

    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else timezone.make_aware(moment)


def store_memories(memories: list[dict], *, team) -> dict[str, str]:
    """Store through the real service into ``team``; returns dataset id → memory pk."""
    from memory.services.store import memory_store_batch

    mapping: dict[str, str] = {}
    for start in range(0, len(memories), 100):
        chunk = memories[start : start + 100]
        items = []
        for memory in chunk:
            entities = list(memory.get("entities") or [])
            if memory.get("namespace"):
                entities.append(f"project:{memory['namespace']}")
            items.append(
                {
                    "content": memory["content"],
                    "memory_type": memory.get("type"),
                    "category": memory.get("category"),
                    "priority": memory.get("priority"),
                    "entities": entities,
                    "created_at": parse_time(memory.get("created_at")),
                    "source": "import",
                }
            )
        results = memory_store_batch(items, team=team, dedupe=False)
        for memory, result in zip(chunk, results, strict=True):
            mapping[memory["id"]] = str(result.memory.pk)
    return mapping


def fill_token_vectors() -> None:
    """Every memory's token vectors for the late-interaction stage, computed as the worker computes
    them ahead of searches (token_vectors_task), whether or not the stage is on (a sweep may switch
    it on): the figures are those of a corpus the worker has caught up with."""
    from memory.services.search.late import LateModelUnavailable, fill_all

    try:
        fill_all()
    except LateModelUnavailable as exc:
        print(f"no token vectors: {exc}", file=sys.stderr)


def metrics_for(ranked: list[str], relevant: set[str], ks: list[int]) -> dict[str, float]:
    row = {f"recall@{k}": len(relevant & set(ranked[:k])) / len(relevant) for k in ks}
    # Some public harnesses report recall_any@k: the question counts as answered when any one of its
    # relevant memories is in the top k (memini's LoCoMo table). recall@k above is the stricter share.
    row.update({f"recall_any@{k}": float(bool(relevant & set(ranked[:k]))) for k in ks})
    first = next((rank for rank, pk in enumerate(ranked, start=1) if pk in relevant), None)
    row["mrr"] = 1.0 / first if first else 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank, pk in enumerate(ranked[:10], start=1) if pk in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), 10) + 1))
    row["ndcg@10"] = dcg / ideal if ideal else 0.0
    return row


def average(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(row[key] for row in rows) / len(rows), 4) for key in rows[0]} if rows else {}


def evaluate(queries: list[dict], mapping: dict[str, str], modes: list[str], ks: list[int], *, team) -> dict:
    from memory.services.errors import MemoryLaneError
    from memory.services.search import memory_search

    limit = max([*ks, 10])
    report: dict = {}
    for mode in modes:
        rows, by_kind = [], defaultdict(list)
        started = time.perf_counter()
        for query in queries:
            entities = list(query.get("entities") or [])
            if query.get("namespace"):
                entities.append(f"project:{query['namespace']}")
            try:
                outcome = memory_search(
                    team=team, query=query["text"], entities=entities, limit=limit, mode=mode, record=False
                )
                ranked = [str(hit.memory.pk) for hit in outcome.results]
            except MemoryLaneError as exc:
                print(f"  query {query['id']} failed in {mode}: {exc}", file=sys.stderr)
                ranked = []
            row = metrics_for(ranked, {mapping[r] for r in query["relevant"]}, ks)
            rows.append(row)
            by_kind[query.get("kind") or "all"].append(row)
        elapsed = time.perf_counter() - started
        report[mode] = {**average(rows), "by_kind": {kind: average(r) for kind, r in sorted(by_kind.items())}}
        report[mode]["ms_per_query"] = round(1000 * elapsed / max(1, len(queries)), 1)
    return report


def print_table(report: dict, ks: list[int], stream=sys.stdout) -> None:
    columns = [*(f"recall@{k}" for k in ks), "mrr", "ndcg@10", f"recall_any@{max(ks)}"]
    widths = {c: max(9, len(c)) for c in columns}
    print(
        f"{'mode':<8} {'kind':<11} " + " ".join(f"{c:>{widths[c]}}" for c in columns) + f" {'ms/q':>7}",
        file=stream,
    )
    for mode, row in report.items():
        print(
            f"{mode:<8} {'all':<11} "
            + " ".join(f"{row[c]:>{widths[c]}.4f}" for c in columns)
            + f" {row['ms_per_query']:>7.1f}",
            file=stream,
        )
        for kind, kind_row in row["by_kind"].items():
            if kind == "all":
                continue
            print(
                f"{'':<8} {kind:<11} " + " ".join(f"{kind_row[c]:>{widths[c]}.4f}" for c in columns),
                file=stream,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--modes", default=",".join(ALL_MODES))
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=JSON", help="override a MEMORY_LANE setting"
    )
    parser.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="KEY=JSON;JSON…",
        help="evaluate every combination of these settings on one load of the data set (a table per line)",
    )
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := set(modes) - set(ALL_MODES):
        parser.error(f"unknown modes {sorted(unknown)}; choose from {','.join(ALL_MODES)}")
    if any(k < 1 for k in args.k):
        parser.error("--k values must be positive")
    memories, queries = load_dataset(args.dataset)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()

    from django.conf import settings

    apply_settings(parser, args.set)
    sweep = [parse_setting(parser, item) for item in args.sweep]

    with scratch_database("memorylane_bench"):
        from memory.services.teams import team_default

        team = team_default()  # the scratch database's one team
        started = time.perf_counter()
        mapping = store_memories(memories, team=team)
        fill_token_vectors()
        load_seconds = time.perf_counter() - started
        print(
            f"Loaded {len(memories)} memories in {load_seconds:.1f} s; running {len(queries)} queries "
            f"in {', '.join(modes)}",
            file=sys.stderr,
        )
        if sweep:
            for combination in itertools.product(*(values for _, values in sweep)):
                for (key, _), value in zip(sweep, combination, strict=True):
                    settings.MEMORY_LANE[key] = value
                report = evaluate(queries, mapping, modes, args.k, team=team)
                label = ", ".join(
                    f"{key}={json.dumps(value)}" for (key, _), value in zip(sweep, combination, strict=True)
                )
                print(f"\n{label}")
                print_table(report, args.k)
                print(
                    json.dumps(
                        {
                            "settings": dict(zip([k for k, _ in sweep], combination, strict=True)),
                            "modes": report,
                        }
                    )
                )
            return 0
        report = evaluate(queries, mapping, modes, args.k, team=team)
    print_table(report, args.k)
    print(json.dumps({"memories": len(memories), "queries": len(queries), "modes": report}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
