"""Entities (DESIGN.md §4.2): slugs, resolution of names, extraction from paths and text, merging.

Entities belong to a team (DESIGN.md §11): a slug is unique per team, and every pool, name index and
lookup here is one team's — ``project:api`` of two teams is two entities that never meet.
"""

from __future__ import annotations

import functools
import re
import threading
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.db import connection, transaction
from django.db.models.signals import post_delete, post_save

from memory.conf import setting
from memory.models import ENTITY_SLUG_PATTERN, Entity, EntityMention, EntityType, Memory, Session, Team
from memory.rows import RowReader, row_reader
from memory.services.errors import AmbiguousEntity, InvalidInput, NotFound

SLUG_RE = re.compile(ENTITY_SLUG_PATTERN)
SLUG_IN_TEXT_RE = re.compile(r"\b(?:" + "|".join(EntityType.values) + r"):[a-z0-9]+(?:-[a-z0-9]+)*\b")
MAX_REFERENCE_LENGTH = 200
MIN_NAME_KEY_LENGTH = 3  # shorter names ("ui", "db") would match too much running text


def slugify_name(name: str) -> str:
    """ "Mark Robinson" → "mark-robinson"; accents folded, anything not [a-z0-9] becomes a dash."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")


def is_slug(reference: str) -> bool:
    return bool(SLUG_RE.match(reference))


def normalize_slug(reference: str) -> str | None:
    """``"Person:Mark Robinson"`` → ``"person:mark-robinson"``; None when it is not a typed reference."""
    if ":" not in reference:
        return None
    entity_type, _, name = reference.partition(":")
    entity_type = entity_type.strip().lower()
    name = slugify_name(name)
    if entity_type not in EntityType.values or not name:
        return None
    return f"{entity_type}:{name}"


def name_from_slug(slug: str) -> str:
    """``person:mark-robinson`` → "Mark Robinson"."""
    return " ".join(word.capitalize() for word in slug.split(":", 1)[1].split("-"))


def canonical(entity: Entity) -> Entity:
    """Follow ``merged_into`` to the entity that survived the merges."""
    seen = {entity.pk}
    while entity.merged_into_id is not None and entity.merged_into_id not in seen:
        seen.add(entity.merged_into_id)
        entity = entity.merged_into
    return entity


def _team_id(team: Team | int) -> int:
    return team if isinstance(team, int) else team.pk


def entities_for_slugs(slugs: Iterable[str], *, team: Team, create: bool) -> dict[str, Entity]:
    """Valid slugs → ``team``'s canonical entities in a few queries; with ``create``, missing ones
    are created in the team, each named from its slug (concurrent creators meet at the slug, unique
    per team)."""
    team_id = _team_id(team)
    slugs = list(dict.fromkeys(slugs))
    found = _entities_by_slug(slugs, team_id)
    missing = [slug for slug in slugs if slug not in found]
    if create and missing:
        Entity.objects.bulk_create(
            [
                Entity(team_id=team_id, slug=slug, type=slug.split(":", 1)[0], name=name_from_slug(slug))
                for slug in missing
            ],
            ignore_conflicts=True,
        )
        invalidate_name_index(team_id=team_id)
        found.update(_entities_by_slug(missing, team_id))
    return {slug: canonical(entity) for slug, entity in found.items()}


@functools.cache
def _slug_reader() -> RowReader:
    """:func:`row_reader`'s statement for entities by slug, within one team (its last parameter)."""
    reader = row_reader(Entity, (("merged_into", None),), key="slug", many=True)
    team = connection.ops.quote_name(Entity._meta.get_field("team").column)
    return RowReader(f"{reader.sql} AND m.{team} = %s", reader.parts, reader.related)


def _entities_by_slug(slugs: list[str], team_id: int) -> dict[str, Entity]:
    """The team's entities of ``slugs`` (those that exist), each with the one it was merged into.
    One hand-written statement (memory/rows.py): every store resolves its entities, and through the
    ORM the lookup cost 0.8 ms of Python, 0.2 now (bench/HISTORY.md, stop 29)."""
    if not slugs:
        return {}
    found = _slug_reader().read([slugs, team_id])
    return {entity.slug: entity for entity in found}


