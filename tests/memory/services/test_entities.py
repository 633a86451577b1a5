from __future__ import annotations

import pytest

from memory.models import Entity, EntityMention, Memory, Session
from memory.services.entities import (
    detect_in_text,
    entities_for_slugs,
    entities_from_paths,
    entity_get_or_create,
    entity_merge,
    entity_set_aliases,
    entity_slugs_of,
    mention_resolve,
    mention_resolve_slug,
    name_from_slug,
    name_index,
    newest_entity_id,
    normalize_slug,
    resolve_project,
    resolve_references,
)
from memory.services.errors import AmbiguousEntity, InvalidInput, NotFound
from memory.services.store import memory_store


def slugs(entities) -> list[str]:
    return [entity.slug for entity in entities]


def mentioned_slugs(memory: Memory) -> set[str]:
    return set(
        EntityMention.objects.filter(memory=memory, resolved=True).values_list("entity__slug", flat=True)
    )


@pytest.fixture
def two_marks(team) -> tuple[Entity, Entity]:
    return entity_get_or_create("person:mark-robinson", team=team), entity_get_or_create(
        "person:mark-smith", team=team
    )


# Slugs and names


@pytest.mark.parametrize(
    "slug,name",
    [
        ("person:mark-robinson", "Mark Robinson"),
        ("project:swarm-tools", "Swarm Tools"),
        ("feature:auth", "Auth"),
    ],
)
def test_an_entity_is_named_from_its_slug(slug, name):
    assert name_from_slug(slug) == name


def test_an_entity_created_from_a_slug_is_stored_with_the_name_and_type_of_the_slug(team):
    entity = entity_get_or_create("person:mark-robinson", team=team)
    stored = Entity.objects.get(slug="person:mark-robinson")
    assert stored == entity
    assert (stored.type, stored.name) == ("person", "Mark Robinson")


@pytest.mark.parametrize(
    "reference,slug",
    [
        ("person:mark-robinson", "person:mark-robinson"),
        ("Person:Mark Robinson", "person:mark-robinson"),
        ("project: Swarm Tools", "project:swarm-tools"),
        ("FEATURE:Auth", "feature:auth"),
        ("person:José Núñez", "person:jose-nunez"),
        ("project:billing_api v2", "project:billing-api-v2"),
    ],
)
def test_a_typed_reference_is_normalized_to_a_kebab_case_slug(reference, slug):
    assert normalize_slug(reference) == slug


@pytest.mark.parametrize("reference", ["Mark", "Mark Robinson", "planet:earth", "person:", "person:!!!"])
def test_a_reference_that_is_not_a_known_type_and_name_is_not_a_slug(reference):
    assert normalize_slug(reference) is None


# Resolving references


def test_resolving_a_new_slug_on_store_creates_the_entity(team):
    resolution = resolve_references(["person:mark-robinson"], team=team, create=True)
    assert slugs(resolution.entities) == ["person:mark-robinson"]
    assert Entity.objects.get(slug="person:mark-robinson").name == "Mark Robinson"
    assert resolution.unknown == [] and resolution.ambiguities == {}


def test_resolving_a_new_slug_on_search_only_looks_it_up(team):
    resolution = resolve_references(["person:mark-robinson"], team=team, create=False)
    assert resolution.entities == []
    assert resolution.unknown == ["person:mark-robinson"]
    assert not Entity.objects.exists()


def test_resolving_an_existing_slug_on_search_finds_it(team, two_marks):
    resolution = resolve_references(["Person:Mark Smith"], team=team, create=False)
    assert slugs(resolution.entities) == ["person:mark-smith"]


def test_an_ambiguous_first_name_raises_with_both_candidates(team, two_marks):
    with pytest.raises(AmbiguousEntity) as raised:
        resolve_references(["Mark"], team=team, create=False).raise_if_ambiguous()
    error = raised.value
    assert error.ambiguities == {"Mark": ["person:mark-robinson", "person:mark-smith"]}
    payload = error.as_dict()
    assert payload["code"] == "CLARIFICATION_REQUIRED"
    assert payload["ambiguities"] == {"Mark": ["person:mark-robinson", "person:mark-smith"]}
    assert "slug" in payload["hint"] and "person:mark-robinson" in payload["hint"]


def test_an_ambiguous_first_name_is_reported_per_name_without_resolving_it(team, two_marks):
    resolution = resolve_references(["mark", "Zed"], team=team, create=False)
    assert resolution.entities == []
    assert resolution.ambiguities == {"mark": ["person:mark-robinson", "person:mark-smith"]}
    assert resolution.unknown == ["Zed"]


@pytest.mark.parametrize("name", ["Mark Robinson", "mark robinson", "MARK-ROBINSON"])
def test_a_full_name_resolves_to_one_entity(team, two_marks, name):
    resolution = resolve_references([name], team=team, create=False).raise_if_ambiguous()
    assert slugs(resolution.entities) == ["person:mark-robinson"]


