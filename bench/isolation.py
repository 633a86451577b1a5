"""Nothing crosses the wall: every surface probed with another team's and another project's ids,
slugs and words (issue 41; DESIGN.md §11).

Two teams (acme, globex), two projects each (both have a ``project:payments``: slugs are per team),
people of every role in each and a contractor token of acme limited to ``project:mobile-app``. Every
caller then tries every REST endpoint, MCP tool and resource, and dashboard page with the rows it
must not reach. An attempt *leaks* when

- an id-based request answers otherwise than the same request with an id that exists nowhere
  (status, or body once the id is replaced): another team's id must answer exactly like a missing one;
- a list, search, context or export shows a word, id or slug of a row the caller may not see;
- afterwards, a row of the other team (or project) changed.

The contractor's limit is its token's: it is probed on REST and MCP; signed in to the dashboard the
same person is a member of acme and sees the team.

Run: ``python -m bench.isolation [--no-mcp]``. Prints a table of attempts and leaks by surface, the
raw-SQL row-level-security check when the database has it, then one line of JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field

from bench.scratch import scratch_database

ROLES = ("owner", "curator", "member", "reader")


@dataclass
class Side:
    """One team's rows that a caller of the other side must not reach, and words only they hold."""

    team: object
    memory_ids: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)  # external ids
    session_pks: list[str] = field(default_factory=list)
    entity_pks: list[int] = field(default_factory=list)
    only_slugs: list[str] = field(default_factory=list)  # slugs the other side does not have
    change_ids: list[int] = field(default_factory=list)


@dataclass
class Caller:
    name: str
    user: object
    key: str
    team: object
    limited: bool = False  # a token with a project allow-list