def entity_get_or_create(slug: str, *, team: Team) -> Entity:
    """``team``'s (canonical) entity for a valid slug, created — named from the slug — if new."""
    return entities_for_slugs([slug], team=team, create=True)[slug]


def _name_keys(entity: Entity) -> set[str]:
    keys = {slugify_name(entity.name), entity.slug.split(":", 1)[1]}
    keys.update(slugify_name(alias) for alias in entity.aliases)
    return {key for key in keys if key}


def match_name(name: str, entities: Iterable[Entity]) -> list[Entity]:
    """The entities of ``entities`` (one team's canonical ones) a bare name refers to: an exact
    name/alias match, else leading-word matches."""
    wanted = slugify_name(name)
    if not wanted:
        return []
    pool = list(entities)
    exact = [entity for entity in pool if wanted in _name_keys(entity)]
    if exact:
        return exact
    return [entity for entity in pool if any(key.startswith(wanted + "-") for key in _name_keys(entity))]


@dataclass
class Resolution:
    entities: list[Entity] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    ambiguities: dict[str, list[str]] = field(default_factory=dict)

    def raise_if_ambiguous(self) -> Resolution:
        if self.ambiguities:
            raise AmbiguousEntity(self.ambiguities)
        return self


def validate_references(references: Iterable[str]) -> list[str]:
    cleaned, errors = [], []
    for reference in references:
        if not isinstance(reference, str) or not reference.strip():
            errors.append("Entity references must be non-empty strings.")
        elif len(reference) > MAX_REFERENCE_LENGTH:
            errors.append(f"Entity references are at most {MAX_REFERENCE_LENGTH} characters.")
        else:
            cleaned.append(reference.strip())
    if len(cleaned) > setting("MAX_ENTITIES"):
        errors.append(f"At most {setting('MAX_ENTITIES')} entities.")
    if errors:
        raise InvalidInput({"entities": sorted(set(errors))})
    return list(dict.fromkeys(cleaned))


def resolve_references(
    references: Iterable[str],
    *,
    team: Team,
    create: bool,
    by_slug: dict[str, Entity] | None = None,
    pool: list[Entity] | None = None,
) -> Resolution:
    """Resolve slugs and bare names among ``team``'s entities. Slugs are created when ``create`` (on
    store), else looked up. ``by_slug`` and ``pool`` (the team's canonical entities) let a caller
    resolving many lists query once."""
    resolution = Resolution()
    references = validate_references(references)
    slugs = {reference: normalize_slug(reference) for reference in references}
    wanted = [slug for slug in slugs.values() if slug and (by_slug is None or slug not in by_slug)]
    by_slug = {
        **(by_slug or {}),
        **(entities_for_slugs(wanted, team=team, create=create) if wanted else {}),
    }
    for reference in references:
        if slugs[reference] is not None:
            matches = [by_slug[slugs[reference]]] if slugs[reference] in by_slug else []
        else:
            if pool is None:
                pool = list(Entity.objects.for_team(team).canonical())
            matches = match_name(reference, pool)
        if len(matches) == 1:
            if matches[0] not in resolution.entities:
                resolution.entities.append(matches[0])
        elif matches:
            resolution.ambiguities[reference] = sorted(entity.slug for entity in matches)
        else:
            resolution.unknown.append(reference)
    return resolution


def resolve_project(reference: str, *, team: Team) -> Entity | None:
    """``team``'s project given as a slug, a bare project name ("billing-api") or any entity name;
    None if unknown. Raises AmbiguousEntity when a bare name matches several entities."""
    slug = normalize_slug(reference) or normalize_slug(f"{EntityType.PROJECT}:{reference}")
    if slug is not None:
        entity = Entity.objects.for_team(team).filter(slug=slug).select_related("merged_into").first()
        if entity is not None:
            return canonical(entity)
    if ":" in reference:
        return None
    resolution = resolve_references([reference], team=team, create=False).raise_if_ambiguous()
    return resolution.entities[0] if resolution.entities else None


