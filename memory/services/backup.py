"""Backup and restore of a team's memory as JSON lines (``manage.py export_data`` / ``import_data``).

The export is lossless for what the team built: memories (with their history: supersession,
inversions, condensation, reflection sources, timestamps, counters and embeddings), entities with
aliases and merges, mentions, sessions with their messages and recalls, feedback events, the audit
log (which keeps every reinforcement's incoming text), changed facts, and the people these refer
to (by username; never a password). API tokens are not exported (a restored server issues new ones),
nor job runs (operational history, not memory).

Line 1 is a header (format, version, embedding model, counts); every other line is
``{"type": <kind>, "data": {...}}``. References between rows use stable keys: usernames, entity
slugs, memory and session UUIDs.

An import validates the whole file first and reports every problem with its line number; only a
valid file is written, in one transaction (a bad file changes nothing). Rows already present (the
same id or natural key) are left as they are, so importing the same file twice adds nothing. An
export made with another embedding model is refused unless the embeddings are recomputed. A memory
the file carries without an embedding (a file written by another tool) is embedded with this
server's model.

Teams (DESIGN.md §11): an export is one team's (``export_lines(team=…)`` writes that team's rows and
nothing of another team's; the header names the team), and an import writes into the team it is
given, whatever team the file came from. Rows never carry their team in the file. An import never
touches a row of another team: a memory or session whose id already belongs to another team (a
team's backup imported into a second team, say) is **given a new id** — derived from the old id and
the receiving team, so importing the same file again finds it and adds nothing — and every reference
to it in the file (supersession, sources, mentions, messages, recalls, feedback, the audit log's
``memory_ref``, changed facts) follows it. Entities are matched by slug within the team; a reference
to a row that is neither in the file nor in the receiving team (another team's id) is a problem
like any unknown reference. People are created when missing (without a password) but are not made
members of the team: importing a file grants nobody access.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory import embeddings
from memory.conf import setting
from memory.models import (
    Entity,
    EntityMention,
    FactChange,
    FeedbackEvent,
    Memory,
    MemoryEvent,
    Recall,
    Session,
    SessionMessage,
    Team,
)
from memory.services.errors import InvalidInput
from memory.services.search import vector_text

FORMAT = "memorylane-export"
VERSION = 1

User = get_user_model()
USER_FIELDS = (
    "username",
    "email",
    "first_name",
    "last_name",
    "is_staff",
    "is_superuser",
    "is_active",
    "date_joined",
)


@dataclass(frozen=True)
class Kind:
    """One exported table: its rows' identity (``key``: the id, or a natural key after references are
    resolved) and the fields set after every row exists (references to rows of the same table)."""

    name: str
    model: type[models.Model]
    key: tuple[str, ...]
    deferred: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


# In dependency order: a row refers only to kinds above it (or, deferred, to its own kind).
# Every kind is team-owned; the team is never written (an import puts rows into the team it is given).
KINDS = [
    Kind("entity", Entity, ("slug",), deferred=("merged_into",), exclude=("id", "team")),
    Kind("session", Session, ("id",), exclude=("team",)),
    Kind(
        "memory",
        Memory,
        ("id",),
        deferred=("superseded_by", "inverted_from", "condensed_into", "sources"),
        exclude=("search_vector", "team"),
    ),
    Kind("mention", EntityMention, ("memory", "entity", "raw"), exclude=("id", "team")),
    Kind("message", SessionMessage, ("session", "seq"), exclude=("id", "team")),
    Kind("recall", Recall, ("session", "memory"), exclude=("id", "team")),
    Kind(
        "feedback",
        FeedbackEvent,
        ("memory", "signal", "source", "user", "session", "created_at"),
        exclude=("id", "team"),
    ),
    Kind("event", MemoryEvent, ("memory_ref", "action", "created_at"), exclude=("id", "team")),
    Kind("fact_change", FactChange, ("old", "new"), exclude=("id", "team")),
]
BY_NAME = {kind.name: kind for kind in KINDS}


def _fields(kind: Kind) -> list[models.Field]:
    """The exported fields: concrete columns and many-to-many links, not automatic ids."""
    return [
        f
        for f in kind.model._meta.get_fields()
        if (f.concrete or f.many_to_many) and not f.auto_created and f.name not in kind.exclude
    ]


def _ref_target(f: models.Field) -> str | None:
    if not f.is_relation:
        return None
    target = f.related_model
    if target is User:
        return "user"
    return {Entity: "entity", Memory: "memory", Session: "session"}[target]


def _dump_value(f: models.Field, obj) -> object:
    if f.many_to_many:
        return sorted(str(pk) for pk in getattr(obj, f.name).all().values_list("pk", flat=True))
    value = getattr(obj, f.attname)
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    if f.is_relation or f.get_internal_type() == "UUIDField":
        return str(value)
    if f.name == "embedding":
        return [float(x) for x in value]
    return value


# --- export ---------------------------------------------------------------------------------------


def embedding_model_name() -> str:
    return embeddings.model_location().rstrip("/").rsplit("/", 1)[-1]


def export_lines(*, team: Team, progress: Callable[[int, int], None] | None = None) -> Iterator[str]:
    """Every line of ``team``'s export, the header first: the team's rows and the people they
    refer to, nothing of another team."""
    own_memories = Memory.objects.for_team(team)
    querysets = {
        "entity": Entity.objects.for_team(team).order_by("slug"),
        "session": Session.objects.for_team(team).order_by("created_at", "id"),
        "memory": own_memories.order_by("created_at", "id").prefetch_related(
            models.Prefetch("sources", queryset=Memory.objects.for_team(team).only("pk"))
        ),
        "mention": EntityMention.objects.for_team(team).order_by("id"),
        "message": SessionMessage.objects.for_team(team).order_by("session_id", "seq"),
        "recall": Recall.objects.for_team(team).order_by("id"),
        "feedback": FeedbackEvent.objects.for_team(team).order_by("id"),
        "event": MemoryEvent.objects.for_team(team).order_by("id"),
        "fact_change": FactChange.objects.for_team(team).order_by("id"),
    }
    counts = {name: qs.count() for name, qs in querysets.items()}
    referenced = set()
    for model, names in (
        (Memory, ("author", "reviewed_by")),
        (Session, ("user",)),
        (FeedbackEvent, ("user",)),
        (MemoryEvent, ("actor",)),
        (FactChange, ("resolved_by",)),
    ):
        for name in names:
            rows = model.objects.for_team(team).exclude(**{f"{name}__isnull": True})
            referenced |= set(rows.values_list(name, flat=True))
    users = User.objects.filter(pk__in=referenced).order_by("username")
    counts["user"] = users.count()
    header = {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "exported_at": timezone.now().isoformat(),
        "team": team.slug,
        "embedding_model": embedding_model_name(),
        "dimensions": 384,
        "counts": counts,
    }
    yield json.dumps(header)
    total, done = sum(counts.values()), 0
    usernames = {}
    for user in users:
        usernames[user.pk] = user.username
        yield json.dumps(
            {"type": "user", "data": {name: _plain(getattr(user, name)) for name in USER_FIELDS}}
        )
        done += 1
    slugs = dict(Entity.objects.for_team(team).values_list("pk", "slug"))
    for kind in KINDS:
        fields = _fields(kind)
        rows = querysets[kind.name]
        for obj in rows.iterator(chunk_size=500) if kind.name != "memory" else rows:
            data = {}
            for f in fields:
                value = getattr(obj, f.attname) if f.is_relation and not f.many_to_many else None
                if value is not None and _ref_target(f) == "user":
                    data[f.name] = usernames[value]
                elif value is not None and _ref_target(f) == "entity":
                    data[f.name] = slugs[value]
                else:
                    data[f.name] = _dump_value(f, obj)
            yield json.dumps({"type": kind.name, "data": data}, ensure_ascii=False)
            done += 1
            if progress and done % 100 == 0:
                progress(done, total)
    if progress:
        progress(total, total)


def _plain(value):
    return value.isoformat() if isinstance(value, datetime) else value


# --- import ---------------------------------------------------------------------------------------


@dataclass
class Plan:
    header: dict
    rows: dict[str, list[tuple[int, dict]]] = field(default_factory=dict)


@dataclass
class ImportReport:
    team: str = ""
    created: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    new_ids: int = 0  # memories and sessions whose id belonged to another team, imported under a new one
    recomputed_embeddings: int = 0
    embedded_missing: int = 0  # memories the file carried without an embedding, embedded on import


class ImportProblems(InvalidInput):
    """The file is not a valid export; ``problems`` lists each with its line number."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__({"file": problems})