def seed():
    """The two teams, their people, tokens and rows. Returns (callers, sides by caller name)."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from memory.models import Entity, FactChange, Memory, Session
    from memory.services.sessions import messages_append, session_start
    from memory.services.store import memory_store
    from memory.services.teams import member_add, team_create
    from memory.services.tokens import token_create

    User = get_user_model()
    # Integer ids of six digits, so an id in a page is told from the other numbers it shows.
    with connection.cursor() as cursor:
        for table in ("memory_entity", "memory_factchange", "memory_entitymention"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 100000)")
    teams = {slug: team_create(slug=slug) for slug in ("acme", "globex")}
    projects = {"acme": ("payments", "mobile-app"), "globex": ("payments", "web-shop")}
    words = "zorbulate quintaxel mirvolent plathyrine cravendish ostrogule fembrick yandolith"
    marker = iter(words.split())
    sides: dict[str, Side] = {}
    project_sides: dict[str, Side] = {}  # acme's rows outside project:mobile-app
    callers: list[Caller] = []
    for slug, team in teams.items():
        side = Side(team)
        people = {}
        for role in ROLES:
            user = User.objects.create_user(username=f"{slug}-{role}", password=f"pw-{slug}-{role}-123")
            member_add(team=team, user=user, role=role)
            people[role] = user
            scopes = {"owner": "read,write,curate", "curator": "read,write,curate"}.get(
                role, "read,write" if role == "member" else "read"
            )
            key = token_create(user=user, team=team, scopes=scopes.split(","))[1]
            callers.append(Caller(f"{slug} {role}", user, key, team))
        outside = Side(team)
        for project in (*projects[slug], None):
            word = next(marker)
            entities = [f"project:{project}"] if project else []
            first = memory_store(
                team=team,
                author=people["member"],
                content=f"The {word} service must run make test before every deploy of the ledger.",
                entities=entities,
            ).memory
            changed = memory_store(
                team=team,
                author=people["member"],
                content=f"The {word} service must run make check before every deploy of the ledger.",
                entities=entities,
            )
            side.memory_ids += [str(first.pk), str(changed.memory.pk)]
            side.words.append(word)
            if project != "mobile-app":
                outside.memory_ids += [str(first.pk), str(changed.memory.pk)]
                outside.words.append(word)
            session, _ = session_start(
                team=team,
                user=people["member"],
                external_id=f"{slug}-{word}",
                agent="claude-code",
                project=project,
            )
            messages_append(
                session=session, messages=[{"seq": 1, "role": "user", "content": f"{word} notes"}]
            )
            side.sessions.append(session.external_id)
            side.session_pks.append(str(session.pk))
        side.entity_pks = list(Entity.objects.for_team(team).values_list("pk", flat=True))
        side.only_slugs = [f"project:{p}" for p in projects[slug] if p != "payments"]
        side.change_ids = list(FactChange.objects.for_team(team).values_list("pk", flat=True))
        sides[slug] = side
        if slug == "acme":
            outside.only_slugs = ["project:payments"]
            outside.change_ids = list(
                FactChange.objects.for_team(team)
                .exclude(new__mentions__entity__slug="project:mobile-app")
                .values_list("pk", flat=True)
            )
            outside.entity_pks = []
            project_sides["acme"] = outside
    contractor = User.objects.create_user(username="acme-contractor", password="pw-acme-contractor-1")
    member_add(team=teams["acme"], user=contractor, role="member")
    key = token_create(
        user=contractor, team=teams["acme"], scopes=["read", "write"], projects=["project:mobile-app"]
    )[1]
    callers.append(Caller("acme contractor (mobile-app)", contractor, key, teams["acme"], limited=True))
    victims = {}
    for caller in callers:
        if caller.name.startswith("acme contractor"):
            victims[caller.name] = project_sides["acme"]
        else:
            victims[caller.name] = sides["globex" if caller.team.slug == "acme" else "acme"]
    del Memory, Session
    return callers, victims, sides


def snapshot(team) -> dict:
    """What a caller of another team must never change."""
    from memory.models import Entity, EntityMention, FeedbackEvent, Memory, Session, SessionMessage

    return {
        "memories": sorted(
            Memory.objects.for_team(team).values_list(
                "pk", "content", "status", "maturity", "superseded_by_id"
            )
        ),
        "entities": sorted(Entity.objects.for_team(team).values_list("pk", "slug", "merged_into_id")),
        "mentions": EntityMention.objects.for_team(team).count(),
        "feedback": FeedbackEvent.objects.for_team(team).count(),
        "sessions": sorted(Session.objects.for_team(team).values_list("pk", "ended_at")),
        "messages": SessionMessage.objects.for_team(team).count(),
    }


class Tally:
    def __init__(self) -> None:
        self.attempts: Counter = Counter()
        self.leaks: Counter = Counter()
        self.examples: list[str] = []

    def check(self, surface: str, leaked: bool, what: str) -> None:
        self.attempts[surface] += 1
        if leaked:
            self.leaks[surface] += 1
            if len(self.examples) < 20:
                self.examples.append(f"{surface}: {what}")


def shows(body: str, side: Side) -> str | None:
    for needle in (*side.words, *side.memory_ids, *side.sessions, *side.session_pks):
        if needle in body:
            return needle
    return None


# What differs between two renderings of one page whatever they show: the masked CSRF token and the
# CSP nonce are new in every response.
PER_RESPONSE = re.compile(r"[A-Za-z0-9]{64}|nonce=\"[^\"]*\"|nonce-[A-Za-z0-9+/=_-]+")


def normalized(response, ref: str) -> str:
    body = re.sub(
        rf"(?<![0-9A-Za-z-]){re.escape(ref)}(?![0-9A-Za-z-])", "ID", response.content.decode(errors="replace")
    )
    return PER_RESPONSE.sub("", body)


def same_as_missing(first, second, real: str, missing: str) -> bool:
    return first.status_code == second.status_code and normalized(first, real) == normalized(second, missing)


def probe_rest(caller: Caller, side: Side, tally: Tally) -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {caller.key}")
    api = "/api/v1"
    by_id = []
    for pk in side.memory_ids:
        for method, path, body in (
            ("get", "/observations/{}", None),
            ("patch", "/observations/{}", {"priority": "critical"}),
            ("delete", "/observations/{}", None),
            ("get", "/observations/{}/reinforcements", None),
            ("post", "/observations/{}/split", {"event_id": 1}),
            ("post", "/feedback", {"memory_id": "{}", "signal": "harmful"}),
        ):
            by_id.append((method, path, body, pk, str(uuid.uuid4())))
    for external in side.sessions:
        for method, path, body in (
            ("get", "/sessions/{}", None),
            ("post", "/sessions/{}/messages", {"messages": [{"seq": 9, "role": "user", "content": "x"}]}),
            ("post", "/sessions/{}/end", {"success": True}),
        ):
            by_id.append((method, path, body, external, f"missing-{uuid.uuid4().hex[:8]}"))
    for change in side.change_ids:
        for method, path, body in (
            ("get", "/changed-facts/{}", None),
            ("post", "/changed-facts/{}", {"action": "undo"}),
        ):
            by_id.append((method, path, body, str(change), str(800000 + change)))
    for method, path, body, real, missing in by_id:
        responses = []
        for ref in (real, missing):
            url = api + path.format(ref)
            data = json.loads(json.dumps(body).replace("{}", ref)) if body else None
            responses.append(getattr(client, method)(url, data, format="json"))
        tally.check("rest", not same_as_missing(*responses, real, missing), f"{caller.name} {method} {path}")
    reads = [("get", "/observations", {}), ("get", "/reflections", {}), ("get", "/changed-facts", {})]
    reads += [("get", "/entities", {})]
    for word in side.words:
        reads += [
            ("get", "/search", {"q": f"{word} service deploy"}),
            ("post", "/search", {"q": f"{word} service deploy"}),
            ("get", "/context", {"q": word, "format": "json"}),
        ]
    for slug in side.only_slugs:
        reads += [
            ("get", "/context", {"project": slug, "format": "json"}),
            ("get", "/export", {"project": slug}),
            ("get", "/observations", {"entity": slug}),
            ("post", "/entities/resolve", {"name": slug}),
            ("post", "/entities/merge", {"source": slug, "target": slug}),
        ]
    reads.append(("get", "/export", {}))
    for method, path, params in reads:
        if method == "get":
            response = client.get(api + path, params)
        else:
            response = client.post(api + path, params, format="json")
        body = response.content.decode(errors="replace")
        if "q" in params:  # a search answers with the question it was asked
            body = body.replace(params["q"], "")
        found = shows(body, side)
        entity_leak = (
            path.startswith("/entities")
            and response.status_code == 200
            and any(slug in body for slug in side.only_slugs)
        )
        tally.check("rest", bool(found or entity_leak), f"{caller.name} {method} {path} {params}: {found}")


def write_rest(caller: Caller, side: Side, tally: Tally) -> None:
    """A store naming the other side's project lands in the caller's own team (or is refused); run
    after every read, since the caller's team then has a project of that slug of its own. The rows
    check after the run says whether anything of the other side changed."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {caller.key}")
    for slug in side.only_slugs:
        client.post(
            "/api/v1/observations",
            {"content": f"Deploys of {slug} need the release checklist first.", "entities": [slug]},
            format="json",
        )
        tally.attempts["rest"] += 1