def entities_from_paths(paths: Iterable[str]) -> list[str]:
    """Slugs implied by file paths: ``packages/x/…`` → ``project:x``; ``src/auth/…`` → ``feature:auth``."""
    project_roots = set(setting("ENTITY_PROJECT_ROOTS"))
    source_roots = set(setting("ENTITY_SOURCE_ROOTS"))
    generic = set(setting("ENTITY_GENERIC_DIRS"))
    slugs: list[str] = []
    for raw in paths:
        parts = [
            part for part in PurePosixPath(str(raw).replace("\\", "/")).parts if part not in {"/", ".", ".."}
        ]
        directories = parts[:-1]  # the last part is the file itself
        for index, part in enumerate(directories):
            if part in project_roots and index + 1 < len(directories):
                if name := slugify_name(directories[index + 1]):
                    slugs.append(f"project:{name}")
                break
        for index, part in enumerate(directories):
            if part in source_roots:
                feature = next((d for d in directories[index + 1 :] if d.lower() not in generic), None)
                if feature and (name := slugify_name(feature)):
                    slugs.append(f"feature:{name}")
                break
    return list(dict.fromkeys(slugs))


@dataclass
class Detected:
    entities: list[Entity] = field(default_factory=list)
    ambiguities: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class NameIndex:
    """Every name key (slugified name, slug name, alias) of one team's canonical entities → those
    entities, in slug order: what :func:`detect_in_text` looks the words of a text up in."""

    keys: dict[str, list[Entity]]
    longest: int  # the most words in a key
    max_id: int | None  # the team's newest entity when it was built
    built_at: float
    team_id: int | None = None  # the team of the entities (None: built from a pool of none)

    @classmethod
    def build(cls, pool: Iterable[Entity], max_id: int | None = None) -> NameIndex:
        keys: dict[str, list[Entity]] = {}
        team_id = None
        for entity in pool:
            team_id = entity.team_id
            for key in sorted(_name_keys(entity)):
                if len(key) >= MIN_NAME_KEY_LENGTH:
                    keys.setdefault(key, []).append(entity)
        longest = max((key.count("-") + 1 for key in keys), default=0)
        return cls(keys, longest, max_id, time.monotonic(), team_id)

    def matches(self, text: str) -> dict[str, list[Entity]]:
        """The keys that are whole runs of the text's words (what ``-key-`` in ``-text-`` finds)."""
        words = slugify_name(text).split("-")
        found: dict[str, list[Entity]] = {}
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + self.longest) + 1):
                key = "-".join(words[start:end])
                if key in self.keys:
                    found[key] = self.keys[key]
        # In the order a scan of the entities by slug finds them.
        return dict(sorted(found.items(), key=lambda item: item[1][0].slug))


# One name index per team, by team id: a team's names never detect another team's entities.
_name_indexes: dict[int, NameIndex] = {}
_name_index_lock = threading.Lock()


def name_index(team: Team) -> NameIndex:
    """The name index of ``team``'s canonical entities, built once per process and team. Rebuilt
    when an entity of the team is created (its id is newer than the index: one index lookup per
    call), when one is saved or deleted in this process, and after ENTITY_INDEX_SECONDS (aliases or
    merges from another process)."""
    team_id = _team_id(team)
    max_id = newest_entity_id(team_id)
    index = _name_indexes.get(team_id)
    if (
        index is None
        or index.max_id != max_id
        or time.monotonic() - index.built_at > setting("ENTITY_INDEX_SECONDS")
    ):
        with _name_index_lock:
            index = NameIndex.build(Entity.objects.for_team(team_id).canonical(), max_id)
            index.team_id = team_id
            _name_indexes[team_id] = index
    return index


def newest_entity_id(team: Team) -> int | None:
    """``team``'s newest entity's id (the name index's freshness check on every search): a
    hand-written statement, 0.10 ms of Python against 0.39 through the ORM's aggregate
    (bench/HISTORY.md, stop 29)."""
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT max({quote(Entity._meta.pk.column)}) FROM {quote(Entity._meta.db_table)} "
            f"WHERE {quote(Entity._meta.get_field('team').column)} = %s",
            [_team_id(team)],
        )
        return cursor.fetchone()[0]


