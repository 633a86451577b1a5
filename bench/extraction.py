"""Extraction quality on labeled sessions: ``python -m bench.extraction [--split dev|test|both] [FILE] [--show]``.

Without a file it runs the dev split (``bench/data/extraction_sessions.txt``) and the frozen test
split (``extraction_sessions_test.txt``, checksum in ``bench/data/test_splits.md``), each in its own
database, and prints them side by side; ``--show`` lists failures of dev only (see ``bench.splits``).

Each session of the data file (its format is described at its top) is sent through the real
session API — ``POST /api/v1/sessions``, ``/messages``, ``/end`` — in a throwaway database, in file
order, and extracted the way the worker does it (``extraction_run``). Every memory stored is then
matched to the gold lessons (the real model's cosine ≥ MATCH_COSINE, or ≥ MATCH_COSINE_LOOSE with
MATCH_OVERLAP_LOOSE of the lesson's content words present):

- **precision**: stored memories that match a gold lesson of their session / memories stored;
- **recall**: gold lessons found (stored, or an earlier copy reinforced by this session) / lessons;
- **duplicates**: memories stored for a lesson the team already had (same key, earlier or twice);
- **held for review**: stored memories that are not served (quarantined by the injection screen, or
  waiting for review): a lesson held is a lesson the team's agents do not get until a curator looks;
- **self-contained**: stored memories with no leading filler, no unresolved this/it/that/here at the
  start, and that are statements, not questions;
- **throughput**: transcript messages extracted per second by a started worker: the worker's
  warm-up runs first (the model, the compiled screens and the lexicons load, as when a worker
  process starts) and two sessions of another team are extracted (a connection opens, the
  database's caches warm), and their time is printed apart as the start-up.

Per kind of session, a table, then one line of JSON. ``--show`` prints every unmatched memory and
every missed lesson, so a reader can audit the matching.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench.scratch import scratch_database

MATCH_COSINE = 0.65
MATCH_COSINE_LOOSE = 0.5
MATCH_OVERLAP_LOOSE = 0.4
WORD_RE = re.compile(r"[a-z0-9_]+")
STOP = set(
    [
        "the",
        "a",
        "an",
        "to",
        "of",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "with",
        "as",
        "by",
        "at",
        "from",
        "not",
        "no",
        "never",
        "don't",
    ]
)
FILLER_RE = re.compile(
    r"^(?:right|yes|yeah|yep|ok(?:ay)?|so|well|hmm+|careful|also|btw|by the way|one more thing|oh|ah|"
    r"actually|fyi|note|reminder|just|anyway|alright|sure|great|cool|nice|thanks|wait|hold on|no|nope)\b[,.!:;—-]?",
    re.IGNORECASE,
)
ANAPHOR_RE = re.compile(r"^(?:this|that|these|those|it|they|here|there)\b", re.IGNORECASE)


@dataclass
class Session:
    id: str
    kind: str
    project: str
    outcome: dict
    messages: list[dict] = field(default_factory=list)
    lessons: list[tuple[str, str]] = field(default_factory=list)  # (key, text)


def load_sessions(path: Path) -> list[Session]:
    sessions: list[Session] = []
    roles = {"U": "user", "A": "assistant", "T": "tool"}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("==="):
            parts = [part.strip() for part in line[3:].split("|")]
            if len(parts) != 3:
                raise SystemExit(f"{path}:{number}: a session header is '=== id | kind | project'")
            sessions.append(Session(parts[0], parts[1], parts[2], {}))
            continue
        if not sessions:
            raise SystemExit(f"{path}:{number}: text before the first session header")
        session = sessions[-1]
        if line.startswith("outcome:"):
            values = dict(item.split("=", 1) for item in line[len("outcome:") :].split())
            session.outcome = {
                "success": values.get("success") == "true",
                "error_count": int(values.get("errors", 0)),
                "retry_count": int(values.get("retries", 0)),
                "duration_ms": int(float(values.get("minutes", 0)) * 60_000),
                "files_touched": [f for f in values.get("files", "").split(",") if f],
            }
        elif match := re.match(r"LESSON\[([\w-]+)\]:\s*(.+)", line):
            session.lessons.append((match.group(1), match.group(2)))  # variants split at " || " later
        elif line[:2] in ("U:", "A:", "T:"):
            session.messages.append({"role": roles[line[0]], "content": line[2:].strip()})
        else:
            raise SystemExit(f"{path}:{number}: expected U:, A:, T:, outcome: or LESSON[key]:")
    return sessions


def content_words(text: str) -> set[str]:
    return {w for w in WORD_RE.findall(text.lower()) if w not in STOP and len(w) > 2}


def self_contained(text: str) -> bool:
    stripped = text.strip()
    return not (FILLER_RE.match(stripped) or ANAPHOR_RE.match(stripped) or stripped.endswith("?"))


WARM_UP = [
    Session(
        id=f"warm-up-{number}",
        kind="warm-up",
        project="warm-up",
        messages=[
            {"role": "user", "content": rule},
            {"role": "assistant", "content": "Understood, I will do that from now on."},
        ],
        outcome={
            "success": True,
            "error_count": 0,
            "retry_count": 0,
            "duration_ms": 60_000,
            "files_touched": [],
        },
    )
    # The second says the first again: the upsert reads both (its lexicons load).
    for number, rule in enumerate(
        [
            "Always run make test, not bare pytest, in this repository.",
            "Run make test, never bare pytest, in this repository.",
        ]
    )
]


def _client_of(team, username: str):
    """A test client holding a read-write token of a new member of ``team``."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from memory.services.teams import member_add
    from memory.services.tokens import token_create

    user = get_user_model().objects.create_user(username=username)
    member_add(team=team, user=user, role="member")
    _, key = token_create(user=user, team=team, name="bench", scopes=["read", "write"])
    return Client(headers={"authorization": f"Bearer {key}"})


