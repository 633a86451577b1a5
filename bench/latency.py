"""Latency and scale: ``python -m bench.latency --memories 10000 [--queries 500] [--profile]``.

In a throwaway database on the configured server (or a kept one, ``--database NAME``): loads N
synthetic memories, measures store throughput single and batched through the real store service,
then search latency p50/p95/p99 at the service level (query embedding included), with an entity
filter that keeps ~1% of the rows and one that keeps ~14%, over HTTP (Django's full request
stack, in process), and the vector step alone with the HNSW index versus an exact scan. Filtered
vector search is checked against an exact scan (recall of the candidates the search uses). Prints
a table, then one line of JSON.

Loading: the first N − 1,200 memories are written in bulk (``bulk_create`` of what the store
service would write: the memory, its hash and scope, its entity mentions; no audit events), the
HNSW index rebuilt once after a large load; the last 1,200 go through the real store service and
are the timed store figures. ``--vectors real`` embeds every memory with the model (cached on disk
under ``MEMORYLANE_HOME/bench-cache``, so a second run does not embed again); ``--vectors
synthetic`` embeds only the first 8,800 (cached likewise) and gives every later memory the vector of
a random one of those plus Gaussian noise, calibrated so that it lies as close to that parent as a
real memory lies to its nearest real neighbour: an HNSW graph of the same shape, without a model call
per memory (for 100,000 or a million memories on two cores). The text stays real, so lexical
matching is unchanged; only which vector goes with which text is synthetic. ``--profile`` adds where the time goes: database time per statement kind
(an execute wrapper), Python time per function (cProfile), and the query embedding alone.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

from bench import stats
from bench.cli import apply_settings
from bench.scratch import kept_database, scratch_database

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
OWNERS = 100  # person:owner-00 … owner-99: an entity filter that keeps ~1% of the memories
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


def synthetic_memories(count: int, seed: int = 7, start: int = 0) -> list[dict]:
    """``count`` memories of ~46 tokens: a template sentence with a unique ticket and error code,
    about one project (of 7), one feature (of 8) and one owner (of 100)."""
    rng = random.Random(seed)
    items = []
    for i in range(start, start + count):
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
                "entities": [
                    f"project:{rng.choice(PROJECTS)}",
                    f"feature:{rng.choice(FEATURES)}",
                    f"person:owner-{rng.randrange(OWNERS):02d}",
                ],
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


def summary(ms: list[float]) -> dict:
    return stats.summary(ms, digits=2)


# --- loading ---------------------------------------------------------------------------------------


def cache_dir() -> Path:
    from django.conf import settings

    path = Path(settings.MEMORYLANE_HOME) / "bench-cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def real_vectors(items: list[dict], seed: int):
    """The model's embedding of every item, cached on disk by (seed, count)."""
    import numpy as np

    from memory import embeddings

    path = cache_dir() / f"latency-real-{seed}-{len(items)}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.zeros((len(items), 384), dtype=np.float32)
    step = 2000
    for start in range(0, len(items), step):
        vectors[start : start + step] = embeddings.encode([i["content"] for i in items[start : start + step]])
        print(f"  embedded {min(start + step, len(items))} / {len(items)}", file=sys.stderr)
    np.save(path, vectors)
    return vectors


def synthetic_vectors(items: list[dict], seed: int, parents: int = 8800) -> tuple:
    """Real embeddings for the first ``parents`` items (the model's, cached); every later item gets
    the embedding of a random one of those plus Gaussian noise, calibrated so that it lies as close
    to that parent as a real memory lies to its nearest real neighbour (see the module docstring)."""
    import numpy as np

    real = real_vectors(items[:parents], seed)
    rng = np.random.default_rng(seed)
    sample = real[rng.choice(len(real), size=min(1000, len(real)), replace=False)]
    similarity = sample @ real.T
    similarity[similarity > 0.9999] = -1.0  # not itself
    target = float(np.mean(similarity.max(axis=1)))
    sigma = 0.0
    for sigma in np.linspace(0.001, 0.1, 200):
        trial = sample + rng.normal(0, sigma, sample.shape)
        trial /= np.linalg.norm(trial, axis=1, keepdims=True)
        if float(np.mean(np.sum(trial * sample, axis=1))) <= target:
            break
    vectors = np.empty((len(items), 384), dtype=np.float32)
    vectors[: len(real)] = real
    step = 50000
    for start in range(len(real), len(items), step):
        count = min(step, len(items) - start)
        noisy = real[rng.integers(0, len(real), count)] + rng.normal(0, sigma, (count, 384))
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        vectors[start : start + count] = noisy
    return vectors, {
        "real_parents": len(real),
        "nearest_neighbour_cosine": round(target, 4),
        "noise_sigma": round(float(sigma), 5),
    }


HNSW_BUILD_BYTES_PER_ROW = 4096  # maintenance_work_mem for the index build, with room to spare


def bench_team():
    """The team a benchmark's memories live in: ``default``, a single-team deployment's (created
    when missing; an upgraded database holds its existing memories there)."""
    from memory.services.teams import team_default

    return team_default()


