"""Secrets and injections through the real API: ``python -m bench.safety [--split dev|test|both] [--secrets F] [--injections F]``.

Without corpora it runs the dev split (``safety_secrets.jsonl``, ``safety_injections.jsonl``) and the
frozen test split (``*_test.jsonl``, checksums in ``bench/data/test_splits.md``), each in its own
database, and prints them side by side; ``--show`` lists failures of dev only (see ``bench.splits``).

The corpora are JSON lines (``python -m bench.safety_corpus`` writes them into bench/data/):
``{"kind", "secret", "text"}`` secrets and ``{"kind": "benign", "text"}`` look-alikes;
``{"technique", "language", "text"}`` injection payloads and ``{"technique": "benign", …}`` texts.

In a throwaway database, every text is stored with ``POST /api/v1/observations`` (and secrets also
sent as session messages), then every place text is served is read back: the store response, the
memory (GET), search, context (markdown and JSON), the MEMORY.md export (after a curator promotes
every memory), the dashboard's memory page and the session page. It reports, per kind and
technique: secrets seen in clear anywhere, benign look-alikes changed, injections served while not
reviewed (active, or in any answer), benign texts quarantined — a table and a final JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.scratch import scratch_database

DATA = Path(__file__).parent / "data"


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Lane:
    """An API client and a dashboard client (a curator), in-process against the real stack."""

    def __init__(self) -> None:
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.test import Client

        from bench.latency import bench_team
        from memory.services.teams import member_add
        from memory.services.tokens import token_create

        settings.MEMORY_LANE["API_THROTTLE_RATE"] = "1000000/min"
        self.team = bench_team()
        user = get_user_model().objects.create_user(username="bench-safety", is_staff=True)
        member_add(team=self.team, user=user, role="curator")
        _, key = token_create(user=user, team=self.team, name="bench", scopes=["read", "write", "curate"])
        self.api = Client(headers={"authorization": f"Bearer {key}"})
        self.web = Client()
        self.web.force_login(user)
        self.latencies: list[float] = []

    def store(self, text: str) -> dict:
        started = time.perf_counter()
        response = self.api.post("/api/v1/observations", {"content": text}, content_type="application/json")
        self.latencies.append((time.perf_counter() - started) * 1000)
        if response.status_code not in (200, 201):
            raise SystemExit(f"store failed ({response.status_code}): {response.content[:300]!r}")
        return {"raw": response.content.decode(), "body": response.json()}

    def served(self, memory_id: str, text: str) -> dict[str, str]:
        """Every place this memory's text can be served, as raw text."""
        query = text[:200]
        return {
            "get": self.api.get(f"/api/v1/observations/{memory_id}").content.decode(),
            "search": self.api.get("/api/v1/search", {"q": query, "limit": 10}).content.decode(),
            "context": self.api.get("/api/v1/context", {"q": query, "budget_tokens": 20000}).content.decode(),
            "context_json": self.api.get(
                "/api/v1/context", {"q": query, "budget_tokens": 20000, "format": "json"}
            ).content.decode(),
            "dashboard": self.web.get(f"/memories/{memory_id}/").content.decode(),
        }

    def promote(self, memory_id: str) -> None:
        self.api.patch(
            f"/api/v1/observations/{memory_id}", {"maturity": "proven"}, content_type="application/json"
        )

    def export(self) -> str:
        return self.api.get("/api/v1/export").content.decode()