def _extract(client, team, session: Session):
    """Send ``session`` through the session API and extract it as the worker does: the session's row
    and the seconds the extraction took."""
    from memory.models import Session as SessionRow
    from memory.services.extraction import extraction_run

    external = f"bench-{session.id}"
    client.post(
        "/api/v1/sessions",
        {"session_id": external, "agent": "claude-code", "project": session.project},
        content_type="application/json",
    )
    batch = [{"seq": i, **message} for i, message in enumerate(session.messages)]
    client.post(f"/api/v1/sessions/{external}/messages", {"messages": batch}, content_type="application/json")
    client.post(f"/api/v1/sessions/{external}/end", session.outcome, content_type="application/json")
    row = SessionRow.objects.for_team(team).get(external_id=external)
    started = time.perf_counter()
    # What the worker runs for this session (its task carries the team).
    report = extraction_run(row.pk, team.pk)
    seconds = time.perf_counter() - started
    if report.status != "done":
        raise SystemExit(f"{session.id}: extraction ended {report.status}: {report}")
    return row, seconds


def run(sessions: list[Session]) -> dict:
    from django.conf import settings

    from bench.latency import bench_team
    from memory import embeddings
    from memory.models import Memory, Status
    from memory.models import Session as SessionRow
    from memory.services.teams import team_create
    from memory.services.warmup import warm_up

    settings.MEMORY_LANE["API_THROTTLE_RATE"] = "1000000/min"
    # A worker loads the model, compiles the screens and reads its lexicons once, as it starts
    # (memory/services/warmup.py), and its first tasks open a connection and warm the database's
    # caches: that start-up is timed apart, with sessions of another team, and throughput is a
    # started worker's.
    started = time.perf_counter()
    warm_up()
    start_up = time.perf_counter() - started
    warm_team = team_create(slug="bench-warm-up")
    warm_client = _client_of(warm_team, "bench-warm-up")
    start_up += sum(_extract(warm_client, warm_team, session)[1] for session in WARM_UP)
    team = bench_team()
    client = _client_of(team, "bench-extraction")
    stored: list[tuple[Session, str, str]] = []  # (session, memory id, content)
    held: set[str] = set()  # memory ids stored but not served: quarantined or waiting for review
    reinforced: dict[str, set[str]] = defaultdict(set)  # session id → memory ids it reinforced
    seconds, messages = 0.0, 0
    for session in sessions:
        row, took = _extract(client, team, session)
        seconds += took
        messages += len(session.messages)
        for memory in Memory.objects.for_team(team).filter(session=row).order_by("created_at"):
            stored.append((session, str(memory.pk), memory.content))
            if memory.status != Status.ACTIVE:
                held.add(str(memory.pk))
    from memory.models import Action, MemoryEvent

    for event in MemoryEvent.objects.for_team(team).filter(
        action=Action.REINFORCED, diff__source="extraction"
    ):
        session_pk = event.diff.get("session")
        if session_pk:
            external = (
                SessionRow.objects.for_team(team)
                .filter(pk=session_pk)
                .values_list("external_id", flat=True)
                .first()
            )
            if external:
                reinforced[external.removeprefix("bench-")].add(str(event.memory_ref))

    lessons = [(session, key, text) for session in sessions for key, text in session.lessons]
    variants = [[v.strip() for v in text.split(" || ")] for _, _, text in lessons]
    flat = [v for group in variants for v in group]
    texts = [content for _, _, content in stored] + flat
    vectors = embeddings.encode(texts) if texts else []
    memory_vectors = vectors[: len(stored)]
    variant_vectors, offset = [], len(stored)
    for group in variants:
        variant_vectors.append(vectors[offset : offset + len(group)])
        offset += len(group)

    def matches(memory_index: int, lesson_index: int) -> bool:
        """Whether a stored note says a gold lesson (any of its acceptable wordings)."""
        for variant, vector in zip(variants[lesson_index], variant_vectors[lesson_index], strict=True):
            cosine = float(memory_vectors[memory_index] @ vector)
            if cosine >= MATCH_COSINE:
                return True
            # The project's name is no evidence that a note says the lesson: notes name their project.
            named = content_words(stored[memory_index][0].project.replace("-", " "))
            gold = content_words(variant) - named
            overlap = len(gold & content_words(stored[memory_index][2])) / max(1, len(gold))
            if cosine >= MATCH_COSINE_LOOSE and overlap >= MATCH_OVERLAP_LOOSE:
                return True
        return False

    key_of_memory: dict[int, str | None] = {}
    for m_index, (session, _, _) in enumerate(stored):
        own = [i for i, (s, _, _) in enumerate(lessons) if s is session]
        best = [i for i in own if matches(m_index, i)]
        key_of_memory[m_index] = lessons[best[0]][1] if best else None
    first_for_key: dict[str, int] = {}
    duplicates = []
    for m_index in range(len(stored)):
        key = key_of_memory[m_index]
        if key is None:
            continue
        if key in first_for_key:
            duplicates.append(m_index)
        else:
            first_for_key[key] = m_index
    memory_ids = {memory_id: index for index, (_, memory_id, _) in enumerate(stored)}
    found_lessons = []
    for session, key, _ in lessons:
        own_hit = any(key_of_memory[m] == key and stored[m][0] is session for m in range(len(stored)))
        earlier = [memory_ids[m] for m in reinforced.get(session.id, set()) if m in memory_ids]
        reinforced_hit = any(key_of_memory.get(m) == key for m in earlier)
        found_lessons.append(own_hit or reinforced_hit)

    by_kind: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    for m_index, (session, _, content) in enumerate(stored):
        stats = by_kind[session.kind]
        stats["stored"] += 1
        stats["correct"] += key_of_memory[m_index] is not None and m_index not in duplicates
        stats["duplicates"] += m_index in duplicates
        stats["self_contained"] += self_contained(content)
        stats["held"] += stored[m_index][1] in held
    for l_index, (session, _, _) in enumerate(lessons):
        by_kind[session.kind]["lessons"] += 1
        by_kind[session.kind]["found"] += found_lessons[l_index]
    for session in sessions:
        by_kind[session.kind]["sessions"] += 1
    return {
        "stored": stored,
        "lessons": lessons,
        "key_of_memory": key_of_memory,
        "duplicates": duplicates,
        "held": held,
        "found": found_lessons,
        "by_kind": by_kind,
        "seconds": seconds,
        "messages": messages,
        "start_up": start_up,
    }