def entity_slugs_of(memory_ids: list) -> dict:
    """``{memory id: sorted slugs}`` of the entities the memories ``memory_ids`` mention (resolved
    mentions only), every id present. The ids are of memories the caller read through its team; a
    mention only ever names an entity of its own team. One hand-written statement: a search's
    results look them up on every request, and through the ORM that cost 0.7 ms of Python, 0.2 now
    (bench/HISTORY.md, stop 29)."""
    slugs: dict = {pk: set() for pk in memory_ids}
    if slugs:
        quote = connection.ops.quote_name
        mention, entity = EntityMention._meta, Entity._meta
        team = quote(entity.get_field("team").column)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT m.{quote(mention.get_field('memory').column)}, e.{quote(entity.get_field('slug').column)} "
                f"FROM {quote(mention.db_table)} m JOIN {quote(entity.db_table)} e "
                f"ON e.{quote(entity.pk.column)} = m.{quote(mention.get_field('entity').column)} "
                f"AND e.{team} = m.{team} "
                f"WHERE m.{quote(mention.get_field('memory').column)} = ANY(%s) "
                f"AND m.{quote(mention.get_field('resolved').column)}",
                [list(slugs)],
            )
            for memory_id, slug in cursor.fetchall():
                slugs[memory_id].add(slug)
    return {pk: sorted(found) for pk, found in slugs.items()}


def invalidate_name_index(*, team_id: int | None = None, instance: Entity | None = None, **kwargs) -> None:
    """Forget the name index of a team (``team_id``, or that of the saved or deleted entity
    ``instance``), or of every team when neither is given."""
    if instance is not None:
        team_id = instance.team_id
    if team_id is None:
        _name_indexes.clear()
    else:
        _name_indexes.pop(team_id, None)


post_save.connect(invalidate_name_index, sender=Entity, dispatch_uid="entities-name-index-save")
post_delete.connect(invalidate_name_index, sender=Entity, dispatch_uid="entities-name-index-delete")


def detect_in_text(
    text: str, pool: list[Entity] | None = None, index: NameIndex | None = None, *, team: Team | None = None
) -> Detected:
    """``team``'s entities named in ``text``: explicit slugs, plus full names and aliases of its
    known entities. ``pool`` (the team's canonical entities) saves a query when many texts are
    checked; ``index`` (from :func:`name_index`) saves scanning them at all. ``team`` is required
    without either (with one, it is theirs: a team without entities detects nothing)."""
    if team is not None:
        team_id = _team_id(team)
    elif index is not None and index.team_id is not None:
        team_id = index.team_id
    elif pool is not None:
        team_id = next((entity.team_id for entity in pool), None)
    elif index is not None:
        team_id = None  # built from an empty pool: the team has no entities
    else:
        raise TypeError("detect_in_text needs a team when it is given no pool and no index")
    detected = Detected()
    slugs = list(dict.fromkeys(SLUG_IN_TEXT_RE.findall(text.lower())))
    if slugs and team_id is not None:
        found = Entity.objects.for_team(team_id).filter(slug__in=slugs).select_related("merged_into")
        for entity in found:
            entity = canonical(entity)
            if entity not in detected.entities:
                detected.entities.append(entity)
    if index is None:
        if pool is None:
            pool = list(Entity.objects.for_team(team_id).canonical())
        index = NameIndex.build(pool)
    by_key = index.matches(text)
    for key, matches in by_key.items():
        if len(matches) == 1:
            if matches[0] not in detected.entities:
                detected.entities.append(matches[0])
        else:
            detected.ambiguities[key] = sorted(entity.slug for entity in matches)
    return detected


def link_entities(memory: Memory, entities: Iterable[Entity], *, raw: dict[int, str] | None = None) -> None:
    """Record resolved mentions of ``entities`` on ``memory`` (existing links are kept)."""
    raw = raw or {}
    entities = list(entities)
    if not entities:
        return
    if any(entity.team_id != memory.team_id for entity in entities):
        raise NotFound("No such entity.")
    EntityMention.objects.bulk_create(
        [
            EntityMention(
                team_id=memory.team_id,
                memory=memory,
                entity=entity,
                raw=raw.get(entity.pk, entity.slug)[:200],
                resolved=True,
            )
            for entity in entities
        ],
        ignore_conflicts=True,
    )