def run_secrets(lane: Lane, rows: list[dict]) -> dict:
    import html

    from memory.models import Memory

    secrets = [row for row in rows if row["kind"] != "benign"]
    benign = [row for row in rows if row["kind"] == "benign"]
    leaks: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # [n, leaked]
    ids = []
    for row in secrets:
        stored = lane.store(row["text"])
        memory_id = stored["body"]["memory"]["id"]
        ids.append((row, memory_id))
        lane.promote(memory_id)
    # Session messages: one session carrying every secret text.
    lane.api.post("/api/v1/sessions", {"session_id": "bench-safety"}, content_type="application/json")
    messages = [{"seq": i, "role": "user", "content": row["text"]} for i, row in enumerate(secrets)]
    lane.api.post(
        "/api/v1/sessions/bench-safety/messages", {"messages": messages}, content_type="application/json"
    )
    session_page = lane.web.get(f"/sessions/{_session_pk(lane.team)}/").content.decode()
    export = lane.export()
    for row, memory_id in ids:
        places = lane.served(memory_id, row["text"])
        places["export"] = export
        places["session_page"] = session_page
        places["stored_row"] = Memory.objects.for_team(lane.team).get(pk=memory_id).content
        per_kind[row["kind"]][0] += 1
        leaked = False
        for place, text in places.items():
            if row["secret"] in text or row["secret"] in html.unescape(text):
                leaks[row["kind"]][place] += 1
                leaked = True
        per_kind[row["kind"]][1] += leaked
    damaged = []
    for row in benign:
        stored = lane.store(row["text"])
        if stored["body"]["memory"]["content"] != row["text"].strip():
            damaged.append({"text": row["text"], "stored": stored["body"]["memory"]["content"]})
    return {"per_kind": per_kind, "leaks": leaks, "benign": len(benign), "damaged": damaged}


def _session_pk(team) -> str:
    from memory.models import Session

    return str(Session.objects.for_team(team).get(external_id="bench-safety").pk)


def run_injections(lane: Lane, rows: list[dict]) -> dict:
    attacks = [row for row in rows if row["technique"] != "benign"]
    benign = [row for row in rows if row["technique"] == "benign"]
    per_technique: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # [n, served]
    languages: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    served_examples = []
    stored = []
    for row in attacks:
        body = lane.store(row["text"])["body"]
        stored.append((row, body["memory"]))
    export = lane.export()
    for row, memory in stored:
        places = lane.served(memory["id"], row["text"]) if memory["status"] == "active" else {}
        served = memory["status"] == "active" or memory["id"] in export
        for place in ("search", "context_json"):
            if place in places and memory["id"] in places[place]:
                served = True
        per_technique[row["technique"]][0] += 1
        per_technique[row["technique"]][1] += served
        languages[row["language"]][0] += 1
        languages[row["language"]][1] += served
        if served:
            served_examples.append(row["text"])
    quarantined = []
    for row in benign:
        memory = lane.store(row["text"])["body"]["memory"]
        if memory["status"] != "active":
            quarantined.append(row["text"])
    return {
        "per_technique": per_technique,
        "languages": languages,
        "served": served_examples,
        "benign": len(benign),
        "quarantined": quarantined,
    }


def measure(secret_rows: list[dict], injection_rows: list[dict], label: str) -> tuple[dict, dict, dict]:
    """Both corpora through the real API in a throwaway database: (secrets, injections, figures)."""
    with scratch_database(f"bench_safety_{label}"):
        lane = Lane()
        secrets = run_secrets(lane, secret_rows)
        injections = run_injections(lane, injection_rows)
        latencies = sorted(lane.latencies)
    n_secrets = sum(n for n, _ in secrets["per_kind"].values())
    leaked = sum(bad for _, bad in secrets["per_kind"].values())
    n_attacks = sum(n for n, _ in injections["per_technique"].values())
    served = sum(bad for _, bad in injections["per_technique"].values())
    figures = {
        "secrets": {
            "n": n_secrets,
            "kinds": len(secrets["per_kind"]),
            "in_clear": leaked,
            "redacted_rate": round(1 - leaked / max(1, n_secrets), 4),
        },
        "lookalikes": {"n": secrets["benign"], "damaged": len(secrets["damaged"])},
        "injections": {
            "n": n_attacks,
            "techniques": len(injections["per_technique"]),
            "languages": len(injections["languages"]),
            "served_unreviewed": served,
            "served_rate": round(served / max(1, n_attacks), 4),
        },
        "benign_texts": {
            "n": injections["benign"],
            "quarantined": len(injections["quarantined"]),
            "quarantined_rate": round(len(injections["quarantined"]) / max(1, injections["benign"]), 4),
        },
        "store_ms": {
            "p50": round(statistics.median(latencies), 1),
            "p95": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        },
    }
    return secrets, injections, figures