def _parse(lines: Iterable[str]) -> tuple[Plan | None, list[str]]:
    problems: list[str] = []
    plan: Plan | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            problems.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            problems.append(f"line {number}: not a JSON object")
            continue
        if plan is None:
            if record.get("type") != "header" or record.get("format") != FORMAT:
                problems.append(f"line {number}: the first line is not a {FORMAT} header")
                return None, problems
            if record.get("version") != VERSION:
                problems.append(
                    f"line {number}: version {record.get('version')!r}; this server reads version {VERSION}"
                )
                return None, problems
            plan = Plan(header=record)
            continue
        kind, data = record.get("type"), record.get("data")
        if kind != "user" and kind not in BY_NAME:
            problems.append(f"line {number}: unknown type {kind!r}")
        elif not isinstance(data, dict):
            problems.append(f"line {number}: {kind} has no data object")
        else:
            plan.rows.setdefault(kind, []).append((number, data))
    if plan is None and not problems:
        problems.append("line 1: the file is empty")
    return plan, problems


def _check_fields(kind: Kind, number: int, data: dict, problems: list[str]) -> None:
    fields = {f.name: f for f in _fields(kind)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        problems.append(f"line {number}: {kind.name} has unknown fields: {', '.join(unknown)}")
    for name in kind.key:
        if data.get(name) is None and name not in ("entity", "user", "session"):
            problems.append(f"line {number}: {kind.name} lacks {name}")
    for name, f in fields.items():
        if name not in data or f.is_relation:
            continue
        value = data[name]
        if value is None:
            if not f.null:
                problems.append(f"line {number}: {kind.name}.{name} may not be null")
            continue
        try:
            if f.name == "embedding":
                if not (
                    isinstance(value, list)
                    and len(value) == 384
                    and all(isinstance(x, int | float) for x in value)
                ):
                    raise ValidationError("an embedding is a list of 384 numbers")
                continue
            if isinstance(f, models.JSONField):
                continue
            python = f.to_python(value)
            if f.blank and python in f.empty_values:
                continue
            f.validate(python, None)
            f.run_validators(python)
        except ValidationError as exc:
            problems.append(f"line {number}: {kind.name}.{name}: {' '.join(exc.messages)}")
        except (TypeError, ValueError, AttributeError):
            problems.append(f"line {number}: {kind.name}.{name}: {value!r} is not a valid value")


def validate(lines: Iterable[str], *, team: Team, recompute_embeddings: bool = False) -> Plan:
    """Parse and check a whole export for an import into ``team``; raises :class:`ImportProblems`
    listing every problem. A reference is known when its row is in the file or in ``team``."""
    plan, problems = _parse(lines)
    if plan is None:
        raise ImportProblems(problems)
    model = plan.header.get("embedding_model")
    if model != embedding_model_name() and not recompute_embeddings:
        problems.append(
            f"line 1: the export's embeddings come from {model!r}, this server uses {embedding_model_name()!r}: "
            "import with --recompute-embeddings"
        )
    usernames = {data.get("username") for _, data in plan.rows.get("user", [])}
    usernames |= set(User.objects.values_list("username", flat=True))
    known = {
        "user": usernames,
        "entity": {d.get("slug") for _, d in plan.rows.get("entity", [])}
        | set(Entity.objects.for_team(team).values_list("slug", flat=True)),
        "session": {str(d.get("id")) for _, d in plan.rows.get("session", [])}
        | {str(pk) for pk in Session.objects.for_team(team).values_list("pk", flat=True)},
        "memory": {str(d.get("id")) for _, d in plan.rows.get("memory", [])}
        | {str(pk) for pk in Memory.objects.for_team(team).values_list("pk", flat=True)},
    }
    for number, data in plan.rows.get("user", []):
        if not isinstance(data.get("username"), str) or not data["username"]:
            problems.append(f"line {number}: user lacks username")
        unknown = sorted(set(data) - set(USER_FIELDS))
        if unknown:
            problems.append(f"line {number}: user has unknown fields: {', '.join(unknown)}")
    for kind in KINDS:
        relations = [f for f in _fields(kind) if f.is_relation]
        for number, data in plan.rows.get(kind.name, []):
            _check_fields(kind, number, data, problems)
            for f in relations:
                value = data.get(f.name)
                values = value if f.many_to_many and isinstance(value, list) else [value]
                for item in values:
                    if item is not None and str(item) not in known[_ref_target(f)]:
                        problems.append(
                            f"line {number}: {kind.name}.{f.name} refers to an unknown {_ref_target(f)} {item!r}"
                        )
    if problems:
        raise ImportProblems(problems)
    return plan


@contextmanager
def _keep_timestamps():
    """``updated_at`` is ``auto_now``: off while importing, so the exported value is kept."""
    fields = [Memory._meta.get_field("updated_at"), Session._meta.get_field("updated_at")]
    for f in fields:
        f.auto_now = False
    try:
        yield
    finally:
        for f in fields:
            f.auto_now = True


def _new_ids(plan: Plan, team: Team) -> dict[str, str]:
    """The memories and sessions of the file whose id belongs to another team, each with the id it
    gets in ``team``: derived from the old id and the team, so a second import of the file finds the
    rows the first one wrote. The one look beyond the team's rows: at ids only, so that nothing of
    another team is overwritten (or skipped as if it were this team's)."""
    renamed: dict[str, str] = {}
    for kind in ("session", "memory"):
        ids = set()
        for _, data in plan.rows.get(kind, []):
            try:
                ids.add(uuid.UUID(str(data.get("id"))))
            except ValueError:
                continue
        model = BY_NAME[kind].model
        elsewhere = model.objects.filter(pk__in=ids).exclude(team=team).values_list("pk", flat=True)
        for pk in elsewhere:
            renamed[str(pk)] = str(uuid.uuid5(pk, f"memorylane-team:{team.pk}"))
    return renamed


def import_plan(
    plan: Plan,
    *,
    team: Team,
    recompute_embeddings: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Write a validated export into ``team`` in one transaction; rows already present in the team
    are left as they are, and ids of another team's rows are given new ones (the module docstring)."""
    report = ImportReport(team=team.slug)
    total = sum(len(rows) for rows in plan.rows.values())
    done = 0
    with transaction.atomic(), _keep_timestamps():
        renamed = _new_ids(plan, team)
        report.new_ids = len(renamed)

        def mapped(value):
            """A memory's or session's id as it is in ``team``."""
            return renamed.get(str(value), value) if value is not None else None

        users = dict(User.objects.values_list("username", "pk"))
        for _, data in plan.rows.get("user", []):
            if data["username"] in users:
                report.skipped["user"] = report.skipped.get("user", 0) + 1
                continue
            fields = {k: v for k, v in data.items() if k in USER_FIELDS}
            if isinstance(fields.get("date_joined"), str):
                fields["date_joined"] = parse_datetime(fields["date_joined"])
            user = User(**fields)
            user.set_unusable_password()  # passwords are never exported: a curator resets them
            user.save()
            users[user.username] = user.pk
            report.created["user"] = report.created.get("user", 0) + 1
        entities = dict(Entity.objects.for_team(team).values_list("slug", "pk"))
        deferred: list[tuple[Kind, object, dict]] = []
        for kind in KINDS:
            fields = [f for f in _fields(kind) if not f.many_to_many]
            for number, data in plan.rows.get(kind.name, []):
                values = {"team_id": team.pk}
                for f in fields:
                    if f.name not in data or f.name in kind.deferred:
                        continue
                    value = data[f.name]
                    if (kind.name in ("session", "memory") and f.name == "id") or (
                        kind.name == "event" and f.name == "memory_ref"
                    ):
                        value = mapped(value)
                    if f.is_relation and value is not None:
                        target = _ref_target(f)
                        value = (
                            users[value]
                            if target == "user"
                            else entities[value]
                            if target == "entity"
                            else mapped(value)
                        )
                        values[f.attname] = value
                    else:
                        values[f.name] = (
                            f.to_python(value) if value is not None and f.name != "embedding" else value
                        )
                attnames = [kind.model._meta.get_field(name).attname for name in kind.key]
                existing = (
                    kind.model.objects.for_team(team)
                    .filter(**{name: values.get(name) for name in attnames})
                    .first()
                )
                if existing is not None:
                    report.skipped[kind.name] = report.skipped.get(kind.name, 0) + 1
                else:
                    existing = kind.model(**values)
                    try:
                        with transaction.atomic():
                            existing.save(force_insert=True)
                    except IntegrityError as exc:
                        raise ImportProblems(
                            [
                                f"line {number}: {kind.name} conflicts with what the database holds: {exc}".strip()
                            ]
                        ) from exc
                    report.created[kind.name] = report.created.get(kind.name, 0) + 1
                    if kind.deferred:
                        deferred.append((kind, existing, data))
                if kind is BY_NAME["entity"]:
                    entities[existing.slug] = existing.pk
                done += 1
                if progress and done % 100 == 0:
                    progress(done, total)
        for kind, obj, data in deferred:
            changes = {}
            for name in kind.deferred:
                value = data.get(name)
                f = kind.model._meta.get_field(name)
                if f.many_to_many:
                    if value:
                        getattr(obj, name).set([mapped(item) for item in value])
                elif value is not None:
                    changes[f.attname] = entities[value] if _ref_target(f) == "entity" else mapped(value)
            if changes:
                kind.model.objects.for_team(team).filter(pk=obj.pk).update(**changes)
        if recompute_embeddings:
            report.recomputed_embeddings = _recompute_embeddings(team)
        else:
            report.embedded_missing = _recompute_embeddings(team, missing_only=True)
    if progress:
        progress(total, total)
    return report


# One statement writes a batch's embeddings (ids and pgvector's text form, side by side).
EMBEDDINGS_UPDATE_SQL = (
    "UPDATE memory_memory AS m SET embedding = v.embedding::vector "
    "FROM unnest(%s::uuid[], %s::text[]) AS v(id, embedding) WHERE m.id = v.id AND m.team_id = %s"
)


def _recompute_embeddings(team: Team, *, missing_only: bool = False) -> int:
    """Embed every memory with this server's model, or only those without an embedding (a file
    written by another tool may carry none: such a memory could be found by its words only, and a
    store could not recognise it as a duplicate), BACKUP_BATCH_SIZE at a time, one statement each.
    Returns how many were embedded. Only ``team``'s memories."""
    batch = setting("BACKUP_BATCH_SIZE")
    own = Memory.objects.for_team(team)
    memories = own.filter(embedding__isnull=True) if missing_only else own
    pks = list(memories.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), batch):
        chunk = list(own.filter(pk__in=pks[start : start + batch]).values_list("pk", "content"))
        vectors = embeddings.encode([content for _, content in chunk])
        with connection.cursor() as cursor:
            cursor.execute(
                EMBEDDINGS_UPDATE_SQL,
                [[pk for pk, _ in chunk], [vector_text(vector) for vector in vectors], team.pk],
            )
    return len(pks)


def import_lines(
    lines: Iterable[str],
    *,
    team: Team,
    recompute_embeddings: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Validate a whole export, then write it into ``team`` (see the module's docstring)."""
    plan = validate(lines, team=team, recompute_embeddings=recompute_embeddings)
    return import_plan(plan, team=team, recompute_embeddings=recompute_embeddings, progress=progress)
