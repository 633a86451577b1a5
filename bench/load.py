"""Concurrent load: ``python -m bench.load [--clients 20] [--seconds 60] [--url URL --token TOKEN]``.

N clients (threads, each with its own keep-alive HTTP connection) send requests for a fixed time:
80% searches (GET /api/v1/search, limit 10) and 20% stores (POST /api/v1/observations). A share of
the clients (``--session-share``) work inside a session: they register it first, pass its id with
every request (recalls and authorship are written) and end it at the end. Prints throughput and
p50/p95/p99 per operation, then one line of JSON.

Two ways to send:

- **closed loop** (the default): each client sends its next request as soon as its answer is
  back. The server is always saturated; this measures the most it serves. With N clients and no
  pause, the mean latency is N / throughput (Little's law), so latency here only restates
  throughput.
- **paced** (``--rate R``): the clients together send R requests a second, each client on its own
  Poisson schedule of R / N a second (an agent's requests come between its model's turns, not
  back to back). A request's latency is counted from when it was due, not from when it was sent: a
  client still waiting for an earlier answer sends late, and that wait is part of what the user
  sees (otherwise a slow server would hide its queue: "coordinated omission"). This measures the
  latency at a given load.

Without ``--url`` it prepares the server itself: it seeds the database of ``MEMORYLANE_HOME`` (or
``DATABASE_URL``) with ``--memories`` synthetic memories when it holds fewer (the bulk loader of
``bench.latency``), creates a token, starts ``python -m memorylane.runner`` on a free port with
the same environment, runs the load, stops the server and deletes what the run stored (unless
``--keep``), so runs one after another measure the same corpus, each from a vacuumed table. It
then also reports the CPU time the server spent per request, its own processes (web, worker, beat)
and the embedded PostgreSQL's apart: on a shared machine whose speed drifts from run to run, CPU
time per request compares two versions of the code more steadily than throughput does.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse
import uuid

import psutil

from bench.chaos import Host
from bench.latency import synthetic_memories, synthetic_queries
from bench.scratch import free_port
from bench.stats import summary


class Client:
    """One agent: a keep-alive connection and a closed loop of requests."""

    def __init__(self, url: str, token: str, timeout: float) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname, parsed.port or 80
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.timeout = timeout
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        payload = json.dumps(body).encode() if body is not None else None
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.connection.request(method, path, body=payload, headers=self.headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (ConnectionError, http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


def schedule_rng(seed: int, client: int) -> random.Random:
    """The random source of paced client ``client``'s schedule (its requests draw from another)."""
    return random.Random(seed * 1000 + client + 500)


def due_times(rng: random.Random, rate: float, start: float, end: float):
    """When one paced client's requests are due: a Poisson process of ``rate`` a second from
    ``start``, ending before ``end``."""
    due = start + rng.expovariate(rate)
    while due < end:
        yield due
        due += rng.expovariate(rate)