def bench_member(username: str, team, role: str = "member"):
    """A user of ``team`` (created when missing) who can hold a token of it."""
    from django.contrib.auth import get_user_model

    from memory.services.teams import member_add

    user, _ = get_user_model().objects.get_or_create(username=username)
    member_add(team=team, user=user, role=role)
    return user


def bulk_load(items: list[dict], vectors, *, rebuild_index: bool, team, analyze: bool = True) -> dict:
    """Write what the store service would write for ``items`` (memories and entity mentions) into
    ``team``, fast (``analyze``: then vacuum and analyze the tables)."""
    from django.db import connection, transaction
    from django.utils import timezone

    from memory.models import EntityMention, Memory
    from memory.services import entities as entity_service
    from memory.services.upsert import content_hash, scope_key, scope_of

    slugs = sorted({slug for item in items for slug in item["entities"]})
    by_slug = entity_service.entities_for_slugs(slugs, team=team, create=True)
    timings: dict = {}
    if rebuild_index:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
    started = time.perf_counter()
    now = timezone.now()
    step = 2000
    for start in range(0, len(items), step):
        chunk = items[start : start + step]
        memories = [
            Memory(
                id=uuid.uuid4(),
                team=team,
                content=item["content"],
                content_hash=content_hash(item["content"]),
                scope_key=scope_key(scope_of(item["entities"])),
                memory_type=item["memory_type"],
                category=item["category"],
                priority=item["priority"],
                embedding=vectors[start + k],
                source=item["source"],
                valid_from=now,
                last_validated_at=now,
                created_at=now,
            )
            for k, item in enumerate(chunk)
        ]
        with transaction.atomic():
            Memory.objects.bulk_create(memories)
            EntityMention.objects.bulk_create(
                [
                    EntityMention(
                        team_id=memory.team_id, memory=memory, entity=by_slug[slug], raw=slug, resolved=True
                    )
                    for memory, item in zip(memories, chunk, strict=True)
                    for slug in item["entities"]
                ]
            )
        if (start // step) % 25 == 0 and len(items) > 25 * step:
            print(f"  loaded {start + len(chunk)} / {len(items)}", file=sys.stderr)
    timings["bulk_insert_seconds"] = round(time.perf_counter() - started, 1)
    if rebuild_index:
        started = time.perf_counter()
        with connection.cursor() as cursor:
            # Every team's rows: the index holds them all.
            cursor.execute("SELECT count(*) FROM memory_memory")
            (rows,) = cursor.fetchone()
            # The graph is built in memory when it fits (about 2.5 KB a row at 384 dimensions, m 16);
            # when it does not, pgvector goes on on disk, many times slower.
            gigabytes = max(2, math.ceil(rows * HNSW_BUILD_BYTES_PER_ROW / 2**30))
            cursor.execute(f"SET maintenance_work_mem = '{gigabytes}GB'")
            cursor.execute("SET max_parallel_maintenance_workers = 1")
            cursor.execute(
                "CREATE INDEX memory_embedding_hnsw ON memory_memory USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = 16, ef_construction = 64)"
            )
        timings["hnsw_build_seconds"] = round(time.perf_counter() - started, 1)
    if not analyze:
        return timings
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_memory")
        cursor.execute("ANALYZE memory_entitymention")
    return timings


# --- measuring -------------------------------------------------------------------------------------


def measure_search(queries: list[str], *, team, **kwargs) -> list[float]:
    from memory.services.search import memory_search

    timings = []
    for text in queries:
        started = time.perf_counter()
        memory_search(team=team, query=text, record=False, **kwargs)
        timings.append(1000 * (time.perf_counter() - started))
    return timings


def measure_vector_step(queries: list[str], *, exact: bool, team) -> list[float]:
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
            list(
                Memory.objects.for_team(team)
                .servable()
                .nearest(vector, 50, exact=exact)
                .values_list("pk", flat=True)
            )
        timings.append(1000 * (time.perf_counter() - started))
    return timings


def filtered_recall(queries: list[str], entities: list[str], n: int = 50, *, team) -> dict:
    """Recall of the vector candidates a search filtered to ``entities`` (any of them) uses, against
    an exact scan of the same filter (:func:`vector_recall`)."""
    from memory.models import Entity, Memory

    entity_ids = list(Entity.objects.for_team(team).filter(slug__in=entities).values_list("pk", flat=True))
    base = Memory.objects.for_team(team).servable().mentioning(entity_ids)
    return vector_recall(queries, base, filtered=True, n=n, team=team)


def unfiltered_recall(queries: list[str], n: int = 50, *, team) -> dict:
    """Recall of the unfiltered vector candidates against an exact scan of every memory of the team
    (unfiltered as a search plans it: the team is a filter only when there are several,
    search.memory_search)."""
    from memory.models import Memory
    from memory.services.search import several_teams

    return vector_recall(
        queries, Memory.objects.for_team(team).servable(), filtered=several_teams(), n=n, team=team
    )


# A question whose vector list holds less than this share of the exact top n counts as stranded.
STRANDED_RECALL = 0.9


def vector_recall(queries: list[str], base, *, filtered: bool, n: int = 50, team) -> dict:
    """How many of the exact top ``n`` of ``base`` the vector list finds: the plan alone
    (``recall``, ``min``: search.vector_candidates), and the list a search ranks (``search``: a
    scan the lexical list shows stranded is run again, search.rescued_vector_candidates), with how
    often each plan was taken by each, and how many questions each left below STRANDED_RECALL."""
    from django.db import transaction

    from memory import embeddings
    from memory.services import search

    planned, searched, plans, search_plans = [], [], {}, {}
    for query, vector in zip(queries, embeddings.encode(queries), strict=True):
        with transaction.atomic():
            exact = set(base.nearest(vector, n, exact=True).values_list("pk", flat=True))
        with transaction.atomic():
            found, plan = search.vector_candidates(base, vector, n, filtered=filtered)
        candidates, _, search_plan = search.gather_candidates(base, query, n, team=team, exact=filtered)
        plans[plan] = plans.get(plan, 0) + 1
        search_plans[search_plan] = search_plans.get(search_plan, 0) + 1
        listed = {c.memory.pk for c in candidates if c.vector_rank is not None}
        planned.append(len(exact & set(found)) / max(1, len(exact)))
        searched.append(len(exact & listed) / max(1, len(exact)))
    return {
        "recall": round(statistics.fmean(planned), 4),
        "min": round(min(planned), 4),
        "stranded": sum(recall < STRANDED_RECALL for recall in planned),
        "plans": plans,
        "search": {
            "recall": round(statistics.fmean(searched), 4),
            "min": round(min(searched), 4),
            "stranded": sum(recall < STRANDED_RECALL for recall in searched),
        },
        "search_plans": search_plans,
    }


def http_client(team):
    from django.test import Client

    from memory.services.tokens import token_create

    user = bench_member(f"bench-{os.getpid()}", team)
    _, key = token_create(user=user, team=team, scopes=["read", "write"])
    return Client(HTTP_AUTHORIZATION=f"Bearer {key}")


def measure_http(queries: list[str], client) -> list[float]:
    """Search over HTTP through Django's full request stack (in process: no socket), as ``client``
    (:func:`http_client`)."""
    from django.urls import reverse

    url = reverse("api-search")
    timings = []
    for text in queries:
        started = time.perf_counter()
        response = client.get(url, {"q": text, "limit": 10})
        timings.append(1000 * (time.perf_counter() - started))
        if response.status_code != 200:
            raise SystemExit(f"search over HTTP answered {response.status_code}: {response.content[:300]!r}")
    return timings


# --- profiling -------------------------------------------------------------------------------------


def sql_kind(sql: str) -> str:
    """What a statement is for (substring tests: a regex over an 8 KB vector literal is itself slow)."""
    head = sql[:200].lstrip().upper()
    if head.startswith(
        ("SAVEPOINT", "RELEASE", "ROLLBACK", "SET ", "SELECT SET_CONFIG", "SELECT CURRENT_SETTING")
    ):
        return "transaction / settings"
    if head.startswith("EXPLAIN"):
        return "vector: plan estimate"
    if "pg_stats" in sql or "pg_class" in sql or "SELECT t.lexeme" in sql:
        return "lexical: corpus statistics"
    if "unnest(to_tsvector" in sql:
        return "lexical: the query's words"
    if head.startswith("WITH ") and ("ts_rank" in sql or "ts_filter" in sql):
        return "lexical: BM25 candidates"
    if "<=>" in sql:
        return "vector: nearest" if " LIMIT " in sql else "candidates: fetch rows + similarity"
    if head.startswith('UPDATE "MEMORY_MEMORY"') or "memory_recall" in sql:
        return "record retrieval"
    if "memory_apitoken" in sql:
        return "auth: token lookup / last used"
    if 'FROM "memory_entity"' in sql:
        return "entities: detect / resolve"
    if "memory_entitymention" in sql and "memory_memory" not in sql[:300]:
        return "serialize or entity match: mentions"
    if "memory_memory" in sql:
        return "serialize: memories"
    return "other"


class SqlTimer:
    """A Django execute wrapper: database time per statement kind."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.count: dict[str, int] = {}

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            elapsed = time.perf_counter() - started
            kind = sql_kind(sql)
            self.seconds[kind] = self.seconds.get(kind, 0.0) + elapsed
            self.count[kind] = self.count.get(kind, 0) + 1


PYTHON_FUNCTIONS = [
    ("memory_search (all of it)", "search/__init__.py", "memory_search"),
    ("  validate + redact the query", "redaction.py", "redact"),
    ("  resolve explicit entities", "entities.py", "resolve_references"),
    ("  gather_candidates", "search/candidates.py", "gather_candidates"),
    ("    lexical_candidates", "search/lexical.py", "lexical_candidates"),
    ("    wait for the query embedding", "_base.py", "result"),
    ("    vector_candidates", "search/vector.py", "vector_candidates"),
    ("    detect entities in the query", "entities.py", "detect_in_text"),
    ("  score_candidate (all candidates)", "search/scoring.py", "score_candidate"),
    ("  record_retrieval", "search/record.py", "record_retrieval"),
    ("HTTP: Django handler (all of it)", "base.py", "get_response"),
    ("  token authentication", "tokens.py", "token_authenticate"),
    ("  throttle", "throttling.py", "allow_request"),
    ("  search_result (serialize)", "views.py", "search_result"),
    ("  JSON render", "renderers.py", "render"),
]


def profile(label: str, run, count: int, top: int = 12) -> dict:
    """Run ``run()`` under cProfile and the SQL timer; print and return ms per query by part."""
    from django.db import connection

    timer = SqlTimer()
    profiler = cProfile.Profile()
    with connection.execute_wrapper(timer):
        profiler.enable()
        run()
        profiler.disable()
    stats = pstats.Stats(profiler)
    by_part: dict = {"python": {}, "sql": {}}
    for name, filename, function in PYTHON_FUNCTIONS:
        total = sum(
            value[3]
            for (path, _, func), value in stats.stats.items()
            if func == function and path.endswith(filename)
        )
        if total:
            by_part["python"][name] = round(1000 * total / count, 2)
    for kind, seconds in sorted(timer.seconds.items(), key=lambda kv: -kv[1]):
        by_part["sql"][kind] = {
            "ms_per_query": round(1000 * seconds / count, 2),
            "statements_per_query": round(timer.count[kind] / count, 2),
        }
    print(f"\n{label}: milliseconds per query ({count} queries)", file=sys.stderr)
    for name, ms in by_part["python"].items():
        print(f"  {name:<44} {ms:>8.2f}", file=sys.stderr)
    print("  database time by statement kind (included above):", file=sys.stderr)
    for kind, row in by_part["sql"].items():
        print(
            f"    {kind:<42} {row['ms_per_query']:>8.2f}  ({row['statements_per_query']} statements)",
            file=sys.stderr,
        )
    print(f"  top {top} functions by own time:", file=sys.stderr)
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    by_part["top_own_time"] = []
    for (path, line, func), value in rows:
        where = f"{Path(path).name}:{line}:{func}"
        print(f"    {where:<60} {1000 * value[2] / count:>8.2f}", file=sys.stderr)
        by_part["top_own_time"].append([where, round(1000 * value[2] / count, 2)])
    return by_part


# --- many teams ------------------------------------------------------------------------------------


def team_slug(index: int) -> str:
    return f"bench-{index:03d}"


def load_teams(args) -> dict:
    """``args.teams`` teams of ``args.memories // args.teams`` memories each (synthetic vectors, as
    for a million: the module docstring), loaded in bulk, team after team. The table's own HNSW
    index is dropped first and not built again: a search of a team in a deployment of several never
    scans it (search.memory_search plans an exact scan of the team's memories, or its own index);
    leaving it out loads faster. So the cost it adds to a store is not in the store figures of such
    a run."""
    from django.db import connection

    from memory.models import Memory, Team
    from memory.services.team_indexes import team_sizes
    from memory.services.teams import team_create

    per_team = args.memories // args.teams
    info: dict = {"per_team": per_team}
    sizes = team_sizes()
    loaded = {
        team.slug for team in Team.objects.filter(slug__startswith="bench-") if sizes.get(team.pk) == per_team
    }
    missing = [index for index in range(args.teams) if team_slug(index) not in loaded]
    info["already_loaded"] = args.teams - len(missing)
    if not missing:
        return info
    items = synthetic_memories(per_team * args.teams, seed=args.seed)
    vectors, info["synthetic"] = synthetic_vectors(items, args.seed)
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
    started = time.perf_counter()
    for index in missing:
        team = Team.objects.filter(slug=team_slug(index)).first() or team_create(slug=team_slug(index))
        Memory.objects.filter(team=team).delete()  # a load cut short half-way is loaded again
        chunk = slice(index * per_team, (index + 1) * per_team)
        bulk_load(items[chunk], vectors[chunk], rebuild_index=False, team=team, analyze=False)
        print(f"  team {index + 1} / {args.teams} loaded", file=sys.stderr)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_memory")
        cursor.execute("ANALYZE memory_entitymention")
    info["bulk_insert_seconds"] = round(time.perf_counter() - started, 1)
    return info


def single_team_baseline(args) -> dict:
    """The same measures on a deployment of one team of ``args.memories // args.teams`` memories:
    this module run again in a child process, on its own database."""
    import subprocess

    per_team = args.memories // args.teams
    command = [
        sys.executable, "-m", "bench.latency",
        "--memories", str(per_team),
        "--queries", str(args.queries),
        "--store-batched", "0",
        "--store-single", "0",
        "--recall-queries", str(args.recall_queries),
        "--vectors", "synthetic",
        "--seed", str(args.seed),
        *(["--database", f"{args.database}_single"] if args.database else []),
        *[option for pair in args.set for option in ("--set", pair)],
    ]  # fmt: skip
    print(f"Single-team baseline: {' '.join(command[1:])}", file=sys.stderr)
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_teams(args, queries: list[str], teams: list) -> dict:
    """Search p50/p95/p99 at the service level, each question asked of one of ``teams`` in turn, and
    the recall@10 and @50 of the vector list against an exact scan of the team's memories, with the
    plans taken."""
    from memory.models import Memory
    from memory.services.search import memory_search, several_teams
    from memory.services.team_indexes import has_own_indexes

    for text in queries[:20]:
        memory_search(team=teams[0], query=text, record=False)
    timings = []
    for position, text in enumerate(queries):
        team = teams[position % len(teams)]
        started = time.perf_counter()
        memory_search(team=team, query=text, record=False)
        timings.append(1000 * (time.perf_counter() - started))
    checked = synthetic_queries(args.recall_queries)
    recall: dict = {}
    for n in (10, 50):
        rows = []
        for position, team in enumerate(teams):
            questions = checked[position :: len(teams)]
            if questions:
                filtered = several_teams() and not has_own_indexes(team.pk)
                base = Memory.objects.for_team(team).servable()
                rows.append(
                    (len(questions), vector_recall(questions, base, filtered=filtered, n=n, team=team))
                )
        asked = sum(count for count, _ in rows)
        plans: dict = {}
        for _, row in rows:
            for plan, count in row["search_plans"].items():
                plans[plan] = plans.get(plan, 0) + count
        recall[f"recall_at_{n}"] = {
            "recall": round(sum(count * row["recall"] for count, row in rows) / asked, 4),
            "min": min(row["min"] for _, row in rows),
            "search": round(sum(count * row["search"]["recall"] for count, row in rows) / asked, 4),
            "plans": plans,
        }
    return {"search_service": summary(timings), **recall}


def run_teams(args, results: dict) -> None:
    """``--teams N``: a deployment of N teams, searched team by team, before and after the teams get
    their own indexes (memory.services.team_indexes), beside a single-team deployment of one team's
    size measured in the same run."""
    from django.db import connection

    from memory.models import Team
    from memory.services import search
    from memory.services.team_indexes import (
        IndexPlan,
        existing_team_indexes,
        team_indexes_apply,
        team_indexes_ensure,
    )

    results["teams"] = args.teams
    results["load"] = load_teams(args)
    teams = list(Team.objects.filter(slug__startswith="bench-").order_by("slug"))
    measured = teams[:: max(1, len(teams) // args.measured_teams)][: args.measured_teams]
    results["measured_teams"] = len(measured)
    queries = synthetic_queries(args.queries)
    search.clear_corpus_stats()
    # Before: no team has its own indexes (the plan of a deployment without them).
    indexed, _ = existing_team_indexes()
    if indexed:
        team_indexes_apply(IndexPlan(drop=tuple(sorted(indexed))))
    results["without_team_indexes"] = measure_teams(args, queries, measured)
    started = time.perf_counter()
    report = team_indexes_ensure()
    results["team_index_build"] = {
        "teams": len(report.created),
        "seconds": round(time.perf_counter() - started, 1),
    }
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")
        cursor.execute(
            "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relname LIKE 'memory\\_team\\_%%'"
        )
        results["team_index_bytes"] = int(cursor.fetchone()[0])
    results["with_team_indexes"] = measure_teams(args, queries, measured)
    if args.store_batched + args.store_single:
        stored: list = []
        try:
            measure_stores(args, results, stored, measured[0])
        finally:
            remove_stored(stored, measured[0])
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_memory")
        results["memories"] = cursor.fetchone()[0]


def print_stores(results: dict, *, width: int) -> None:
    for name in ("store_batched", "store_single"):
        if row := results.get(name):
            print(f"{name:<{width}} {row['memories']} memories in {row['seconds']} s ({row['per_second']}/s)")


def print_teams_table(results: dict) -> None:
    single = results["single_team"]["search_service"]
    print(
        f"{results['teams']} teams, {results['memories']} memories ({results['load']['per_team']} a team), "
        f"{results['measured_teams']} of them searched; one team of {results['load']['per_team']} beside"
    )
    print(f"{'measure':<40} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9} {'vs single':>10}")
    print(
        f"{'single team (same run)':<40} {single['p50_ms']:>9.2f} {single['p95_ms']:>9.2f} {single['p99_ms']:>9.2f}"
    )
    for name in ("without_team_indexes", "with_team_indexes"):
        row = results[name]["search_service"]
        print(
            f"{name.replace('_', ' '):<40} {row['p50_ms']:>9.2f} {row['p95_ms']:>9.2f} {row['p99_ms']:>9.2f} "
            f"{row['p95_ms'] / single['p95_ms']:>9.2f}x"
        )
        for n in (10, 50):
            recall = results[name][f"recall_at_{n}"]
            print(
                f"  recall@{n}: {recall['recall']:.4f} (min {recall['min']}; as the search ranks it "
                f"{recall['search']:.4f}; plans {recall['plans']})"
            )
    build = results["team_index_build"]
    print(
        f"team indexes: {build['teams']} teams' built in {build['seconds']} s, "
        f"{results['team_index_bytes'] / 2**20:.0f} MB"
    )
    print_stores(results, width=40)


# --- main ------------------------------------------------------------------------------------------


def load(args, team) -> dict:
    from django.db import connection

    from memory.models import Memory

    target = args.memories - args.store_batched - args.store_single
    have = Memory.objects.for_team(team).count()
    info: dict = {"already_loaded": have}
    if have >= target:
        return info
    items = synthetic_memories(target, seed=args.seed)
    bulk = items[have:target]
    print(f"Loading {len(bulk)} memories ({args.vectors} vectors)…", file=sys.stderr)
    if args.vectors == "real":
        vectors = real_vectors(items[:target], args.seed)[have:target]
    else:
        vectors, info["synthetic"] = synthetic_vectors(items, args.seed)
        vectors = vectors[have:target]
    info.update(bulk_load(bulk, vectors, rebuild_index=len(bulk) >= 50000, team=team))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_total_relation_size('memory_memory'), pg_relation_size('memory_embedding_hnsw')"
        )
        total, hnsw = cursor.fetchone()
    info["table_bytes_with_indexes"], info["hnsw_bytes"] = total, hnsw
    return info


def measure_stores(args, results: dict, stored: list, team) -> None:
    """Time batched and single stores; the ids of what was stored are appended to ``stored`` as it
    goes, so that a failure half-way still lets the caller take them out of a kept database."""
    from memory.services.store import memory_store, memory_store_batch

    # Fresh text each run (a kept database must not answer NOOP), removed afterwards.
    run = uuid.uuid4().hex[:6]
    items = synthetic_memories(
        args.store_batched + args.store_single, seed=args.seed + 1, start=args.memories * 10
    )
    for item in items:
        item["content"] = item["content"].replace("(ticket", f"(run {run}, ticket")
    batched, single = items[: args.store_batched], items[args.store_batched :]
    started = time.perf_counter()
    for start in range(0, len(batched), args.batch_size):
        stored += [
            result.memory.pk
            for result in memory_store_batch(batched[start : start + args.batch_size], team=team)
        ]
    seconds = time.perf_counter() - started
    results["store_batched"] = {
        "memories": len(batched),
        "seconds": round(seconds, 2),
        "per_second": round(len(batched) / seconds, 1),
    }
    started = time.perf_counter()
    for item in single:
        stored.append(memory_store(team=team, **item).memory.pk)
    seconds = time.perf_counter() - started
    results["store_single"] = {
        "memories": len(single),
        "seconds": round(seconds, 2),
        "per_second": round(len(single) / seconds, 1),
    }


def remove_stored(ids: list, team) -> None:
    """Take the timed stores out of a kept database again, and undo what they superseded."""
    from memory.models import EntityMention, FactChange, Memory, MemoryEvent

    Memory.objects.for_team(team).filter(superseded_by__in=ids).update(superseded_by=None, valid_until=None)
    FactChange.objects.for_team(team).filter(new_id__in=ids).delete()
    MemoryEvent.objects.for_team(team).filter(memory_id__in=ids).delete()
    EntityMention.objects.for_team(team).filter(memory_id__in=ids).delete()
    Memory.objects.for_team(team).filter(pk__in=ids).delete()


def _at_least_one(value: str) -> int:
    """An argument that counts questions to check: a whole number of at least one."""
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1 (recall needs questions to check)")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--store-batched", type=int, default=1000, help="memories stored in timed batches")
    parser.add_argument("--store-single", type=int, default=200, help="memories stored one at a time, timed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--recall-queries",
        type=_at_least_one,
        default=100,
        help="questions whose vector lists are checked against an exact scan (recall, stranded scans)",
    )
    parser.add_argument("--vectors", choices=["real", "synthetic"], default="real")
    parser.add_argument("--database", help="keep the data in this database (created when missing)")
    parser.add_argument("--profile", action="store_true", help="also print where the time goes")
    parser.add_argument(
        "--teams",
        type=int,
        default=1,
        help="spread --memories over this many teams; measure team-scoped search beside one team of that size",
    )
    parser.add_argument(
        "--measured-teams", type=int, default=10, help="with --teams: how many teams are searched"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=JSON", help="override a MEMORY_LANE setting"
    )
    parser.add_argument(
        "--rerank",
        default="",
        metavar="N,N…",
        help="also time search with the second stage on, reading this many candidates (e.g. 10,20,30)",
    )
    parser.add_argument("--rerank-queries", type=int, default=100, help="questions timed per --rerank depth")
    parser.add_argument(
        "--late",
        default="",
        metavar="N,N…",
        help="also time search with the late-interaction stage reordering this many candidates, every "
        "memory's token vectors computed first (e.g. 10,20,30)",
    )
    parser.add_argument(
        "--after-late",
        default="",
        metavar="N,N…",
        help="also time search with the late-interaction stage at its default depth and the cross-encoder "
        "rereading the first N of its order (RERANK_AFTER_LATE, e.g. 2,3,5)",
    )
    args = parser.parse_args(argv)
    try:
        args.rerank = [int(n) for n in args.rerank.split(",") if n.strip()]
        args.late = [int(n) for n in args.late.split(",") if n.strip()]
        args.after_late = [int(n) for n in args.after_late.split(",") if n.strip()]
    except ValueError:
        parser.error(
            "--rerank, --late and --after-late take candidate counts separated by commas, e.g. 10,20,30"
        )
    if args.memories < args.store_batched + args.store_single + 100 or args.queries < 10:
        parser.error("use at least 100 memories more than the timed stores, and 10 queries")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from django.db import connection

    from memory import embeddings

    apply_settings(parser, args.set)

    results: dict = {"memories": args.memories, "queries": args.queries, "vectors": args.vectors}
    if args.teams > 1:
        results["vectors"] = "synthetic"
        results["single_team"] = single_team_baseline(args)
        database = kept_database(args.database) if args.database else scratch_database("memorylane_teams")
        with database:
            embeddings.get_model()
            run_teams(args, results)
        print_teams_table(results)
        print(json.dumps(results))
        return 0
    database = kept_database(args.database) if args.database else scratch_database("memorylane_latency")
    with database:
        embeddings.get_model()  # load once, outside every timing
        team = bench_team()
        results["load"] = load(args, team)
        stored: list = []
        try:
            if args.store_batched + args.store_single:
                measure_stores(args, results, stored, team)
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE memory_memory")
                cursor.execute("ANALYZE memory_entitymention")
                cursor.execute("SELECT count(*) FROM memory_memory")
                results["memories"] = cursor.fetchone()[0]
            measure(args, results, team)
        finally:
            if stored and args.database:
                remove_stored(stored, team)

    print_table(results)
    print(json.dumps(results))
    return 0


def measure(args, results: dict, team) -> None:
    from memory import embeddings

    queries = synthetic_queries(args.queries)
    one_percent = ["person:owner-42"]
    # Five owners: a filter between the two, which pgvector 0.6's HNSW scan cannot serve at 100,000
    # (too few of even its widest scan's rows pass), so it is an exact scan of ~5,000 rows there.
    five_percent = [f"person:owner-{i:02d}" for i in range(1, 6)]
    project = ["project:billing-api"]
    measure_search(queries[:20], team=team)  # warm caches
    measure_search(queries[:5], entities=one_percent, team=team)
    results["search_service"] = summary(measure_search(queries, team=team))
    results["search_service_entity_1pct"] = summary(
        measure_search(queries[:200], entities=one_percent, team=team)
    )
    results["search_service_entity_5pct"] = summary(
        measure_search(queries[:200], entities=five_percent, team=team)
    )
    results["search_service_entity_project"] = summary(
        measure_search(queries[:200], entities=project, team=team)
    )
    detected = [q.replace("?", " in the billing-api project?") for q in queries[:100]]
    results["search_service_detected_entity"] = summary(measure_search(detected, team=team))
    client = http_client(team)
    measure_http(queries[:10], client)
    results["search_http"] = summary(measure_http(queries[:300], client))
    results["vector_hnsw"] = summary(measure_vector_step(queries[:200], exact=False, team=team))
    results["vector_exact"] = summary(measure_vector_step(queries[:100], exact=True, team=team))
    started = time.perf_counter()
    embeddings.encode(queries[:200])
    results["embed_query_batch_ms_each"] = round(1000 * (time.perf_counter() - started) / 200, 2)
    timings = []
    for text in queries[:200]:
        started = time.perf_counter()
        embeddings.encode_one(text)
        timings.append(1000 * (time.perf_counter() - started))
    results["embed_query"] = summary(timings)
    checked = synthetic_queries(args.recall_queries)  # the first are the questions timed above
    results["recall_entity_1pct"] = filtered_recall(checked, one_percent, team=team)
    results["recall_entity_5pct"] = filtered_recall(checked, five_percent, team=team)
    results["recall_entity_project"] = filtered_recall(checked, project, team=team)
    results["recall_unfiltered"] = unfiltered_recall(checked, team=team)
    if args.rerank:
        results["rerank"] = measure_rerank(queries[: args.rerank_queries], args.rerank, client, team=team)
    if args.late or args.after_late:
        results["late"] = measure_late(
            queries[: args.rerank_queries], args.late, team=team, after_late=args.after_late
        )
    if args.profile:
        sample = queries[:150]
        results["profile_service"] = profile(
            "search, service level", lambda: measure_search(sample, team=team), len(sample)
        )
        results["profile_service_entity_1pct"] = profile(
            "search with the 1% entity filter",
            lambda: measure_search(sample, entities=one_percent, team=team),
            len(sample),
        )
        results["profile_service_entity_project"] = profile(
            "search with the project filter (14%)",
            lambda: measure_search(sample, entities=project, team=team),
            len(sample),
        )
        results["profile_http"] = profile(
            "search over HTTP (in process)", lambda: measure_http(sample, client), len(sample)
        )


def measure_rerank(queries: list[str], depths: list[int], client, *, team) -> dict:
    """Search at the service and over HTTP with the second stage on (RERANK_ENABLED), reading each
    of ``depths`` candidates, in the same run as the figures without it. Every question is reread
    (RERANK_MAX_ALPHA 1.0: the synthetic questions rarely name what the memories know, so the default
    rule would reread few of them): these are the times of a question the stage reads. The settings
    are restored."""
    from django.conf import settings

    from memory.services.search import memory_search
    from memory.services.search.rerank import cross_encoder

    # In place, as every harness overrides settings (memory.conf keeps the dictionary it read).
    changed = ("RERANK_ENABLED", "RERANK_CANDIDATES", "RERANK_MAX_ALPHA")
    original = {key: settings.MEMORY_LANE[key] for key in changed}
    timed: dict = {}
    try:
        cross_encoder()  # loaded once, outside every timing
        for depth in depths:
            settings.MEMORY_LANE.update(RERANK_ENABLED=True, RERANK_CANDIDATES=depth, RERANK_MAX_ALPHA=1.0)
            measure_search(queries[:5], team=team)
            timed[str(depth)] = {
                "search_service": summary(measure_search(queries, team=team)),
                "search_http": summary(measure_http(queries, client)),
            }
            sample = queries[:10]
            reread = [
                any(
                    "rerank" in hit.explain for hit in memory_search(team=team, query=q, record=False).results
                )
                for q in sample
            ]
            timed[str(depth)]["reread"] = sum(reread) / len(sample)
    finally:
        settings.MEMORY_LANE.update(original)
    return timed


def measure_late(queries: list[str], depths: list[int], *, team, after_late: list[int] | None = None) -> dict:
    """Search at the service and over HTTP with the late-interaction stage reordering each of
    ``depths`` candidates, and with it off, in the same run; then, for each of ``after_late``, the
    late stage at its default depth followed by the cross-encoder rereading that many of its order
    (RERANK_AFTER_LATE). Every memory's token vectors are computed first (what the worker's
    token_vectors_task does ahead of searches; the time it took is reported), and every question
    is reordered (both stages' maximum α 1.0, as measure_rerank). The settings are restored."""
    from django.conf import settings
    from django.db import connection

    from memory.services.search import late
    from memory.services.search.rerank import cross_encoder

    changed = (
        "LATE_RERANK_ENABLED",
        "LATE_RERANK_CANDIDATES",
        "LATE_RERANK_MAX_ALPHA",
        "RERANK_ENABLED",
        "RERANK_AFTER_LATE",
        "RERANK_MAX_ALPHA",
    )
    original = {key: settings.MEMORY_LANE[key] for key in changed}
    timed: dict = {}
    started = time.perf_counter()
    computed = late.fill_all()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_total_relation_size('memory_tokenvectors'), count(*) FROM memory_tokenvectors"
        )
        size, rows = cursor.fetchone()
    timed["vectors"] = {
        "computed": computed,  # the rest were computed by the searches before, when they needed them
        "kept": rows,
        "seconds": round(time.perf_counter() - started, 1),
        "table_mb": round(size / 2**20, 1),
        "bytes_per_memory": round(size / max(1, rows)),
    }
    variants = [
        (str(depth), {"LATE_RERANK_ENABLED": bool(depth), "LATE_RERANK_CANDIDATES": depth or 1})
        for depth in [0, *depths]
    ]
    variants += [
        (
            f"{original['LATE_RERANK_CANDIDATES']}+cross {n}",
            {"RERANK_ENABLED": True, "RERANK_AFTER_LATE": n, "RERANK_MAX_ALPHA": 1.0},
        )
        for n in after_late or []
    ]
    try:
        if after_late:
            cross_encoder()  # loaded once, outside every timing
        for label, switched in variants:
            settings.MEMORY_LANE.update(original, LATE_RERANK_MAX_ALPHA=1.0, **switched)
            measure_search(queries[:5], team=team)
            client = http_client(team)  # a token per variant: each stays under the API's rate limit
            timed[label] = {
                "search_service": summary(measure_search(queries, team=team)),
                "search_http": summary(measure_http(queries, client)),
            }
    finally:
        settings.MEMORY_LANE.update(original)
    return timed


