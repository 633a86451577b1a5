"""The fault drill: ``python -m bench.chaos [--topology single|scaleout] [--writers 4] [--sessions 2]``.

Starts Memory Lane as `make run` does (``python -m memorylane.runner``) in throwaway data
directories and puts it under load: N writers store observations over the API (each retried until
acknowledged, as an agent's client would), and session runners register sessions, upload transcripts
that produce extractions and end them. Meanwhile it injects, one after the other, waiting for the
server to be healthy again after each:

- ``web``: kill -9 of a web server;
- ``worker``: kill -9 of a worker in the middle of an extraction (a session it holds ``running``);
- ``beat``: kill -9 of Celery beat;
- ``database``: kill -9 of the PostgreSQL postmaster;
- ``sigterm``: SIGTERM of the whole (every runner), then a restart.

Topologies: ``single`` is one runner on the embedded PostgreSQL and the filesystem broker (what
``make run`` gives a team). ``scaleout`` is two runners as two hosts (``MEMORYLANE_HOST`` host-a and
host-b, each a web server and a worker; beat on host-a only) on one standalone PostgreSQL (a pgserver
cluster given as ``DATABASE_URL``) and Redis (``--redis``, default database 13, flushed before and
after). In scale-out the standalone database is external to both runners, so the drill restarts it
after a kill as its own supervisor would (Docker's restart policy, systemd).

At the end, read from the database: acknowledged writes lost, duplicates, ended sessions never
extracted, sessions extracted twice, client errors seen, and seconds to healthy after each fault —
a table, then one line of JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.scratch import free_port

ROOT = Path(__file__).resolve().parent.parent
FAULTS = ("web", "worker", "beat", "database", "sigterm")
HEAL_TIMEOUT = 90.0

TRANSCRIPT = [
    ("user", "Add the retry budget to the {project} payment client."),
    ("assistant", "I'll wrap the call with the requests library and retry it three times."),
    ("user", "No, don't use requests in {project} — always use httpx with the shared client."),
    ("tool", "error TS2304: Cannot find name 'RetryBudget'."),
    ("assistant", "Turns out the root cause was the {project} client timeout of {n} ms being too short."),
    ("user", "From now on keep the {project} timeout at {n} ms and never retry non-idempotent calls."),
]


def http(method: str, url: str, token: str, body: dict | None = None, timeout: float = 30):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - our own server
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        try:
            return error.code, json.loads(error.read() or b"null")
        except ValueError:
            return error.code, None


# --- the processes under test ---------------------------------------------------------------------


@dataclass
class Host:
    name: str
    home: Path
    port: int
    env: dict
    process: subprocess.Popen | None = None
    log: object = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.env["PORT"] = str(self.port)
        self.log = open(self.home / "runner.log", "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memorylane.runner"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def stop(self, timeout: float = 90) -> float:
        started = time.monotonic()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.log:
            self.log.close()
            self.log = None
        return time.monotonic() - started

    def report(self) -> dict:
        try:
            return json.loads((self.home / "supervisor.json").read_text())
        except (OSError, ValueError):
            return {}

    def pid_of(self, part: str) -> int | None:
        return self.report().get("processes", {}).get(part, {}).get("pid")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/api/v1/health", timeout=2) as response:  # noqa: S310
                body = json.loads(response.read())
                return response.status == 200 and body.get("status") == "ok"
        except (OSError, ValueError):
            return False


class Database:
    """Where the drill reads the results, and (scale-out) the standalone cluster it runs."""

    def __init__(self, pgdata: Path, *, standalone: bool) -> None:
        self.pgdata = pgdata
        self.standalone = standalone
        self.handle = None

    def start_standalone(self) -> str:
        import pgserver

        self.pgdata.mkdir(parents=True, exist_ok=True)
        self.handle = pgserver.get_server(self.pgdata, cleanup_mode=None)
        self.handle.psql("CREATE DATABASE memorylane;")
        return self.url()

    def url(self) -> str:
        from urllib.parse import quote

        lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
        return f"postgresql://postgres@/memorylane?host={quote(lines[4].strip())}&port={lines[3].strip()}"

    def postmaster(self) -> int:
        return int((self.pgdata / "postmaster.pid").read_text().split()[0])

    def restart_standalone(self) -> None:
        from memorylane import embedded

        embedded.clear_after_crash(self.pgdata)
        with self.handle._lock:
            self.handle._postmaster_info = None
            self.handle.ensure_postgres_running()

    def stop(self) -> None:
        from pgserver._commands import pg_ctl

        if (self.pgdata / "postmaster.pid").exists():
            user = "pgserver" if os.geteuid() == 0 else None
            with contextlib.suppress(Exception):
                pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=user)

    def query(self, sql: str, params=()) -> list[tuple]:
        import psycopg

        for _ in range(60):
            try:
                with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as conn:
                    return conn.execute(sql, params).fetchall()
            except (psycopg.OperationalError, OSError, IndexError):
                time.sleep(0.5)
        raise RuntimeError("the database did not answer")


# --- the load ---------------------------------------------------------------------------------------


@dataclass
class Ledger:
    """What the server acknowledged, and what went wrong on the way."""

    writes: dict[str, str] = field(default_factory=dict)  # content → memory id
    sessions: list[str] = field(default_factory=list)  # external ids whose end was acknowledged
    errors: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, kind: str) -> None:
        with self.lock:
            self.errors[kind] += 1


class Load:
    def __init__(self, hosts: list[Host], token: str, run: str, writers: int, sessions: int) -> None:
        self.hosts, self.token, self.run = hosts, token, run
        self.writers, self.session_runners = writers, sessions
        self.ledger = Ledger()
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        for index in range(self.writers):
            self.threads.append(threading.Thread(target=self._writer, args=(index,), daemon=True))
        for index in range(self.session_runners):
            self.threads.append(threading.Thread(target=self._sessions, args=(index,), daemon=True))
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=120)

    def _call(self, method: str, path: str, body: dict | None, ok: tuple[int, ...], lane: int) -> dict | None:
        """Retried until acknowledged (as an agent's client would), on whichever web server answers."""
        deadline = time.monotonic() + 180
        attempt = 0
        while time.monotonic() < deadline:
            host = self.hosts[(lane + attempt) % len(self.hosts)]
            attempt += 1
            try:
                status, answer = http(method, f"{host.base}{path}", self.token, body)
            except (OSError, ValueError) as exc:
                self.ledger.error(f"connection: {exc.__class__.__name__}")
                time.sleep(0.3)
                continue
            if status in ok:
                return answer or {}
            code = (answer or {}).get("error", {}).get("code", "") if isinstance(answer, dict) else ""
            self.ledger.error(f"{status} {code}".strip())
            time.sleep(0.3)
        self.ledger.error("gave up after 180 s")
        return None

    def _writer(self, index: int) -> None:
        n = 0
        while not self.stopping.is_set():
            n += 1
            content = (
                f"Chaos drill {self.run}: writer {index} note {n} says the ledger-{index}-{n} job runs "
                f"after the nightly export on port {10000 + n}."
            )
            body = {
                "content": content,
                "type": "learning",
                "category": "workflow",
                "entities": [f"project:chaos-{self.run}-w{index}-{n}"],
            }
            answer = self._call("POST", "/api/v1/observations", body, (200, 201), index)
            if answer and answer.get("memory"):
                with self.ledger.lock:
                    self.ledger.writes[content] = answer["memory"]["id"]

    def _sessions(self, index: int) -> None:
        n = 0
        while not self.stopping.is_set():
            n += 1
            external = f"chaos-{self.run}-s{index}-{n}"
            project = f"chaos-{self.run}-s{index}-{n}"
            started = self._call(
                "POST",
                "/api/v1/sessions",
                {"session_id": external, "agent": "claude-code", "project": project},
                (200, 201),
                index,
            )
            if started is None:
                continue
            number = 1000 + n * 10 + index
            messages = [
                {"seq": seq, "role": role, "content": text.format(project=project, n=number)}
                for seq, (role, text) in enumerate(TRANSCRIPT)
            ]
            if (
                self._call(
                    "POST", f"/api/v1/sessions/{external}/messages", {"messages": messages}, (200, 201), index
                )
                is None
            ):
                continue
            outcome = {
                "success": True,
                "duration_ms": 240_000,
                "error_count": 1,
                "files_touched": [f"src/{project}/client.py"],
            }
            if self._call("POST", f"/api/v1/sessions/{external}/end", outcome, (200, 202), index) is not None:
                with self.ledger.lock:
                    self.ledger.sessions.append(external)
            time.sleep(random.uniform(1.0, 2.0))  # an agent's next session, not a flood


# --- the drill --------------------------------------------------------------------------------------


def wait_healthy(
    hosts: list[Host], since: float, timeout: float = HEAL_TIMEOUT, replaced=None
) -> float | None:
    """Seconds from ``since`` until every web server reports ``ok`` (every supervised part running)
    and, after a kill, the killed process has been replaced (``replaced()``)."""
    while time.monotonic() - since < timeout:
        if (replaced is None or replaced()) and all(host.healthy() for host in hosts):
            return round(time.monotonic() - since, 2)
        time.sleep(0.2)
    return None


def kill(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def inject(fault: str, hosts: list[Host], database: Database, log) -> dict:
    """Inject one fault; return what was done and the seconds until every web server is healthy."""
    target = hosts[0]
    detail = ""
    held = None
    replaced = lambda: True  # noqa: E731 - what must have changed before "healthy" counts
    if fault in ("web", "beat"):
        old = target.pid_of(fault)
        replaced = lambda: target.pid_of(fault) not in (None, old)  # noqa: E731
    if fault == "web":
        kill(target.pid_of("web"))
    elif fault == "worker":
        # A session held `running` by a worker, if one turns up within 20 s: kill that host's worker.
        deadline = time.monotonic() + 20
        holder = None
        while time.monotonic() < deadline and holder is None:
            rows = database.query(
                "SELECT extraction_claimed_by, id FROM memory_session WHERE extraction_status = 'running' LIMIT 1"
            )
            holder, held = rows[0] if rows else (None, None)
            if holder is None:
                time.sleep(0.05)
        if holder:
            host_name = holder.rpartition(":")[0]
            target = next((h for h in hosts if h.env.get("MEMORYLANE_HOST", h.name) == host_name), hosts[0])
        old_worker = target.pid_of("worker")
        replaced = lambda: target.pid_of("worker") not in (None, old_worker)  # noqa: E731
        kill(old_worker)
        detail = f"mid-extraction ({holder})" if holder else "no extraction was running"
    elif fault == "beat":
        kill(target.pid_of("beat"))
    elif fault == "database":
        old_postmaster = database.postmaster()
        replaced = lambda: _postmaster_or_none(database) not in (None, old_postmaster)  # noqa: E731
        kill(old_postmaster)
        killed_at = time.monotonic()
        if database.standalone:
            time.sleep(1.0)  # the external database's own supervisor restarts it
            database.restart_standalone()
    started = killed_at if fault == "database" else time.monotonic()
    if fault == "sigterm":
        stop_seconds = max(host.stop() for host in hosts)
        detail = f"stopped in {stop_seconds:.1f} s"
        started = time.monotonic()
        for host in hosts:
            host.start()
            if host is hosts[0] and len(hosts) > 1:
                wait_healthy([host], time.monotonic())  # one migrates at a time
    seconds = wait_healthy(hosts, started, replaced=replaced)
    result = {"fault": fault, "detail": detail, "seconds_to_healthy": seconds}
    if held is not None:
        # The session the killed worker held: how long until another worker finished it.
        while time.monotonic() - started < HEAL_TIMEOUT:
            rows = database.query("SELECT extraction_status FROM memory_session WHERE id = %s", (held,))
            if rows and rows[0][0] == "done":
                result["seconds_to_extracted"] = round(time.monotonic() - started, 2)
                break
            time.sleep(0.2)
    log(f"  {fault}: {detail or 'killed'}; healthy after {seconds} s")
    return result


def _postmaster_or_none(database: Database) -> int | None:
    try:
        return database.postmaster()
    except (OSError, ValueError, IndexError):
        return None


def drain(database: Database, sessions: list[str], *, stall: float = 120, limit: float = 900) -> float:
    """Wait until every ended session is extracted — or until none has finished for ``stall``
    seconds (what is left then was lost, not merely queued). Returns the seconds waited."""
    started = last_progress = time.monotonic()
    left = None
    while time.monotonic() - started < limit:
        rows = database.query(
            "SELECT count(*) FROM memory_session WHERE external_id = ANY(%s) AND extraction_status <> 'done'",
            (sessions,),
        )
        if rows[0][0] == 0:
            break
        if left is None or rows[0][0] < left:
            left, last_progress = rows[0][0], time.monotonic()
        elif time.monotonic() - last_progress > stall:
            break
        time.sleep(1)
    return round(time.monotonic() - started, 1)


def results(database: Database, ledger: Ledger, run: str) -> dict:
    acknowledged = list(ledger.writes.values())
    present = {
        str(row[0])
        for row in database.query("SELECT id FROM memory_memory WHERE id::text = ANY(%s)", (acknowledged,))
    }
    duplicates = database.query(
        "SELECT content, count(*) FROM memory_memory WHERE content LIKE %s GROUP BY content HAVING count(*) > 1",
        (f"Chaos drill {run}:%",),
    )
    statuses = database.query(
        "SELECT extraction_status, count(*) FROM memory_session WHERE external_id = ANY(%s) GROUP BY 1",
        (ledger.sessions,),
    )
    # A session extracted twice stores one of its lessons twice (the same text, from the same session).
    twice = database.query(
        "SELECT DISTINCT m.session_id FROM memory_memory m JOIN memory_session s ON s.id = m.session_id "
        "WHERE s.external_id = ANY(%s) AND m.source = 'extraction' "
        "GROUP BY m.session_id, m.content_hash HAVING count(*) > 1",
        (ledger.sessions,),
    )
    extracted_by = database.query(
        "SELECT split_part(extraction_claimed_by, ':', 1), count(*) FROM memory_session "
        "WHERE external_id = ANY(%s) AND extraction_status = 'done' GROUP BY 1",
        (ledger.sessions,),
    )
    by_status = dict(statuses)
    return {
        "acknowledged_writes": len(acknowledged),
        "writes_lost": len(acknowledged) - len(present),
        "duplicates": sum(count - 1 for _, count in duplicates),
        "sessions_ended": len(ledger.sessions),
        "sessions_unextracted": len(ledger.sessions) - by_status.get("done", 0),
        "sessions_extracted_twice": len(twice),
        "extraction_status": by_status,
        "extracted_by_host": dict(extracted_by),
        "client_errors": dict(ledger.errors),
    }


def run_drill(args) -> dict:
    run = uuid.uuid4().hex[:6]
    root = Path(args.home or f"/tmp/ml-chaos-{os.getpid()}")  # short: database sockets live here
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    log = (
        (lambda message: print(message, file=sys.stderr, flush=True)) if not args.quiet else (lambda m: None)
    )
    base_env = {
        k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "MEMORYLANE_CONFIG"}
    }
    base_env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        MEMORYLANE_THROTTLE_RATE="1000000/min",  # a load drill, not a throttling test
        MEMORYLANE_ADMIN_PASSWORD="chaos-drill-admin",
        DJANGO_SECRET_KEY=f"chaos-{uuid.uuid4().hex}",
    )
    redis = None
    if args.topology == "single":
        home = root / "single"
        home.mkdir()
        hosts = [Host("single", home, free_port(), {**base_env, "MEMORYLANE_HOME": str(home)})]
        database = Database(home / "pgdata", standalone=False)
    else:
        import redis as redis_client

        redis = redis_client.Redis.from_url(args.redis)
        redis.flushdb()
        database = Database(root / "pg" / "pgdata", standalone=True)
        (root / "pg").mkdir()
        url = database.start_standalone()
        shared = {**base_env, "DATABASE_URL": url, "REDIS_URL": args.redis}
        hosts = []
        for name, processes in (("host-a", "web,worker,beat"), ("host-b", "web,worker")):
            home = root / name
            home.mkdir()
            env = {
                **shared,
                "MEMORYLANE_HOME": str(home),
                "MEMORYLANE_HOST": name,
                "MEMORYLANE_PROCESSES": processes,
            }
            hosts.append(Host(name, home, free_port(), env))
    load = None
    report: dict = {"topology": args.topology, "writers": args.writers, "session_runners": args.sessions}
    try:
        log(f"chaos drill {run}: {args.topology}, starting…")
        for host in hosts:
            host.start()
            if wait_healthy([host], time.monotonic(), 240) is None:
                raise RuntimeError(f"{host.name} did not become healthy; see {host.home / 'runner.log'}")
        token = (
            subprocess.run(
                [
                    sys.executable,
                    "manage.py",
                    "create_token",
                    f"chaos-{run}",
                    "--create-user",
                    "--scopes",
                    "read,write",
                ],
                cwd=ROOT,
                env=hosts[0].env,
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        load = Load(hosts, token, run, args.writers, args.sessions)
        load.start()
        time.sleep(args.warmup)
        faults = []
        for fault in args.faults:
            faults.append(inject(fault, hosts, database, log))
            time.sleep(args.settle)
        load.stop()
        log("  load stopped; waiting for every ended session to be extracted…")
        drained = drain(database, load.ledger.sessions)
        report.update(results(database, load.ledger, run))
        report["drain_seconds"] = drained
        report["faults"] = faults
        report["beat_processes"] = sum(1 for host in hosts if host.pid_of("beat"))
    finally:
        if load is not None:
            load.stopping.set()
        for host in hosts:
            host.stop()
        if database.standalone:
            database.stop()
        if redis is not None:
            redis.flushdb()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return report


def print_table(report: dict) -> None:
    print(
        f"Fault drill ({report['topology']}, {report['writers']} writers, {report['session_runners']} session runners)"
    )
    print(f"{'fault':<10} {'healthy after (s)':>18}  detail")
    for fault in report["faults"]:
        seconds = fault["seconds_to_healthy"]
        detail = fault["detail"]
        if "seconds_to_extracted" in fault:
            detail += f"; its session extracted after {fault['seconds_to_extracted']:.1f} s"
        print(f"{fault['fault']:<10} {('never' if seconds is None else f'{seconds:.1f}'):>18}  {detail}")
    for key in (
        "acknowledged_writes",
        "writes_lost",
        "duplicates",
        "sessions_ended",
        "sessions_unextracted",
        "sessions_extracted_twice",
        "beat_processes",
        "drain_seconds",
    ):
        print(f"{key:<26} {report[key]}")
    print(f"{'extracted_by_host':<26} {report['extracted_by_host']}")
    print(f"{'client_errors':<26} {report['client_errors']}")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topology", choices=("single", "scaleout"), default="single")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--sessions", type=int, default=2, help="session runners")
    parser.add_argument("--faults", type=lambda v: [f for f in v.split(",") if f], default=list(FAULTS))
    parser.add_argument("--warmup", type=float, default=10, help="seconds of load before the first fault")
    parser.add_argument("--settle", type=float, default=8, help="seconds of load after each recovery")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13", help="scale-out broker (flushed!)")
    parser.add_argument("--home", help="where the throwaway data directories go (default /tmp/ml-chaos-PID)")
    parser.add_argument("--keep", action="store_true", help="keep the data directories (logs) afterwards")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    unknown = set(args.faults) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults {sorted(unknown)}; choose from {','.join(FAULTS)}")
    # SIGTERM (a timeout, Ctrl-C in another form) unwinds like Ctrl-C: every runner and database is stopped.
    signal.signal(signal.SIGTERM, _interrupt)
    report = run_drill(args)
    print_table(report)
    print(json.dumps(report, sort_keys=True))
    ok = (
        report["writes_lost"] == 0
        and report["duplicates"] == 0
        and report["sessions_unextracted"] == 0
        and report["sessions_extracted_twice"] == 0
        and all(f["seconds_to_healthy"] is not None for f in report["faults"])
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