def probe_dashboard(caller: Caller, side: Side, tally: Tally) -> None:
    from django.test import Client

    client = Client()
    client.force_login(caller.user)
    pages = [
        ("get", "/memories/{}/"),
        ("post", "/memories/{}/feedback/"),
        ("post", "/memories/{}/maturity/"),
        ("post", "/memories/{}/delete/"),
        ("get", "/review/{}/"),
        ("post", "/review/{}/approve/"),
        ("post", "/review/{}/reject/"),
    ]
    attempts = [(m, p, pk, str(uuid.uuid4())) for pk in side.memory_ids for m, p in pages]
    attempts += [
        (m, p, pk, str(uuid.uuid4()))
        for pk in side.session_pks
        for m, p in (
            ("get", "/sessions/{}/"),
            ("get", "/sessions/{}/status/"),
            ("post", "/sessions/{}/rerun/"),
        )
    ]
    attempts += [
        (m, p, str(pk), str(800000 + pk))
        for pk in side.entity_pks
        for m, p in (("get", "/entities/{}/"), ("post", "/entities/{}/aliases/"))
    ]
    attempts += [
        (m, "/review/changed/{}/", str(pk), str(800000 + pk))
        for pk in side.change_ids
        for m in ("get", "post")
    ]
    for method, path, real, missing in attempts:
        responses = [
            getattr(client, method)(path.format(ref), HTTP_HX_REQUEST="true") for ref in (real, missing)
        ]
        tally.check(
            "dashboard", not same_as_missing(*responses, real, missing), f"{caller.name} {method} {path}"
        )
    lists = ["/", "/review/", "/maturity/", "/entities/", "/sessions/", "/reflections/", "/export/"]
    lists += [f"/memories/?q={word}" for word in side.words] + ["/memories/"]
    for path in lists:
        body = client.get(path).content.decode(errors="replace")
        if "?q=" in path:  # the search box shows the question it was asked
            body = body.replace(path.split("?q=", 1)[1], "")
        found = shows(body, side)
        tally.check("dashboard", bool(found), f"{caller.name} GET {path}: {found}")


