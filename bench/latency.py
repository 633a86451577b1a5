"""Latency and scale: ``python -m bench.latency --memories 10000 [--queries 500]``.

In a throwaway database on the configured server: stores N synthetic memories (batched, through
the real store service), measures store throughput single and batched, then search latency
p50/p95 at the service level (query embedding included) and over HTTP when the API is mounted,
and the vector step alone with the HNSW index versus an exact scan. Prints a table, then one
line of JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

from bench.scratch import scratch_database

PROJECTS = [
    "billing-api",
    "web-dashboard",
    "mobile-app",
    "data-pipeline",
    "infra",
    "search-service",
    "auth-gateway",
]
FEATURES = [
    "payments",
    "auth",
    "notifications",
    "search",
    "feature-flags",
    "reporting",
    "onboarding",
    "exports",
]
SUBJECTS = [
    "the ledger lock",
    "webhook retries",
    "the nightly export",
    "token refresh",
    "the CI cache",
    "database migrations",
    "the staging deploy",
    "flaky end-to-end tests",
    "currency rounding",
    "push notification batching",
    "the search index rebuild",
    "Redis eviction",
    "Celery task retries",
    "feature flag defaults",
    "S3 presigned URLs",
    "the on-call rotation",
    "log sampling",
    "the GraphQL schema",
    "rate limiting",
    "image resizing",
]
VERBS = [
    "must run before",
    "breaks when combined with",
    "was replaced by",
    "needs a manual step after",
    "times out unless you raise",
    "is cached for an hour by",
    "is owned by the team behind",
    "silently skips",
    "should be configured through",
    "has to be idempotent because of",
]
OBJECTS = [
    "the release script",
    "pytest in CI",
    "the mobile build",
    "the Terraform plan",
    "the warehouse loader",
    "the payment gateway",
    "the admin dashboard",
    "the cron replacement in beat",
    "the API gateway",
    "the backfill job",
    "the docs site",
    "the metrics exporter",
]
REASONS = [
    "otherwise the job deadlocks",
    "we lost a day to this in October",
    "the vendor changed its API",
    "the default is unsafe",
    "it doubles the bill",
    "customers saw stale data",
    "the retry storm took prod down",
    "it is the only way to keep the schema in sync",
    "the old path is deprecated",
    "QA cannot reproduce it otherwise",
]
QUESTION_STARTS = [
    "what do we know about",
    "what mistake did we make with",
    "why did we choose the approach for",
    "how should I handle",
    "what is our usual pattern for",
    "any gotchas with",
    "what did we learn about",
]
TYPES = [
    "correction",
    "decision",
    "commitment",
    "insight",
    "learning",
    "pattern_seed",
    "workflow_note",
    "gap",
]
CATEGORIES = ["convention", "gotcha", "debugging", "architecture", "workflow"]


def synthetic_memories(count: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for i in range(count):
        subject, verb, obj, reason = (
            rng.choice(SUBJECTS),
            rng.choice(VERBS),
            rng.choice(OBJECTS),
            rng.choice(REASONS),
        )
        code = f"ERR_{rng.choice(['LEDGER', 'TOKEN', 'EXPORT', 'SYNC', 'QUEUE'])}_{rng.randint(100, 999)}"
        content = f"{subject.capitalize()} {verb} {obj}; {reason} (ticket ML-{i}, code {code})."
        items.append(
            {
                "content": content,
                "memory_type": rng.choice(TYPES),
                "category": rng.choice(CATEGORIES),
                "priority": rng.choices(["critical", "moderate", "ephemeral"], [1, 6, 2])[0],
                "entities": [f"project:{rng.choice(PROJECTS)}", f"feature:{rng.choice(FEATURES)}"],
                "source": "import",
            }
        )
    return items


def synthetic_queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(QUESTION_STARTS)} {rng.choice(SUBJECTS)} in {rng.choice(OBJECTS)}?"
        for _ in range(count)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(ms: list[float]) -> dict:
    return {
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "n": len(ms),
    }


def measure_search(queries: list[str], **kwargs) -> list[float]:
    from memory.services.search import memory_search

    timings = []
    for text in queries:
        started = time.perf_counter()
        memory_search(query=text, record=False, **kwargs)
        timings.append(1000 * (time.perf_counter() - started))
    return timings


def measure_vector_step(queries: list[str], *, exact: bool) -> list[float]:
    from django.db import connection, transaction

    from memory import embeddings
    from memory.models import Memory

    vectors = embeddings.encode(queries)
    timings = []
    for vector in vectors:
        started = time.perf_counter()
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('hnsw.ef_search', '100', true)")
            list(Memory.objects.servable().nearest(vector, 50, exact=exact).values_list("pk", flat=True))
        timings.append(1000 * (time.perf_counter() - started))
    return timings


def measure_http(queries: list[str]) -> dict | None:
    """Search over HTTP through Django's full request stack, when the search endpoint exists."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import NoReverseMatch, reverse

    try:
        url = reverse("api-search")
    except NoReverseMatch:
        return None
    from memory.services.tokens import token_create

    user = get_user_model().objects.create_user(username=f"bench-{os.getpid()}")
    _, key = token_create(user=user, scopes=["read"])
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    timings = []
    for text in queries:
        started = time.perf_counter()
        response = client.get(url, {"q": text, "limit": 10})
        timings.append(1000 * (time.perf_counter() - started))
        if response.status_code != 200:
            raise SystemExit(f"search over HTTP answered {response.status_code}: {response.content[:300]!r}")
    return summary(timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=100)
    args = parser.parse_args(argv)
    if args.memories < 100 or args.queries < 10:
        parser.error("use at least 100 memories and 10 queries")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from django.db import connection

    from memory import embeddings
    from memory.services.store import memory_store, memory_store_batch

    results: dict = {"memories": args.memories, "queries": args.queries}
    with scratch_database("memorylane_latency"):
        embeddings.get_model()  # load once, outside every timing
        items = synthetic_memories(args.memories + 1200)
        bulk, batched, single = (
            items[: args.memories - 1000],
            items[args.memories - 1000 : args.memories],
            items[args.memories :],
        )

        print(f"Loading {len(bulk)} memories…", file=sys.stderr)
        for start in range(0, len(bulk), args.batch_size):
            memory_store_batch(bulk[start : start + args.batch_size], dedupe=False)

        started = time.perf_counter()
        for start in range(0, len(batched), args.batch_size):
            memory_store_batch(batched[start : start + args.batch_size])
        batch_seconds = time.perf_counter() - started
        results["store_batched"] = {
            "memories": len(batched),
            "seconds": round(batch_seconds, 2),
            "per_second": round(len(batched) / batch_seconds, 1),
        }

        started = time.perf_counter()
        for item in single[:200]:
            memory_store(**item)
        single_seconds = time.perf_counter() - started
        results["store_single"] = {
            "memories": 200,
            "seconds": round(single_seconds, 2),
            "per_second": round(200 / single_seconds, 1),
        }
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory_memory")

        queries = synthetic_queries(args.queries)
        measure_search(queries[:20])  # warm caches
        results["search_service"] = summary(measure_search(queries))
        results["search_service_entity_filtered"] = summary(
            measure_search(queries[:100], entities=["project:billing-api"])
        )
        results["vector_hnsw"] = summary(measure_vector_step(queries[:200], exact=False))
        results["vector_exact"] = summary(measure_vector_step(queries[:200], exact=True))
        results["search_http"] = measure_http(queries[:200])

    print(f"{'measure':<34} {'p50 ms':>9} {'p95 ms':>9} {'n':>6}")
    for name in (
        "search_service",
        "search_service_entity_filtered",
        "search_http",
        "vector_hnsw",
        "vector_exact",
    ):
        row = results.get(name)
        if row:
            print(f"{name:<34} {row['p50_ms']:>9.2f} {row['p95_ms']:>9.2f} {row['n']:>6}")
        else:
            print(f"{name:<34} {'n/a (no search endpoint yet)':>26}")
    for name in ("store_batched", "store_single"):
        row = results[name]
        print(f"{name:<34} {row['memories']} memories in {row['seconds']} s ({row['per_second']}/s)")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