def print_table(results: dict) -> None:
    print(f"{'measure':<34} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9} {'n':>6}")
    for name in (
        "search_service",
        "search_service_entity_1pct",
        "search_service_entity_5pct",
        "search_service_entity_project",
        "search_service_detected_entity",
        "search_http",
        "vector_hnsw",
        "vector_exact",
        "embed_query",
    ):
        row = results.get(name)
        if row:
            print(
                f"{name:<34} {row['p50_ms']:>9.2f} {row['p95_ms']:>9.2f} {row['p99_ms']:>9.2f} {row['n']:>6}"
            )
    for name in ("recall_entity_1pct", "recall_entity_5pct", "recall_entity_project", "recall_unfiltered"):
        row = results[name]
        print(
            f"{name:<34} {row['recall']:.4f} (min {row['min']}, stranded {row['stranded']}, plans {row['plans']})"
        )
        found = row["search"]
        print(
            f"{'  as the search ranks it':<34} {found['recall']:.4f} (min {found['min']}, "
            f"stranded {found['stranded']}, plans {row['search_plans']})"
        )
    for depth, row in results.get("rerank", {}).items():
        for name in ("search_service", "search_http"):
            label = f"{name}, reranking {depth}"
            print(
                f"{label:<34} {row[name]['p50_ms']:>9.2f} {row[name]['p95_ms']:>9.2f} "
                f"{row[name]['p99_ms']:>9.2f} {row[name]['n']:>6}"
            )
    for depth, row in results.get("late", {}).items():
        if depth == "vectors":
            continue
        for name in ("search_service", "search_http"):
            label = f"{name}, late {depth}" if depth != "0" else f"{name}, late off"
            print(
                f"{label:<34} {row[name]['p50_ms']:>9.2f} {row[name]['p95_ms']:>9.2f} "
                f"{row[name]['p99_ms']:>9.2f} {row[name]['n']:>6}"
            )
    if "late" in results:
        print(f"{'token vectors':<34} {results['late']['vectors']}")
    print_stores(results, width=34)
    print(f"{'memories':<34} {results['memories']} ({results['vectors']} vectors; load {results['load']})")


if __name__ == "__main__":
    sys.exit(main())