def test_an_alias_resolves_to_its_entity(team, two_marks):
    robinson, _ = two_marks
    entity_set_aliases(entity=robinson, aliases=["Robbo"])
    assert slugs(resolve_references(["Robbo"], team=team, create=False).entities) == ["person:mark-robinson"]
    assert slugs(resolve_references(["robbo"], team=team, create=False).entities) == ["person:mark-robinson"]


def test_an_unknown_name_lands_in_unknown(team, two_marks):
    resolution = resolve_references(["Zed Shaw"], team=team, create=True)
    assert resolution.entities == [] and resolution.ambiguities == {}
    assert resolution.unknown == ["Zed Shaw"]
    assert Entity.objects.count() == 2


def test_the_same_entity_named_twice_resolves_once(team, two_marks):
    resolution = resolve_references(["person:mark-robinson", "Mark Robinson"], team=team, create=False)
    assert slugs(resolution.entities) == ["person:mark-robinson"]


def test_an_empty_reference_is_invalid(team):
    with pytest.raises(InvalidInput) as raised:
        resolve_references(["  "], team=team, create=False)
    assert "entities" in raised.value.fields


def test_storing_with_an_ambiguous_entity_refuses_and_stores_nothing(team, two_marks, embedder):
    with pytest.raises(AmbiguousEntity) as raised:
        memory_store(team=team, content="Mark prefers squash merges on the release branch", entities=["Mark"])
    assert raised.value.ambiguities == {"Mark": ["person:mark-robinson", "person:mark-smith"]}
    assert not Memory.objects.exists()
    assert not EntityMention.objects.exists()


def test_storing_with_a_new_slug_creates_the_entity_and_links_the_memory(team, embedder):
    memory = memory_store(
        team=team,
        content="Mark reviews every schema migration before it is merged",
        entities=["person:mark-robinson"],
    ).memory
    assert Entity.objects.get(slug="person:mark-robinson").name == "Mark Robinson"
    assert mentioned_slugs(memory) == {"person:mark-robinson"}


# Entities from file paths


@pytest.mark.parametrize(
    "paths,expected",
    [
        (["src/auth/service.ts"], ["feature:auth"]),
        (["src/features/auth/x.ts"], ["feature:auth"]),
        (["src/auth/service.ts", "src/features/auth/x.ts"], ["feature:auth"]),
        (["packages/billing/src/utils/money.ts"], ["project:billing"]),
        (["packages/billing/src/invoices/pdf.ts"], ["project:billing", "feature:invoices"]),
        (["apps/web/components/Button.tsx"], ["project:web"]),
        (["apps/web/src/checkout/cart.tsx"], ["project:web", "feature:checkout"]),
        (["lib/components/payments/stripe.py"], ["feature:payments"]),
        (["src\\auth\\service.ts"], ["feature:auth"]),
        (["README.md", "src/index.ts", "packages/README.md"], []),
    ],
)
def test_file_paths_imply_projects_and_features(paths, expected):
    assert entities_from_paths(paths) == expected


# Entities named in text


@pytest.fixture
def known_entities(team, two_marks) -> None:
    robinson, _ = two_marks
    entity_set_aliases(entity=robinson, aliases=["Robbo"])
    entity_get_or_create("project:swarm-tools", team=team)
    entity_get_or_create("feature:auth", team=team)


def test_an_explicit_slug_in_text_is_detected(team, known_entities):
    detected = detect_in_text("The deploy of project:swarm-tools broke the login", team=team)
    assert slugs(detected.entities) == ["project:swarm-tools"]


def test_full_names_and_aliases_of_known_entities_are_detected(team, known_entities):
    detected = detect_in_text("Robbo and Mark Smith rewrote the auth flow in Swarm Tools", team=team)
    assert set(slugs(detected.entities)) == {
        "person:mark-robinson",
        "person:mark-smith",
        "feature:auth",
        "project:swarm-tools",
    }
    assert detected.ambiguities == {}


def test_unknown_words_and_unknown_slugs_are_not_detected(team, known_entities):
    detected = detect_in_text("Zed said the Frobnicator in project:nowhere is flaky", team=team)
    assert detected.entities == []
    assert not Entity.objects.filter(slug="project:nowhere").exists()


def test_a_first_name_alone_in_text_is_not_taken_for_either_person(team, known_entities):
    detected = detect_in_text("Mark said the release is on Friday", team=team)
    assert detected.entities == []


# Merging entities and resolving mentions