def record_unresolved(memory: Memory, ambiguities: dict[str, list[str]], unknown: Iterable[str] = ()) -> None:
    """Keep names that could not be resolved, for a curator's ambiguity queue."""
    mentions = [
        EntityMention(
            team_id=memory.team_id, memory=memory, raw=name[:200], resolved=False, candidates=candidates
        )
        for name, candidates in ambiguities.items()
    ]
    mentions += [
        EntityMention(team_id=memory.team_id, memory=memory, raw=name[:200], resolved=False)
        for name in unknown
    ]
    existing = set(memory.mentions.filter(resolved=False).values_list("raw", flat=True))
    EntityMention.objects.bulk_create([m for m in mentions if m.raw not in existing])


@transaction.atomic
def mention_resolve(*, mention: EntityMention, entity: Entity) -> EntityMention:
    """A curator picks the entity an unresolved mention means: one of the mention's team (another
    team's entity raises NotFound, as a missing one)."""
    entity = (
        Entity.objects.for_team(mention.team_id).select_related("merged_into").filter(pk=entity.pk).first()
    )
    if entity is None:
        raise NotFound("No such entity.")
    entity = canonical(entity)
    duplicate = (
        EntityMention.objects.for_team(mention.team_id)
        .filter(memory_id=mention.memory_id, entity=entity)
        .exclude(pk=mention.pk)
    )
    if duplicate.exists():
        mention.delete()
        return duplicate.get()
    mention.entity = entity
    mention.resolved = True
    mention.save(update_fields=["entity", "resolved"])
    return mention


@transaction.atomic
def entity_merge(*, source: Entity, target: Entity) -> Entity:
    """Merge ``source`` into ``target``: aliases move, mentions and sessions re-point, the source is kept
    with ``merged_into`` so its slug still resolves. Both are of one team: a target of another team
    raises NotFound, as a missing one."""
    entities = Entity.objects.for_team(source.team_id).select_for_update()
    source = entities.filter(pk=source.pk).first()
    found = entities.filter(pk=target.pk).first()
    if source is None or found is None:
        raise NotFound(f"No entity {target.slug!r}." if source is not None else "No such entity.")
    target = canonical(found)
    if source.pk == target.pk:
        raise InvalidInput({"target": ["An entity cannot be merged into itself."]})
    if source.merged_into_id is not None:
        raise InvalidInput({"source": [f"{source.slug} is already merged into another entity."]})
    aliases = [*target.aliases]
    for alias in [source.name, *source.aliases]:
        if (
            alias
            and alias.lower() not in {a.lower() for a in aliases}
            and alias.lower() != target.name.lower()
        ):
            aliases.append(alias)
    target.aliases = aliases
    target.save(update_fields=["aliases"])
    mentions = EntityMention.objects.for_team(source.team_id)
    already_linked = mentions.filter(entity=target).values("memory_id")
    mentions.filter(entity=source, memory_id__in=already_linked).delete()
    mentions.filter(entity=source).update(entity=target)
    Session.objects.for_team(source.team_id).filter(project=source).update(project=target)
    Entity.objects.for_team(source.team_id).filter(merged_into=source).update(merged_into=target)
    source.merged_into = target
    source.aliases = []
    source.save(update_fields=["merged_into", "aliases"])
    return target


def entity_set_aliases(*, entity: Entity, aliases: list[str]) -> Entity:
    cleaned = list(dict.fromkeys(alias.strip() for alias in aliases if alias and alias.strip()))
    if any(len(alias) > MAX_REFERENCE_LENGTH for alias in cleaned):
        raise InvalidInput({"aliases": [f"Aliases are at most {MAX_REFERENCE_LENGTH} characters."]})
    entity.aliases = cleaned
    entity.save(update_fields=["aliases"])
    return entity


@transaction.atomic
def mention_resolve_slug(*, mention: EntityMention, slug: str) -> EntityMention:
    """A curator names the entity of an unresolved mention by slug; a new slug creates the entity."""
    normalized = normalize_slug(slug or "")
    if normalized is None:
        raise InvalidInput(
            {"slug": [f"Give a slug such as person:mark-robinson (types: {', '.join(EntityType.values)})."]}
        )
    return mention_resolve(mention=mention, entity=entity_get_or_create(normalized, team=mention.team_id))


def mention_dismiss(*, mention: EntityMention) -> None:
    """A curator decides an unresolved mention names no entity worth keeping: it leaves the queue."""
    if mention.resolved:
        raise InvalidInput({"mention": ["This mention is already resolved."]})
    mention.delete()