def summary(sessions: list[Session], result: dict) -> dict:
    """The figures of one run: precision, recall, duplicates, self-contained share, throughput."""
    totals = defaultdict(int)
    for stats in result["by_kind"].values():
        for name, value in stats.items():
            totals[name] += value
    return {
        "sessions": len(sessions),
        "messages": result["messages"],
        "lessons": len(result["lessons"]),
        "stored": totals["stored"],
        "precision": round(totals["correct"] / max(1, totals["stored"]), 3),
        "recall": round(totals["found"] / max(1, totals["lessons"]), 3),
        "duplicates": totals["duplicates"],
        "held_for_review": totals["held"],
        "self_contained": round(totals["self_contained"] / max(1, totals["stored"]), 3),
        "messages_per_second": round(result["messages"] / max(result["seconds"], 1e-9), 1),
        "start_up_seconds": round(result["start_up"], 2),
        "by_kind": {kind: dict(stats) for kind, stats in result["by_kind"].items()},
    }


def print_run(label: str, sessions: list[Session], result: dict, figures: dict, *, show: bool) -> None:
    print(
        f"\n{label}: {len(sessions)} sessions, {result['messages']} messages, {len(result['lessons'])} gold lessons"
    )
    print(
        f"{'kind':<20} {'sess':>4} {'lessons':>7} {'found':>5} {'stored':>6} {'correct':>7} {'dups':>4} {'self-cont':>9}"
    )
    for kind, stats in sorted(result["by_kind"].items()):
        print(
            f"{kind:<20} {stats['sessions']:>4} {stats['lessons']:>7} {stats['found']:>5} {stats['stored']:>6} "
            f"{stats['correct']:>7} {stats['duplicates']:>4} {stats['self_contained']:>9}"
        )
    print(
        f"precision {figures['precision']:.3f}, recall {figures['recall']:.3f}, duplicates {figures['duplicates']}, "
        f"held for review {figures['held_for_review']}, "
        f"self-contained {figures['self_contained']:.3f}, {figures['messages_per_second']:.0f} messages/s "
        f"(the worker's start-up, timed apart: {figures['start_up_seconds']:.1f} s)"
    )
    if not show:
        return
    stored, lessons = result["stored"], result["lessons"]
    for index, (session, _, content) in enumerate(stored):
        if result["key_of_memory"][index] is None:
            print(f"  junk   [{session.id}] {content}")
        elif index in result["duplicates"]:
            print(f"  dup    [{session.id}] {content}")
        elif stored[index][1] in result["held"]:
            print(f"  held   [{session.id}] {content}")
        elif not self_contained(content):
            print(f"  chatty [{session.id}] {content}")
    for index, (session, key, text) in enumerate(lessons):
        if not result["found"][index]:
            print(f"  missed [{session.id}] {key}: {text}")