def test_merging_moves_aliases_and_repoints_mentions_to_the_target(team, embedder):
    target = entity_get_or_create("person:mark-robinson", team=team)
    source = entity_get_or_create("person:m-robinson", team=team)
    entity_set_aliases(entity=source, aliases=["MR"])
    memory = memory_store(
        team=team,
        content="Pair with the payments team before touching the ledger code",
        entities=["person:m-robinson"],
    ).memory

    merged = entity_merge(source=source, target=target)

    assert merged == target
    target.refresh_from_db()
    source.refresh_from_db()
    assert target.aliases == ["M Robinson", "MR"]
    assert source.merged_into == target
    assert source.aliases == []
    assert mentioned_slugs(memory) == {"person:mark-robinson"}
    assert list(Memory.objects.mentioning([target.pk])) == [memory]


def test_a_memory_that_mentioned_both_entities_mentions_the_target_once_after_a_merge(team, embedder):
    target = entity_get_or_create("person:mark-robinson", team=team)
    source = entity_get_or_create("person:m-robinson", team=team)
    memory = memory_store(
        team=team,
        content="Both reviewers must approve changes to the ledger",
        entities=["person:mark-robinson", "person:m-robinson"],
    ).memory

    entity_merge(source=source, target=target)

    assert list(EntityMention.objects.filter(memory=memory).values_list("entity__slug", flat=True)) == [
        "person:mark-robinson"
    ]


def test_the_slug_of_a_merged_entity_resolves_to_the_target(team):
    target = entity_get_or_create("person:mark-robinson", team=team)
    source = entity_get_or_create("person:m-robinson", team=team)
    entity_merge(source=source, target=target)

    assert slugs(resolve_references(["person:m-robinson"], team=team, create=False).entities) == [
        "person:mark-robinson"
    ]
    assert slugs(resolve_references(["person:m-robinson"], team=team, create=True).entities) == [
        "person:mark-robinson"
    ]
    assert slugs(resolve_references(["M Robinson"], team=team, create=False).entities) == [
        "person:mark-robinson"
    ]


def test_after_a_merge_a_first_name_is_no_longer_ambiguous(team, two_marks):
    robinson, smith = two_marks
    with pytest.raises(AmbiguousEntity):
        resolve_references(["Mark"], team=team, create=False).raise_if_ambiguous()

    entity_merge(source=smith, target=robinson)

    assert slugs(resolve_references(["Mark"], team=team, create=False).entities) == ["person:mark-robinson"]


def test_an_entity_cannot_be_merged_into_itself(team):
    entity = entity_get_or_create("person:mark-robinson", team=team)
    with pytest.raises(InvalidInput) as raised:
        entity_merge(source=entity, target=entity)
    assert "target" in raised.value.fields
    entity.refresh_from_db()
    assert entity.merged_into is None


def test_an_unknown_name_on_store_waits_as_an_unresolved_mention_until_a_curator_resolves_it(team, embedder):
    memory = memory_store(
        team=team,
        content="Zed owns the nightly data export job",
        entities=["Zed"],
    ).memory
    mention = EntityMention.objects.get(memory=memory)
    assert (mention.raw, mention.resolved, mention.entity) == ("Zed", False, None)

    zed = entity_get_or_create("person:zed-shaw", team=team)
    resolved = mention_resolve(mention=mention, entity=zed)

    resolved.refresh_from_db()
    assert (resolved.raw, resolved.resolved, resolved.entity) == ("Zed", True, zed)
    assert list(Memory.objects.mentioning([zed.pk])) == [memory]
    assert not EntityMention.objects.filter(memory=memory, resolved=False).exists()


def test_resolving_a_mention_to_an_entity_the_memory_already_mentions_keeps_one_mention(team, embedder):
    content = "The nightly export job is owned by the data team"
    memory = memory_store(team=team, content=content, entities=["Zed"]).memory
    unresolved = EntityMention.objects.get(memory=memory, resolved=False)
    # Someone stores the same memory again, this time naming the entity by its slug.
    memory_store(team=team, content=content, entities=["person:zed-shaw"])
    zed = Entity.objects.get(slug="person:zed-shaw")
    assert mentioned_slugs(memory) == {"person:zed-shaw"}

    mention_resolve(mention=unresolved, entity=zed)

    mentions = EntityMention.objects.filter(memory=memory)
    assert [(m.entity, m.resolved) for m in mentions] == [(zed, True)]


def test_resolving_a_mention_to_a_merged_entity_links_the_surviving_entity(team, embedder):
    memory = memory_store(team=team, content="Zed owns the nightly data export job", entities=["Zed"]).memory
    target = entity_get_or_create("person:zed-shaw", team=team)
    source = entity_get_or_create("person:zed", team=team)
    entity_merge(source=source, target=target)

    # A curator later picks the old entity from a list (loaded after the merge).
    picked = Entity.objects.get(slug="person:zed")
    mention_resolve(mention=EntityMention.objects.get(memory=memory), entity=picked)

    assert mentioned_slugs(memory) == {"person:zed-shaw"}


