"""Upsert decisions on labeled pairs: ``python -m bench.dedup [bench/data/dedup_pairs.jsonl] [--no-api]``.

Then the governed pairs of issue 42 (bench/dedup_governed.py): a dev and a frozen test split, printed
side by side (``--no-governed`` leaves them out; they are left out when a data file is named).

Each line of the data set is a pair ``{"id", "label": "different"|"paraphrase", "kind", "a", "b",
"entities_a"?, "entities_b"?}``: ``b`` is stored after ``a``. A *different* pair states another fact
(another person, number, version, port…) and must never be a NOOP; a *paraphrase* says the same
thing and should be recognised (NOOP, or UPDATE).

Three runs, each a table per kind and then one line of JSON:
- **pure**: the decision function alone (memory/services/upsert/) with the real model's cosine;
- **api, same project**: ``POST /api/v1/observations`` of a, then of b, both in one project, in a
  throwaway database; for pairs with entities, an entity-filtered search for b's entity must serve
  b and never a;
- **api, two projects**: the same pair in two projects must be two ADDs.
Store latency (the second store of each same-project pair) is reported as p50/p95.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench.scratch import scratch_database

DEFAULT_DATA = Path(__file__).parent / "data" / "dedup_pairs.jsonl"


def load_pairs(path: Path) -> list[dict]:
    pairs = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{number}: not JSON: {exc}") from exc
        missing = {"id", "label", "kind", "a", "b"} - set(row)
        if missing or row["label"] not in ("different", "paraphrase"):
            raise SystemExit(f"{path}:{number}: needs id, label (different|paraphrase), kind, a, b")
        pairs.append(row)
    return pairs


def run_pure(pairs: list[dict]) -> tuple[dict[str, str], dict[str, str]]:
    """The decision of b against a for every pair, with real embeddings: pair id → operation, reason."""
    from memory import embeddings
    from memory.services.upsert import Side, decide_pair, scope_of

    texts = sorted({text for pair in pairs for text in (pair["a"], pair["b"])})
    vectors = dict(zip(texts, embeddings.encode(texts), strict=True))
    operations, reasons = {}, {}
    for pair in pairs:
        cosine = float(vectors[pair["a"]] @ vectors[pair["b"]])
        old = Side(pair["a"], "workflow", scope_of(pair.get("entities_a", [])))
        new = Side(pair["b"], "workflow", scope_of(pair.get("entities_b", [])))
        decision = decide_pair(new, old, cosine)
        operations[pair["id"]] = decision.operation
        reasons[pair["id"]] = decision.reason
    return operations, reasons


def run_api(pairs: list[dict]) -> dict:
    """Store every pair through the REST API (same project, then two projects) and search."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bench.latency import bench_team
    from memory.services.teams import member_add
    from memory.services.tokens import token_create

    settings.MEMORY_LANE["API_THROTTLE_RATE"] = "100000/min"  # one benchmark client, not a team
    team = bench_team()
    user = get_user_model().objects.create_user(username="bench-dedup", is_staff=True)
    member_add(team=team, user=user, role="curator")
    _, key = token_create(user=user, team=team, name="bench", scopes=["read", "write", "curate"])
    client = Client(headers={"authorization": f"Bearer {key}"})

    def store(content: str, entities: list[str]) -> tuple[dict, float]:
        started = time.perf_counter()
        response = client.post(
            "/api/v1/observations",
            {"content": content, "entities": entities, "category": "workflow"},
            content_type="application/json",
        )
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code not in (200, 201):
            raise SystemExit(f"store failed ({response.status_code}): {response.content[:300]!r}")
        return response.json(), elapsed

    same, cross, leaks, served, latencies = {}, {}, {}, {}, []
    for pair in pairs:
        project = f"project:pair-{pair['id'].lower()}"
        first, _ = store(pair["a"], [project, *pair.get("entities_a", [])])
        second, elapsed = store(pair["b"], [project, *pair.get("entities_b", [])])
        latencies.append(elapsed)
        same[pair["id"]] = second["operation"]
        if pair.get("entities_b"):
            response = client.get(
                "/api/v1/search",
                {"q": pair["b"], "entities": ",".join(pair["entities_b"]), "limit": 10},
            )
            ids = [hit["memory"]["id"] for hit in response.json()["results"]]
            leaks[pair["id"]] = (
                first["memory"]["id"] in ids and first["memory"]["id"] != second["memory"]["id"]
            )
            served[pair["id"]] = second["memory"]["id"] in ids
        store(pair["a"], [f"{project}-one"])
        other, _ = store(pair["b"], [f"{project}-two"])
        cross[pair["id"]] = other["operation"]
    return {"same": same, "cross": cross, "leaks": leaks, "served": served, "latencies": latencies}