async def probe_mcp_async(base: str, caller: Caller, side: Side, tally: Tally) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {caller.key}"}, timeout=120)
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:

        async def text(name: str, arguments: dict) -> str:
            result = await client.call_tool(name, arguments)
            return json.dumps([getattr(item, "text", "") for item in result.content]) + json.dumps(
                getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
            )

        for word in side.words:
            for name in ("memory_lane_find", "semantic_memory_find"):
                query = f"{word} service deploy"
                body = (await text(name, {"query": query})).replace(query, "")  # the answer repeats it
                tally.check("mcp", bool(shows(body, side)), f"{caller.name} {name} {word}")
            body = await text("memory_lane_context", {"query": word})
            tally.check("mcp", bool(shows(body, side)), f"{caller.name} context {word}")
        for slug in side.only_slugs:
            body = await text("memory_lane_context", {"project": slug})
            tally.check("mcp", bool(shows(body, side)), f"{caller.name} context project {slug}")
            body = await text("memory_lane_find", {"query": "deploy", "entities": [slug]})
            tally.check("mcp", bool(shows(body, side)), f"{caller.name} find entity {slug}")
        for pk in side.memory_ids:
            missing = str(uuid.uuid4())
            real_body = await text("memory_lane_feedback", {"id": pk, "signal": "harmful"})
            missing_body = await text("memory_lane_feedback", {"id": missing, "signal": "harmful"})
            tally.check(
                "mcp",
                real_body.replace(pk, "ID") != missing_body.replace(missing, "ID"),
                f"{caller.name} feedback {pk}",
            )
        resource = await client.read_resource("memory://export/MEMORY.md")
        body = json.dumps([getattr(item, "text", "") for item in resource.contents])
        tally.check("mcp", bool(shows(body, side)), f"{caller.name} export resource")