def run_load(
    url: str,
    tokens: list[str],
    *,
    clients: int,
    seconds: float,
    rate: float | None = None,
    search_share: float = 0.8,
    session_share: float = 0.25,
    seed: int = 5,
    timeout: float = 30.0,
) -> dict:
    """Drive the server at ``url`` and return throughput and latency per operation: in a closed
    loop, or paced at ``rate`` requests a second in all (module docstring). Client ``i`` uses
    ``tokens[i % len(tokens)]``: the API throttles per token (MEMORYLANE_THROTTLE_RATE), so one
    token shared by every client measures the throttle, not the server."""
    queries = synthetic_queries(2000, seed=seed)
    run = uuid.uuid4().hex[:6]
    contents = synthetic_memories(4000, seed=seed + 1, start=10_000_000)
    timings: dict[str, list[float]] = {"search": [], "store": [], "session_start": [], "session_end": []}
    errors: dict[str, int] = {}
    in_window = [0]  # answers received before the deadline
    lock = threading.Lock()
    start_line = threading.Barrier(clients + 1)
    deadline = [0.0]

    def record(operation: str, started: float, status: int, ok: tuple[int, ...]) -> None:
        finished = time.perf_counter()
        elapsed = 1000 * (finished - started)
        with lock:
            if status in ok:
                timings[operation].append(elapsed)
                in_window[0] += finished <= deadline[0]
            else:
                errors[f"{operation} {status}"] = errors.get(f"{operation} {status}", 0) + 1

    def sends(rng: random.Random):
        """When each of a client's requests counts from: now, in a closed loop; when it was due,
        after waiting for that time, when paced."""
        if not rate:
            while (now := time.perf_counter()) < deadline[0]:
                yield now
            return
        for due in due_times(rng, rate / clients, deadline[0] - seconds, deadline[0]):
            if (wait := due - time.perf_counter()) > 0:
                time.sleep(wait)
            yield due

    def agent(number: int) -> None:
        rng = random.Random(seed * 1000 + number)
        schedule = schedule_rng(seed, number)
        client = Client(url, tokens[number % len(tokens)], timeout)
        session_id = f"load-{run}-{number}" if number < round(clients * session_share) else None
        start_line.wait()
        try:
            if session_id:
                started = time.perf_counter()
                status, _ = client.request(
                    "POST", "/api/v1/sessions", {"session_id": session_id, "agent": "other"}
                )
                record("session_start", started, status, (200, 201))
            for started in sends(schedule):
                if rng.random() < search_share:
                    params = {"q": rng.choice(queries), "limit": 10}
                    if session_id:
                        params["session_id"] = session_id
                    status, _ = client.request("GET", "/api/v1/search?" + urllib.parse.urlencode(params))
                    record("search", started, status, (200,))
                else:
                    item = rng.choice(contents)
                    body = {
                        "content": item["content"].replace(
                            "(ticket", f"(load {run}-{number}-{rng.random():.6f}, ticket"
                        ),
                        "type": item["memory_type"],
                        "category": item["category"],
                        "entities": item["entities"][:2],
                    }
                    if session_id:
                        body["session_id"] = session_id
                    status, _ = client.request("POST", "/api/v1/observations", body)
                    record("store", started, status, (200, 201))
            if session_id:
                started = time.perf_counter()
                status, _ = client.request(
                    "POST", f"/api/v1/sessions/{session_id}/end", {"success": True, "duration_ms": 60000}
                )
                record("session_end", started, status, (200, 202))
        except Exception as exc:  # noqa: BLE001 - a client that fails is counted, the others go on
            with lock:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1

    threads = [threading.Thread(target=agent, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start_line.wait()
    for thread in threads:
        thread.join(seconds + 2 * timeout)
    elapsed = time.perf_counter() - began
    requests = sum(len(v) for v in timings.values())
    return {
        "clients": clients,
        "rate": rate or None,  # None: a closed loop
        "run": run,
        "seconds": round(elapsed, 1),
        "requests": requests,
        "requests_per_second": round(requests / elapsed, 1),
        # The rate while the load ran: the whole run also waits for the last session ends.
        "requests_per_second_under_load": round(in_window[0] / seconds, 1),
        "operations": {name: summary(values, seconds=elapsed) for name, values in timings.items() if values},
        "errors": errors,
    }


# --- preparing a server ----------------------------------------------------------------------------


def prepare(memories: int, seed: int, clients: int) -> list[str]:
    """Seed the configured database up to ``memories`` and return a new read/write token per
    client: each agent of a team has its own."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.latency import bench_member, bench_team, bulk_load, synthetic_vectors
    from memory.models import Memory
    from memory.services.tokens import token_create

    call_command("migrate", interactive=False, verbosity=0)
    team = bench_team()
    have = Memory.objects.for_team(team).count()
    if have < memories:
        items = synthetic_memories(memories, seed=seed)
        vectors, _ = synthetic_vectors(items, seed, parents=min(memories, 8800))
        print(f"Seeding {memories - have} memories…", file=sys.stderr)
        bulk_load(items[have:], vectors[have:], rebuild_index=memories - have >= 50000, team=team)
    # Each run starts from a vacuumed table: otherwise the dead rows of the last run's searches and
    # deleted stores are vacuumed (the HNSW index too) by autovacuum during this one, at a moment
    # that differs from run to run.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) memory_memory")
    user = bench_member("load-bench", team)
    return [token_create(user=user, team=team, scopes=["read", "write"])[1] for _ in range(clients)]


def forget(run: str) -> None:
    """Delete what run ``run`` stored (its memories and sessions), so the next run measures the same
    corpus."""
    from bench.latency import bench_team
    from memory.models import Memory, Session

    team = bench_team()
    Memory.objects.for_team(team).filter(content__contains=f"(load {run}-").delete()
    Session.objects.for_team(team).filter(external_id__startswith=f"load-{run}-").delete()


def start_server(port: int) -> Host:
    """``make run``'s runner on ``port`` with this environment, once its health answers 200 (its
    log is ``MEMORYLANE_HOME/runner.log``)."""
    from django.conf import settings

    host = Host("load", settings.MEMORYLANE_HOME, port, {**os.environ, "HOST": "127.0.0.1"})
    host.start()
    print(f"Server log: {host.home / 'runner.log'}", file=sys.stderr)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if host.process.poll() is not None:
            host.stop()
            raise SystemExit(f"the server exited with {host.process.returncode}")
        if host.healthy():
            return host
        time.sleep(1)
    host.stop()
    raise SystemExit("the server did not become healthy in 240 s")


def tree_cpu_seconds(pid: int, *, by_role: dict[str, float] | None = None) -> float:
    """User and system CPU seconds of process ``pid`` and all its descendants, including those that
    have exited (their time is in their parent's children counters once reaped). With ``by_role``,
    each process's own seconds are also added there under its role (:func:`role_of`)."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            own = times.user + times.system + times.children_user + times.children_system
            total += own
            if by_role is not None:
                role = role_of(process, root.pid)
                by_role[role] = by_role.get(role, 0.0) + own
    return total


def role_of(process: psutil.Process, root: int) -> str:
    """Which of the runner's parts a process is, by its command line or its nearest ancestor's below
    the runner (uvicorn's and celery's own children are started without naming themselves): web,
    worker, beat or runner."""
    while process is not None and process.pid != root:
        if (role := role_of_command(process.cmdline())) != "runner":
            return role
        process = process.parent()
    return "runner"


def role_of_command(command: list[str]) -> str:
    words = set(command)
    if "uvicorn" in words:
        return "web"
    if "worker" in words:
        return "worker"
    if "beat" in words:
        return "beat"
    return "runner"


def server_cpu_seconds(server: Host) -> dict[str, float]:
    """CPU seconds so far of the runner's processes (in all, and as ``web``, ``worker``, ``beat``
    and ``runner``) and, when it runs here, of the embedded PostgreSQL (a ``DATABASE_URL`` server is
    not counted)."""
    from memorylane import embedded

    roles: dict[str, float] = {}
    seconds = {"server": tree_cpu_seconds(server.process.pid, by_role=roles)}
    seconds.update({role: roles.get(role, 0.0) for role in ("web", "worker", "beat", "runner")})
    lines = embedded.postmaster_lines() if not os.environ.get("DATABASE_URL") else []
    if lines and lines[0].strip().isdigit():
        seconds["database"] = tree_cpu_seconds(int(lines[0]))
    return seconds


def web_processes(started_here: bool) -> int:
    """The server's web processes: WEB_CONCURRENCY, else what ``make run`` starts (or 1 elsewhere)."""
    if os.environ.get("WEB_CONCURRENCY"):
        return int(os.environ["WEB_CONCURRENCY"])
    if started_here:
        from django.conf import settings

        return int(settings.MEMORY_LANE["RUNNER_WEB_PROCESSES"])
    return 1


def warm_up(url: str, token: str, processes: int) -> None:
    """A few searches per web process, so each has its model loaded before the measurement."""
    client = Client(url, token, 120)
    for _ in range(processes * 4):
        client.request("GET", "/api/v1/search?q=warm+up&limit=1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--rate",
        type=float,
        help="requests a second from all clients together (paced); default: a closed loop",
    )
    parser.add_argument("--search-share", type=float, default=0.8)
    parser.add_argument("--session-share", type=float, default=0.25, help="share of clients inside a session")
    parser.add_argument("--url", help="a running server; without it one is started (see above)")
    parser.add_argument(
        "--token",
        action="append",
        default=[],
        help="a read/write API token for --url (repeat it: client i uses token i mod their number)",
    )
    parser.add_argument("--memories", type=int, default=10000, help="seed the database up to this many")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep what the run stored (deleted by default)")
    args = parser.parse_args(argv)
    if args.url and not args.token:
        parser.error("--url needs --token")
    if args.rate is not None and args.rate <= 0:
        parser.error("--rate must be above 0")

    server, report = None, None
    url, tokens = args.url, args.token
    try:
        if not url:
            tokens = prepare(args.memories, args.seed, args.clients)
            port = free_port()
            print(f"Starting the server on port {port}…", file=sys.stderr)
            server = start_server(port)
            url = f"http://127.0.0.1:{port}"
        warm_up(url, tokens[0], web_processes(server is not None))
        pace = f", {args.rate:g} requests/s in all" if args.rate else " in a closed loop"
        print(f"{args.clients} clients{pace} for {args.seconds:.0f} s against {url}…", file=sys.stderr)
        cpu_before = server_cpu_seconds(server) if server else None
        report = run_load(
            url,
            tokens,
            clients=args.clients,
            seconds=args.seconds,
            rate=args.rate,
            search_share=args.search_share,
            session_share=args.session_share,
        )
        if cpu_before:
            cpu_after = server_cpu_seconds(server)
            report["cpu_ms_per_request"] = {
                part: round(1000 * (cpu_after[part] - cpu_before[part]) / max(report["requests"], 1), 2)
                for part in cpu_before
            }
    finally:
        if server is not None:
            server.stop()
            from memorylane import embedded

            if report is not None and not args.keep:
                forget(report["run"])
            embedded.stop_if_started_here()
    report["web_processes"] = web_processes(not args.url)
    print(f"{'operation':<14} {'n':>6} {'per s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for name, row in report["operations"].items():
        print(
            f"{name:<14} {row['n']:>6} {row['per_second']:>7} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['p99_ms']:>8}"
        )
    print(
        f"{report['requests']} requests in {report['seconds']} s: {report['requests_per_second']}/s "
        f"({report['requests_per_second_under_load']}/s in the {args.seconds:.0f} s of load); errors {report['errors']}"
    )
    if cpu := report.get("cpu_ms_per_request"):
        database = f", {cpu['database']} ms (PostgreSQL)" if "database" in cpu else ""
        parts = ", ".join(
            f"{role} {cpu[role]}" for role in ("web", "worker", "beat", "runner") if role in cpu
        )
        print(f"server CPU per request: {cpu['server']} ms ({parts}){database}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
