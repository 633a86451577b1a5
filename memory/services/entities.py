"""Entities (DESIGN.md §4.2): slugs, resolution of names, extraction from paths and text, merging."""

from __future__ import annotations

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
from memory.models import ENTITY_SLUG_PATTERN, Entity, EntityMention, EntityType, Memory, Session
from memory.rows import row_reader
from memory.services.errors import AmbiguousEntity, InvalidInput

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


def entities_for_slugs(slugs: Iterable[str], *, create: bool) -> dict[str, Entity]:
    """Valid slugs → their canonical entities in a few queries; with ``create``, missing ones are
    created, each named from its slug (concurrent creators meet at the unique slug)."""
    slugs = list(dict.fromkeys(slugs))
    found = _entities_by_slug(slugs)
    missing = [slug for slug in slugs if slug not in found]
    if create and missing:
        Entity.objects.bulk_create(
            [Entity(slug=slug, type=slug.split(":", 1)[0], name=name_from_slug(slug)) for slug in missing],
            ignore_conflicts=True,
        )
        invalidate_name_index()
        found.update(_entities_by_slug(missing))
    return {slug: canonical(entity) for slug, entity in found.items()}


def _entities_by_slug(slugs: list[str]) -> dict[str, Entity]:
    """The entities of ``slugs`` (those that exist), each with the one it was merged into. One
    hand-written statement (memory/rows.py): every store resolves its entities, and through the ORM
    the lookup cost 0.8 ms of Python, 0.2 now (bench/HISTORY.md, stop 29)."""
    if not slugs:
        return {}
    found = row_reader(Entity, (("merged_into", None),), key="slug", many=True).read([slugs])
    return {entity.slug: entity for entity in found}


def entity_get_or_create(slug: str) -> Entity:
    """The (canonical) entity for a valid slug, created — named from the slug — if new."""
    return entities_for_slugs([slug], create=True)[slug]


def _name_keys(entity: Entity) -> set[str]:
    keys = {slugify_name(entity.name), entity.slug.split(":", 1)[1]}
    keys.update(slugify_name(alias) for alias in entity.aliases)
    return {key for key in keys if key}


def match_name(name: str, entities: Iterable[Entity] | None = None) -> list[Entity]:
    """Canonical entities a bare name refers to: an exact name/alias match, else leading-word matches."""
    wanted = slugify_name(name)
    if not wanted:
        return []
    pool = list(entities) if entities is not None else list(Entity.objects.canonical())
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
    create: bool,
    by_slug: dict[str, Entity] | None = None,
    pool: list[Entity] | None = None,
) -> Resolution:
    """Resolve slugs and bare names. Slugs are created when ``create`` (on store), else looked up.
    ``by_slug`` and ``pool`` (canonical entities) let a caller resolving many lists query once."""
    resolution = Resolution()
    references = validate_references(references)
    slugs = {reference: normalize_slug(reference) for reference in references}
    wanted = [slug for slug in slugs.values() if slug and (by_slug is None or slug not in by_slug)]
    by_slug = {**(by_slug or {}), **(entities_for_slugs(wanted, create=create) if wanted else {})}
    for reference in references:
        if slugs[reference] is not None:
            matches = [by_slug[slugs[reference]]] if slugs[reference] in by_slug else []
        else:
            if pool is None:
                pool = list(Entity.objects.canonical())
            matches = match_name(reference, pool)
        if len(matches) == 1:
            if matches[0] not in resolution.entities:
                resolution.entities.append(matches[0])
        elif matches:
            resolution.ambiguities[reference] = sorted(entity.slug for entity in matches)
        else:
            resolution.unknown.append(reference)
    return resolution


def resolve_project(reference: str) -> Entity | None:
    """A project given as a slug, a bare project name ("billing-api") or any entity name; None if
    unknown. Raises AmbiguousEntity when a bare name matches several entities."""
    slug = normalize_slug(reference) or normalize_slug(f"{EntityType.PROJECT}:{reference}")
    if slug is not None:
        entity = Entity.objects.filter(slug=slug).select_related("merged_into").first()
        if entity is not None:
            return canonical(entity)
    if ":" in reference:
        return None
    resolution = resolve_references([reference], create=False).raise_if_ambiguous()
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
    """Every name key (slugified name, slug name, alias) of the canonical entities → those entities,
    in slug order: what :func:`detect_in_text` looks the words of a text up in."""

    keys: dict[str, list[Entity]]
    longest: int  # the most words in a key
    max_id: int | None  # the newest entity when it was built
    built_at: float

    @classmethod
    def build(cls, pool: Iterable[Entity], max_id: int | None = None) -> NameIndex:
        keys: dict[str, list[Entity]] = {}
        for entity in pool:
            for key in sorted(_name_keys(entity)):
                if len(key) >= MIN_NAME_KEY_LENGTH:
                    keys.setdefault(key, []).append(entity)
        longest = max((key.count("-") + 1 for key in keys), default=0)
        return cls(keys, longest, max_id, time.monotonic())

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


_name_index: NameIndex | None = None
_name_index_lock = threading.Lock()