def probe_mcp(callers, victims, tally: Tally) -> None:
    """The MCP tools through the real SDK client against a uvicorn process on the scratch database."""
    import subprocess
    import tempfile
    import time
    import urllib.request
    from urllib.parse import quote

    from django.db import connection

    from bench.scratch import free_port

    settings = connection.settings_dict
    host = settings["HOST"] or ""
    url = (
        f"postgresql://{quote(settings['USER'] or '')}@/{settings['NAME']}?host={quote(host)}"
        + (f"&port={settings['PORT']}" if settings["PORT"] else "")
        if host.startswith("/")
        else f"postgresql://{quote(settings['USER'] or '')}:{quote(settings['PASSWORD'] or '')}@{host}:{settings['PORT']}/{settings['NAME']}"
    )
    port = free_port()
    log_path = os.path.join(tempfile.gettempdir(), f"isolation-uvicorn-{os.getpid()}.log")
    log = open(log_path, "w")  # noqa: SIM115 - the server writes to it until it is stopped
    env = {**os.environ, "DATABASE_URL": url}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "memorylane.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/v1/health", timeout=5)
                break
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the server did not start; see {log_path}") from None
                time.sleep(0.5)
        for caller in callers:
            asyncio.run(probe_mcp_async(base, caller, victims[caller.name], tally))
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def rls_check() -> dict:
    """A raw query that forgets the team filter, run as the application inside one team: what it sees
    of the other team. ``None`` where the database has no row-level security on the table."""
    from django.db import connection, transaction

    from memory.models import Team

    with connection.cursor() as cursor:
        cursor.execute("SELECT relrowsecurity FROM pg_class WHERE relname = 'memory_memory'")
        (enabled,) = cursor.fetchone()
    if not enabled:
        return {"row_level_security": False}
    from memory.services.teams import acting_for  # present once the second wall is built

    acme = Team.objects.get(slug="acme")
    with transaction.atomic(), acting_for(acme), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_memory WHERE team_id <> %s", [acme.pk])
        (others,) = cursor.fetchone()
    return {"row_level_security": True, "other_team_rows_seen": others}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.isolation", description=__doc__.splitlines()[0])
    parser.add_argument("--no-mcp", action="store_true", help="skip the MCP probes (no server process)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")
    import django

    django.setup()
    import logging

    from django.conf import settings

    # Every refused probe is a 403/404 that Django and the HTTP client would log: the table says it.
    for name in ("django.request", "httpx", "httpx2", "mcp"):
        logging.getLogger(name).setLevel(logging.ERROR)

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {},
        "DEFAULT_THROTTLE_CLASSES": [],
    }

    tally = Tally()
    with scratch_database("memorylane_isolation"):
        callers, victims, sides = seed()
        before = {slug: snapshot(side.team) for slug, side in sides.items()}
        for caller in callers:
            probe_rest(caller, victims[caller.name], tally)
            if not caller.limited:  # a project allow-list is the token's; the person is a member
                probe_dashboard(caller, victims[caller.name], tally)
        if not args.no_mcp:
            probe_mcp(callers, victims, tally)
        for caller in callers:
            write_rest(caller, victims[caller.name], tally)
        for slug, side in sides.items():
            after = snapshot(side.team)
            for part, value in before[slug].items():
                own = {"acme": "acme", "globex": "globex"}[slug]
                # A team's own callers may change its rows; compare only what the other team's could.
                if part in ("memories", "entities", "sessions") and value != after[part]:
                    changed = set(map(tuple, value)) ^ set(map(tuple, after[part]))
                    foreign = [
                        row for row in changed if str(row[0]) in set(side.memory_ids + side.session_pks)
                    ]
                    tally.check("rows changed", bool(foreign), f"{own} {part}: {foreign[:3]}")
        rls = rls_check()
    total_attempts, total_leaks = sum(tally.attempts.values()), sum(tally.leaks.values())
    print(f"{'surface':<14}{'attempts':>10}{'leaked':>8}")
    for surface in sorted(tally.attempts):
        print(f"{surface:<14}{tally.attempts[surface]:>10}{tally.leaks[surface]:>8}")
    print(f"{'total':<14}{total_attempts:>10}{total_leaks:>8}")
    for example in tally.examples:
        print("  leak:", example)
    print("row-level security:", rls)
    print(
        json.dumps(
            {
                "attempts": total_attempts,
                "leaks": total_leaks,
                "by_surface": {
                    s: {"attempts": tally.attempts[s], "leaks": tally.leaks[s]} for s in tally.attempts
                },
                "rls": rls,
            }
        )
    )
    return 0 if total_leaks == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