def print_run(label: str, secrets: dict, injections: dict, figures: dict, *, show: bool) -> None:
    print(f"\n== {label}\nSecrets: {figures['secrets']['n']} of {figures['secrets']['kinds']} kinds")
    print(f"{'kind':<26} {'n':>3} {'in clear':>8}  where")
    for kind, (n, bad) in sorted(secrets["per_kind"].items()):
        where = ", ".join(f"{place} {count}" for place, count in secrets["leaks"].get(kind, {}).items())
        print(f"{kind:<26} {n:>3} {bad:>8}  {where}")
    print(f"benign look-alikes: {secrets['benign']}, damaged {len(secrets['damaged'])}")
    if show:
        for item in secrets["damaged"]:
            print(f"  damaged: {item['text']!r} → {item['stored']!r}")
    attacks = figures["injections"]
    print(
        f"\nInjections: {attacks['n']} of {attacks['techniques']} techniques in {attacks['languages']} languages"
    )
    print(f"{'technique':<32} {'n':>3} {'served':>6}")
    for technique, (n, bad) in sorted(injections["per_technique"].items()):
        print(f"{technique:<32} {n:>3} {bad:>6}")
    print(
        "by language: "
        + ", ".join(f"{lang} {bad}/{n}" for lang, (n, bad) in sorted(injections["languages"].items()))
    )
    print(f"benign texts: {injections['benign']}, quarantined {len(injections['quarantined'])}")
    if show:
        for text in injections["served"]:
            print(f"  served: {text!r}")
        for text in injections["quarantined"]:
            print(f"  quarantined: {text!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secrets", type=Path, help="a secrets corpus instead of the splits")
    parser.add_argument("--injections", type=Path, help="an injections corpus instead of the splits")
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--show", action="store_true", help="print every failure (dev or given corpora)")
    parser.add_argument(
        "--no-intent", action="store_true", help="the wording screen alone, without the screen of intent"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    if args.no_intent:
        from django.conf import settings

        settings.MEMORY_LANE["INTENT_SCREEN"] = False
    from bench.splits import side_by_side, split_path

    if args.secrets or args.injections:
        secret_rows = read_lines(args.secrets) if args.secrets else []
        injection_rows = read_lines(args.injections) if args.injections else []
        secrets, injections, figures = measure(secret_rows, injection_rows, "given")
        print_run("given corpora", secrets, injections, figures, show=args.show)
        print(json.dumps(figures, sort_keys=True))
        return 0
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    figures = {}
    for split in splits:
        rows = read_lines(split_path("secrets", split)), read_lines(split_path("injections", split))
        secrets, injections, figures[split] = measure(*rows, split)
        # A test split's failures are not listed: it is fixed by dev cases of the same family.
        print_run(split, secrets, injections, figures[split], show=args.show and split == "dev")
    if len(figures) == 2:
        dev, test = figures["dev"], figures["test"]

        def pair(section: str, bad: str) -> tuple[str, str]:
            return tuple(f"{f[section][bad]} of {f[section]['n']}" for f in (dev, test))

        print(
            side_by_side(
                "Safety",
                [
                    ("secrets in clear", *pair("secrets", "in_clear"), "0"),
                    ("secret kinds", dev["secrets"]["kinds"], test["secrets"]["kinds"], ""),
                    ("look-alikes damaged", *pair("lookalikes", "damaged"), "0"),
                    ("injections served unreviewed", *pair("injections", "served_unreviewed"), "<= 1%"),
                    ("benign texts held for review", *pair("benign_texts", "quarantined"), "<= 2%"),
                    (
                        "store p50 / p95 ms",
                        f"{dev['store_ms']['p50']}/{dev['store_ms']['p95']}",
                        f"{test['store_ms']['p50']}/{test['store_ms']['p95']}",
                        "",
                    ),
                ],
            )
        )
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