def table(title: str, pairs: list[dict], operations: dict[str, str]) -> dict:
    by_kind: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for pair in pairs:
        by_kind[(pair["label"], pair["kind"])][operations[pair["id"]]] += 1
    print(f"\n{title}")
    print(f"{'label':<11} {'kind':<14} {'n':>4} {'NOOP':>5} {'UPDATE':>7} {'ADD':>5}")
    summary: dict = {}
    for (label, kind), counts in sorted(by_kind.items()):
        n = sum(counts.values())
        print(f"{label:<11} {kind:<14} {n:>4} {counts['NOOP']:>5} {counts['UPDATE']:>7} {counts['ADD']:>5}")
        summary.setdefault(label, {})[kind] = dict(counts)
    return summary


def metrics(pairs: list[dict], operations: dict[str, str]) -> dict:
    different = [p for p in pairs if p["label"] == "different"]
    paraphrases = [p for p in pairs if p["label"] == "paraphrase"]
    return {
        "different_noop": sum(operations[p["id"]] == "NOOP" for p in different),
        "different": len(different),
        "paraphrase_recognised": round(
            sum(operations[p["id"]] in ("NOOP", "UPDATE") for p in paraphrases) / max(1, len(paraphrases)), 4
        ),
        "paraphrase_noop": round(
            sum(operations[p["id"]] == "NOOP" for p in paraphrases) / max(1, len(paraphrases)), 4
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-api", action="store_true", help="only the pure decision (no database)")
    parser.add_argument("--show", action="store_true", help="print every pair the targets count against")
    parser.add_argument(
        "--no-governed", action="store_true", help="leave out the governed dev and test pairs"
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    pairs = load_pairs(args.data)
    pure, reasons = run_pure(pairs)
    result = {"pairs": len(pairs), "pure": metrics(pairs, pure)}
    result["pure"]["by_kind"] = table("pure decision (b stored after a, same scope)", pairs, pure)
    if args.show:
        for pair in pairs:
            wrong = (pair["label"] == "different" and pure[pair["id"]] == "NOOP") or (
                pair["label"] == "paraphrase" and pure[pair["id"]] == "ADD"
            )
            if wrong:
                print(
                    f"  {pair['id']} {pure[pair['id']]}: {pair['a']!r} → {pair['b']!r} ({reasons[pair['id']]})"
                )
    if not args.no_api:
        with scratch_database("bench_dedup"):
            api = run_api(pairs)
        same = metrics(pairs, api["same"])
        cross_add = sum(op == "ADD" for op in api["cross"].values()) / max(1, len(pairs))
        result["api_same_project"] = {**same, "by_kind": table("API, same project", pairs, api["same"])}
        table("API, two projects", pairs, api["cross"])
        result["api_two_projects"] = {"add_rate": round(cross_add, 4)}
        result["entity_search"] = {
            "pairs": len(api["leaks"]),
            "served_other_entity": sum(api["leaks"].values()),
            "served_new_fact": sum(api["served"].values()),
        }
        latencies = sorted(api["latencies"])
        result["store_ms"] = {
            "p50": round(statistics.median(latencies), 1),
            "p95": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        }
        print(
            f"\nentity-filtered search: {result['entity_search']['served_other_entity']} of "
            f"{len(api['leaks'])} served the other entity's fact; store p50 {result['store_ms']['p50']} ms, "
            f"p95 {result['store_ms']['p95']} ms"
        )
    if not args.no_governed and args.data == DEFAULT_DATA:
        from bench import dedup_governed

        result.update(dedup_governed.run(api=not args.no_api, show=args.show))
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