def measure(paths: Path | tuple[Path, ...], label: str) -> tuple[list[Session], dict, dict]:
    """One data set (a file or several) through the real API and extraction, in its own throwaway
    database."""
    sessions = [s for path in (paths if isinstance(paths, tuple) else (paths,)) for s in load_sessions(path)]
    with scratch_database(f"bench_extraction_{label}"):
        result = run(sessions)
    return sessions, result, summary(sessions, result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data", nargs="?", type=Path, help="one data file instead of the dev and frozen test splits"
    )
    parser.add_argument(
        "--split", choices=("dev", "test", "both"), default="both", help="which splits (without a data file)"
    )
    parser.add_argument(
        "--show",
        action="store_true",
        help="print unmatched memories and missed lessons (dev or a given file)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from bench.splits import side_by_side, split_path

    if args.data:
        sessions, result, figures = measure(args.data, "given")
        print_run(str(args.data), sessions, result, figures, show=args.show)
        print(json.dumps(figures, sort_keys=True))
        return 0
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    figures = {}
    for split in splits:
        sessions, result, figures[split] = measure(split_path("extraction", split), split)
        # A test split's misses are not listed: it is fixed by dev cases of the same family.
        print_run(split, sessions, result, figures[split], show=args.show and split == "dev")
    if len(figures) == 2:
        dev, test = figures["dev"], figures["test"]
        print(
            side_by_side(
                "Extraction",
                [
                    (
                        "sessions / gold lessons",
                        f"{dev['sessions']}/{dev['lessons']}",
                        f"{test['sessions']}/{test['lessons']}",
                        "",
                    ),
                    ("precision", dev["precision"], test["precision"], ">= 0.9"),
                    ("recall", dev["recall"], test["recall"], ">= 0.8"),
                    ("lessons stored twice", dev["duplicates"], test["duplicates"], "0"),
                    ("stored but held for review", dev["held_for_review"], test["held_for_review"], ""),
                    ("self-contained", dev["self_contained"], test["self_contained"], ""),
                    ("messages/s", dev["messages_per_second"], test["messages_per_second"], ">= 300"),
                ],
            )
        )
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