def name_index() -> NameIndex:
    """The name index of the canonical entities, built once per process. Rebuilt when an entity is
    created (its id is newer than the index: one index lookup per call), when one is saved or
    deleted in this process, and after ENTITY_INDEX_SECONDS (aliases or merges from another process)."""
    global _name_index
    max_id = newest_entity_id()
    index = _name_index
    if (
        index is None
        or index.max_id != max_id
        or time.monotonic() - index.built_at > setting("ENTITY_INDEX_SECONDS")
    ):
        with _name_index_lock:
            index = NameIndex.build(Entity.objects.canonical(), max_id)
            _name_index = index
    return index


def newest_entity_id() -> int | None:
    """The newest entity's id (the name index's freshness check on every search): a hand-written
    statement, 0.10 ms of Python against 0.39 through the ORM's aggregate (bench/HISTORY.md, stop 29)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT max({connection.ops.quote_name(Entity._meta.pk.column)}) "
            f"FROM {connection.ops.quote_name(Entity._meta.db_table)}"
        )
        return cursor.fetchone()[0]


def entity_slugs_of(memory_ids: list) -> dict:
    """``{memory id: sorted slugs}`` of the entities the memories ``memory_ids`` mention (resolved
    mentions only), every id present. One hand-written statement: a search's results look them up
    on every request, and through the ORM that cost 0.7 ms of Python, 0.2 now (bench/HISTORY.md,
    stop 29)."""
    slugs: dict = {pk: set() for pk in memory_ids}
    if slugs:
        quote = connection.ops.quote_name
        mention, entity = EntityMention._meta, Entity._meta
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT m.{quote(mention.get_field('memory').column)}, e.{quote(entity.get_field('slug').column)} "
                f"FROM {quote(mention.db_table)} m JOIN {quote(entity.db_table)} e "
                f"ON e.{quote(entity.pk.column)} = m.{quote(mention.get_field('entity').column)} "
                f"WHERE m.{quote(mention.get_field('memory').column)} = ANY(%s) "
                f"AND m.{quote(mention.get_field('resolved').column)}",
                [list(slugs)],
            )
            for memory_id, slug in cursor.fetchall():
                slugs[memory_id].add(slug)
    return {pk: sorted(found) for pk, found in slugs.items()}


def invalidate_name_index(**kwargs) -> None:
    global _name_index
    _name_index = None


post_save.connect(invalidate_name_index, sender=Entity, dispatch_uid="entities-name-index-save")
post_delete.connect(invalidate_name_index, sender=Entity, dispatch_uid="entities-name-index-delete")


def detect_in_text(text: str, pool: list[Entity] | None = None, index: NameIndex | None = None) -> Detected:
    """Known entities named in ``text``: explicit slugs, plus full names and aliases of known entities.
    ``pool`` (the canonical entities) saves a query when many texts are checked; ``index`` (from
    :func:`name_index`) saves scanning them at all."""
    detected = Detected()
    slugs = list(dict.fromkeys(SLUG_IN_TEXT_RE.findall(text.lower())))
    if slugs:
        for entity in Entity.objects.filter(slug__in=slugs).select_related("merged_into"):
            entity = canonical(entity)
            if entity not in detected.entities:
                detected.entities.append(entity)
    if index is None:
        index = NameIndex.build(Entity.objects.canonical() if pool is None else pool)
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
    EntityMention.objects.bulk_create(
        [
            EntityMention(
                memory=memory, entity=entity, raw=raw.get(entity.pk, entity.slug)[:200], resolved=True
            )
            for entity in entities
        ],
        ignore_conflicts=True,
    )


def record_unresolved(memory: Memory, ambiguities: dict[str, list[str]], unknown: Iterable[str] = ()) -> None:
    """Keep names that could not be resolved, for a curator's ambiguity queue."""
    mentions = [
        EntityMention(memory=memory, raw=name[:200], resolved=False, candidates=candidates)
        for name, candidates in ambiguities.items()
    ]
    mentions += [EntityMention(memory=memory, raw=name[:200], resolved=False) for name in unknown]
    existing = set(memory.mentions.filter(resolved=False).values_list("raw", flat=True))
    EntityMention.objects.bulk_create([m for m in mentions if m.raw not in existing])


@transaction.atomic
def mention_resolve(*, mention: EntityMention, entity: Entity) -> EntityMention:
    """A curator picks the entity an unresolved mention means."""
    entity = canonical(Entity.objects.select_related("merged_into").get(pk=entity.pk))
    duplicate = EntityMention.objects.filter(memory_id=mention.memory_id, entity=entity).exclude(
        pk=mention.pk
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
    with ``merged_into`` so its slug still resolves."""
    source = Entity.objects.select_for_update().get(pk=source.pk)
    target = canonical(Entity.objects.select_for_update().get(pk=target.pk))
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
    already_linked = EntityMention.objects.filter(entity=target).values("memory_id")
    EntityMention.objects.filter(entity=source, memory_id__in=already_linked).delete()
    EntityMention.objects.filter(entity=source).update(entity=target)
    Session.objects.filter(project=source).update(project=target)
    Entity.objects.filter(merged_into=source).update(merged_into=target)
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
    return mention_resolve(mention=mention, entity=entity_get_or_create(normalized))


def mention_dismiss(*, mention: EntityMention) -> None:
    """A curator decides an unresolved mention names no entity worth keeping: it leaves the queue."""
    if mention.resolved:
        raise InvalidInput({"mention": ["This mention is already resolved."]})
    mention.delete()
