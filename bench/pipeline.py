"""The learning pipeline's speed: ``python -m bench.pipeline [--sessions 50] [--messages 40] [--observations 1000]``.

In a throwaway database on the configured server: extraction throughput (messages per second) of
the rule-based extractor over synthetic ended sessions, run in-process exactly as the worker runs
it (claim, extract, embed, skip near-duplicates, store, mark done), and the time reflection takes
to condense N synthetic observations written in near-duplicate groups. Nothing is queued: the
sessions are written with the ORM, so a running worker never sees them. Prints a table, then one
line of JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

from bench.latency import OBJECTS, SUBJECTS, VERBS
from bench.scratch import scratch_database

CHATTER = [
    "Let me look at the failing test first.",
    "I'll open the module and read the function.",
    "Here is the diff I applied to the handler.",
    "Running the test suite again now.",
    "The build output is below.",
    "Okay, what should we do about the retries?",
]
CUES = [
    "No, don't use {s} directly — always go through {o}.",
    "Turns out {s} {v} {o}.",
    "We decided to keep {s} and drop {o}.",
    "From now on {s} {v} {o}.",
    "The root cause was {s}, which {v} {o}.",
    "Streaming for {s} is not supported by {o}.",
]
PARAPHRASES = [
    "{s} {v} {o}.",
    "Remember that {s} {v} {o}.",
    "Note: {s} {v} {o}, every time.",
    "Keep in mind: {s} {v} {o}.",
    "Heads up, {s} {v} {o}.",
]


def synthetic_transcript(rng: random.Random, count: int) -> list[dict]:
    messages = []
    for seq in range(count):
        role = ("user", "assistant", "tool")[seq % 3]
        s, v, o = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
        if role == "tool":
            content = f"error: {s} failed\n  File 'app.py', line {rng.randint(1, 400)}"
        elif rng.random() < 0.25:
            content = rng.choice(CUES).format(s=s, v=v, o=o)
        else:
            content = rng.choice(CHATTER) + " " + f"It is about {s}."
        messages.append({"seq": seq, "role": role, "content": content})
    return messages


def synthetic_observations(count: int, seed: int = 5) -> list[dict]:
    """Groups of paraphrases of one statement (to be condensed), and singletons (to be left alone)."""
    rng = random.Random(seed)
    items, seen = [], set()
    while len(items) < count:
        s, v, o = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
        if (s, v, o) in seen:
            continue
        seen.add((s, v, o))
        size = rng.choice([1, 1, 2, 3, 4, 5])
        for template in PARAPHRASES[:size]:
            items.append({"content": template.format(s=s, v=v, o=o), "category": "workflow"})
    return items[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--messages", type=int, default=40, help="messages per session")
    parser.add_argument("--observations", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.messages < 1 or args.observations < 10:
        parser.error("use at least 1 session, 1 message and 10 observations")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from memory import embeddings
    from memory.models import Session, SessionMessage
    from memory.services.extraction import extraction_run
    from memory.services.reflection import reflection_run
    from memory.services.store import memory_store_batch
    from memory.services.teams import member_add, team_default

    results: dict = {}
    with scratch_database("memorylane_pipeline"):
        embeddings.get_model()
        rng = random.Random(3)
        team = team_default()  # the scratch database's one team
        user = get_user_model().objects.create_user(username="bench")
        member_add(team=team, user=user, role="member")
        sessions = []
        for index in range(args.sessions):
            session = Session.objects.create(
                team=team,
                user=user,
                external_id=f"bench-{index}",
                ended_at=timezone.now(),
                success=True,
                error_count=rng.randint(0, 3),
                duration_ms=rng.randint(10_000, 900_000),
                files_touched=[f"src/{rng.choice(['auth', 'billing', 'search'])}/module.py"],
                summary="Worked on the module",
                evaluation="Build failed once because a fixture was missing, fixed by adding it.",
            )
            SessionMessage.objects.bulk_create(
                SessionMessage(team_id=session.team_id, session=session, **message)
                for message in synthetic_transcript(rng, args.messages)
            )
            sessions.append(session)
        started = time.perf_counter()
        added = 0
        for session in sessions:
            added += len(extraction_run(session.pk).added)
        seconds = time.perf_counter() - started
        total = args.sessions * args.messages
        results["extraction"] = {
            "sessions": args.sessions,
            "messages": total,
            "memories": added,
            "seconds": round(seconds, 2),
            "messages_per_second": round(total / seconds, 1),
            "sessions_per_second": round(args.sessions / seconds, 2),
        }

        print(f"Storing {args.observations} observations…", file=sys.stderr)
        from memory.models import Memory

        Memory.objects.for_team(team).delete()
        items = synthetic_observations(args.observations)
        for start in range(0, len(items), 100):
            memory_store_batch(items[start : start + 100], team=team, dedupe=False)
        started = time.perf_counter()
        report = reflection_run(team=team)
        seconds = time.perf_counter() - started
        results["reflection"] = {
            "observations": report.observations,
            "clusters": report.clusters,
            "reflections": len(report.created),
            "condensed": report.condensed,
            "seconds": round(seconds, 2),
        }
        started = time.perf_counter()
        again = reflection_run(team=team)
        results["reflection"]["second_run_seconds"] = round(time.perf_counter() - started, 2)
        results["reflection"]["second_run_created"] = len(again.created)

    e, r = results["extraction"], results["reflection"]
    print(f"{'measure':<28} {'value':>12}")
    print(f"{'extraction messages/s':<28} {e['messages_per_second']:>12}")
    print(f"{'extraction sessions/s':<28} {e['sessions_per_second']:>12}")
    print(f"{'memories extracted':<28} {e['memories']:>12}")
    print(f"{'reflection seconds':<28} {r['seconds']:>12}")
    print(f"{'  observations / clusters':<28} {str(r['observations']) + ' / ' + str(r['clusters']):>12}")
    print(f"{'  second run seconds':<28} {r['second_run_seconds']:>12}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