# The wall between teams (DESIGN.md §11): each team has its own entities.


def test_the_same_slug_in_two_teams_is_two_entities(team, other_team):
    ours = entity_get_or_create("project:api", team=team)
    theirs = entity_get_or_create("project:api", team=other_team)
    assert ours.pk != theirs.pk and (ours.team, theirs.team) == (team, other_team)
    assert entity_get_or_create("project:api", team=team) == ours
    found = entities_for_slugs(["project:api", "project:web"], team=other_team, create=False)
    assert found == {"project:api": theirs}
    assert Entity.objects.filter(slug="project:api").count() == 2


def test_references_and_projects_resolve_among_the_teams_own_entities(team, other_team, two_marks):
    entity_get_or_create("project:billing-api", team=other_team)
    assert resolve_references(["Mark Robinson"], team=other_team, create=False).unknown == ["Mark Robinson"]
    assert resolve_references(["person:mark-smith"], team=other_team, create=False).entities == []
    # An ambiguity of one team is none in another.
    entity_get_or_create("person:mark-lee", team=other_team)
    mark = resolve_references(["Mark"], team=other_team, create=False).raise_if_ambiguous()
    assert slugs(mark.entities) == ["person:mark-lee"] and mark.entities[0].team == other_team
    assert resolve_project("billing-api", team=team) is None
    assert resolve_project("billing-api", team=other_team).team == other_team


def test_a_name_in_text_is_detected_only_among_the_teams_entities(team, other_team, known_entities):
    text = "Robbo changed project:swarm-tools and Mark Smith reviewed the auth flow"
    assert detect_in_text(text, team=other_team).entities == []
    assert name_index(other_team).keys == {}
    assert set(slugs(detect_in_text(text, index=name_index(team)).entities)) == {
        "person:mark-robinson",
        "person:mark-smith",
        "project:swarm-tools",
        "feature:auth",
    }
    with pytest.raises(TypeError):
        detect_in_text(text)


def test_the_name_index_and_newest_entity_are_per_team(team, other_team, two_marks):
    assert newest_entity_id(other_team) is None
    ours = name_index(team)
    assert "mark-robinson" in ours.keys
    theirs = entity_get_or_create("person:mark-robinson", team=other_team)
    assert newest_entity_id(other_team) == theirs.pk and newest_entity_id(team) == two_marks[1].pk
    # A new entity of another team leaves this team's index as it was (no rebuild needed).
    assert name_index(team) is ours
    assert name_index(other_team).keys["mark-robinson"] == [theirs]


def test_entities_of_two_teams_are_never_merged(team, other_team, embedder):
    ours = entity_get_or_create("person:mark-robinson", team=team)
    theirs = entity_get_or_create("person:m-robinson", team=other_team)
    memory = memory_store(
        team=other_team, content="Mark pairs on ledger changes", entities=["person:m-robinson"]
    ).memory
    for source, target in ((theirs, ours), (ours, theirs)):
        with pytest.raises(NotFound) as raised:
            entity_merge(source=source, target=target)
        assert raised.value.code == "NOT_FOUND"
    ours.refresh_from_db()
    theirs.refresh_from_db()
    assert ours.merged_into is None and theirs.merged_into is None and ours.aliases == theirs.aliases == []
    assert mentioned_slugs(memory) == {"person:m-robinson"}


def test_a_merge_repoints_only_the_teams_own_sessions(team, other_team, member, outsider):
    target = entity_get_or_create("project:web", team=team)
    source = entity_get_or_create("project:website", team=team)
    theirs = entity_get_or_create("project:website", team=other_team)
    ours_session = Session.objects.create(team=team, external_id="s1", user=member, project=source)
    their_session = Session.objects.create(team=other_team, external_id="s1", user=outsider, project=theirs)
    entity_merge(source=source, target=target)
    ours_session.refresh_from_db()
    their_session.refresh_from_db()
    assert ours_session.project == target and their_session.project == theirs


def test_a_mention_is_never_resolved_to_another_teams_entity(team, other_team, embedder):
    memory = memory_store(team=team, content="Zed owns the nightly data export job", entities=["Zed"]).memory
    mention = EntityMention.objects.get(memory=memory)
    assert mention.team == team
    theirs = entity_get_or_create("person:zed", team=other_team)
    with pytest.raises(NotFound):
        mention_resolve(mention=mention, entity=theirs)
    mention.refresh_from_db()
    assert not mention.resolved and mention.entity is None
    resolved = mention_resolve_slug(mention=mention, slug="person:zed")
    assert resolved.entity.team == team and resolved.entity != theirs
    assert entity_slugs_of([memory.pk]) == {memory.pk: ["person:zed"]}
