"""LoCoMo for the retrieval harness: ``python -m bench.locomo [locomo10.json] [-o locomo.jsonl]``.

LoCoMo (snap-research/LoCoMo, Maharana et al. 2024) holds ten long conversations between two people
over many sessions, with questions whose answers are specific turns ("evidence", e.g. ``D1:3``:
session 1, turn 3). This converts ``data/locomo10.json`` into the JSON lines of
``python -m bench.retrieval``:

- one memory per turn: ``"<speaker>: <text>"`` (an image a speaker shared is kept as its caption),
  the session's date as ``created_at``, the conversation as ``namespace``;
- one query per question of categories 1–4 (multi-hop, temporal, open-domain, single-hop; category
  5, adversarial questions without an answer, is left out unless ``--all-categories``), its evidence
  turns as ``relevant``, its category as ``kind``, the conversation as ``namespace``.

Evidence ids are parsed leniently ("D8:6; D9:17", "D:11:26" → D11:26); ids that name no turn are
dropped, and a question left with no evidence is skipped — the converter says how many.

The data set's licence is non-commercial: fetch it yourself, never commit it. Get it with
``git clone https://github.com/snap-research/LoCoMo`` (or this project's ``fetch`` tool); the
converted file goes under ``.memorylane/`` by default, which git ignores.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from pathlib import Path

DEFAULT_INPUT = Path(".memorylane/locomo/locomo10.json")
DEFAULT_OUTPUT = Path(".memorylane/locomo/locomo.jsonl")
# The categories as the LoCoMo paper numbers them in the data (category 5, adversarial, is left out).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# Category 5's questions have no answer in the conversation, but their evidence names the turns they
# are about; the public harnesses that report "all five categories" search those too (--all-categories).
ADVERSARIAL = {5: "adversarial"}
EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


def parse_date(text: str) -> str | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as an ISO timestamp (None when it cannot be read)."""
    cleaned = " ".join(str(text).split())
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).isoformat() + "Z"
        except ValueError:
            continue
    return None


def evidence_ids(evidence: list) -> list[str]:
    """Turn ids from a QA item's evidence, read leniently ("D8:6; D9:17", "D:11:26")."""
    found = []
    for item in evidence or []:
        for session, turn in EVIDENCE_RE.findall(str(item)):
            found.append(f"D{int(session)}:{int(turn)}")
    return list(dict.fromkeys(found))


def convert(conversations: list[dict], *, all_categories: bool = False) -> tuple[list[dict], dict]:
    """The harness rows for every conversation, and counts of what was kept and skipped (category 5
    is kept with ``all_categories``)."""
    categories = {**CATEGORIES, **ADVERSARIAL} if all_categories else CATEGORIES
    rows: list[dict] = []
    stats = {
        "conversations": 0,
        "turns": 0,
        "questions": 0,
        "skipped_category_5": 0,
        "skipped_no_evidence": 0,
        "evidence_dropped": 0,
        "evidence_malformed": 0,
    }
    for number, sample in enumerate(conversations, start=1):
        namespace = f"locomo-{sample.get('sample_id', number)}".lower().replace("_", "-")
        conversation = sample["conversation"]
        stats["conversations"] += 1
        turn_ids: dict[str, str] = {}
        sessions = sorted(
            (int(key.split("_")[1]), key)
            for key, value in conversation.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
        )
        for _, key in sessions:
            created_at = parse_date(conversation.get(f"{key}_date_time", ""))
            for turn in conversation[key]:
                text = (turn.get("text") or "").strip()
                if turn.get("blip_caption"):
                    text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
                if not text:
                    continue
                dia_id = turn["dia_id"]
                memory_id = f"{namespace}:{dia_id}"
                turn_ids[dia_id] = memory_id
                memory = {"id": memory_id, "content": f"{turn['speaker']}: {text}", "namespace": namespace}
                if created_at:
                    memory["created_at"] = created_at
                rows.append({"memory": memory})
                stats["turns"] += 1
        for index, qa in enumerate(sample.get("qa", [])):
            category = qa.get("category")
            if category not in categories:
                stats["skipped_category_5"] += 1
                continue
            raw = qa.get("evidence") or []
            if any(not re.fullmatch(r"D\d+:\d+", str(item)) for item in raw):
                stats["evidence_malformed"] += 1
            ids = evidence_ids(raw)
            relevant = [turn_ids[e] for e in ids if e in turn_ids]
            stats["evidence_dropped"] += len(ids) - len(relevant)
            if not relevant:
                stats["skipped_no_evidence"] += 1
                continue
            rows.append(
                {
                    "query": {
                        "id": f"{namespace}:q{index}",
                        "text": str(qa["question"]),
                        "relevant": relevant,
                        "namespace": namespace,
                        "kind": categories[category],
                    }
                }
            )
            stats["questions"] += 1
    return rows, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--all-categories", action="store_true", help="keep category 5 (adversarial) too: all five categories"
    )
    args = parser.parse_args(argv)
    if not args.input.exists():
        parser.error(
            f"{args.input} does not exist; fetch snap-research/LoCoMo and pass its data/locomo10.json"
        )
    try:
        conversations = json.loads(args.input.read_text())
    except json.JSONDecodeError as exc:
        parser.error(f"{args.input} is not JSON: {exc}")
    rows, stats = convert(conversations, all_categories=args.all_categories)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(
        f"Wrote {stats['turns']} memories and {stats['questions']} queries to {args.output}", file=sys.stderr
    )
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
