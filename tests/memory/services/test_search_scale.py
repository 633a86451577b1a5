"""Search at scale (issue 18): bounded lexical candidates, filtered vector plans, the entity name index."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memory import embeddings
from memory.models import Memory
from memory.services import entities as entity_service
from memory.services import search
from memory.services.entities import NameIndex, entity_set_aliases
from memory.services.search import lexical_candidates, memory_search, vector_candidates
from memory.services.store import memory_store, memory_store_batch

pytestmark = pytest.mark.usefixtures("embedder")


@pytest.fixture(autouse=True)
def fresh_stats():
    # Corpus statistics are kept per process; each test has its own corpus.
    search.clear_corpus_stats()
    entity_service.invalidate_name_index()
    yield
    search.clear_corpus_stats()


def tune(settings, **values) -> None:
    settings.MEMORY_LANE = {**settings.MEMORY_LANE, **values}


def index_scans_only() -> None:
    """On a table this small the planner would rather sort every row than use the HNSW index."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")


def store(team, content: str, **fields) -> Memory:
    return memory_store(team=team, content=content, dedupe=False, **fields).memory


def deploy_corpus(team) -> Memory:
    memory_store_batch(
        [
            {"content": f"The deploy script step {i} runs the smoke tests before the release {i}."}
            for i in range(12)
        ],
        team=team,
        dedupe=False,
    )
    return store(team, "The deploy script reads the kubeconfig from the vault before it starts.")


def test_bounded_lexical_candidates_still_find_the_rare_word_match(team, db, settings):
    target = deploy_corpus(team)
    tune(settings, LEXICAL_SCAN_ROWS=4)
    query = "where does the deploy script get its kubeconfig?"
    found = lexical_candidates(Memory.objects.for_team(team).servable(), query, 50, team_id=team.pk)
    assert found[0][0] == target.pk
    assert len(found) <= 2 * 4  # only the two bounded scans were scored, not all 13 matches
    outcome = memory_search(team=team, query=query, mode="fts", record=False)
    assert outcome.results[0].memory.pk == target.pk


def test_the_bounded_scan_scores_a_memory_as_the_full_scan_does(team, db, settings):
    target = deploy_corpus(team)
    query = "does the deploy script read the kubeconfig?"
    full = {
        pk: (score, coverage)
        for pk, score, coverage in lexical_candidates(
            Memory.objects.for_team(team), query, 50, team_id=team.pk
        )
    }
    assert len(full) == 13
    tune(settings, LEXICAL_SCAN_ROWS=4)
    search.clear_corpus_stats()
    bounded = {
        pk: (score, coverage)
        for pk, score, coverage in lexical_candidates(
            Memory.objects.for_team(team), query, 50, team_id=team.pk
        )
    }
    assert target.pk in bounded and len(bounded) < len(full)
    for pk, (score, coverage) in bounded.items():
        assert score == pytest.approx(full[pk][0], rel=1e-6)
        assert coverage == pytest.approx(full[pk][1], rel=1e-6)


def test_a_sample_of_the_rarest_word_is_scored_only_when_every_word_leaves_room(team, db, settings):
    # "deploy", the question's rarest word, is held by 10 memories, more than the scan's budget of 5:
    # its scan would be a sample (the first 5 it meets, so at least one of the runbook's). Four
    # memories hold every word of the question.
    runbook = memory_store_batch(
        [{"content": f"Deploy runbook page {i} covers the rollback."} for i in range(6)],
        team=team,
        dedupe=False,
    )
    every_word = memory_store_batch(
        [{"content": f"The deploy script {i} runs the smoke tests first."} for i in range(4)],
        team=team,
        dedupe=False,
    )
    memory_store_batch(
        [{"content": f"The smoke tests {i} need the script runner image."} for i in range(12)],
        team=team,
        dedupe=False,
    )
    runbook_ids = {result.memory.pk for result in runbook}
    every_word_ids = {result.memory.pk for result in every_word}
    tune(settings, LEXICAL_SCAN_ROWS=5)
    query = "what does the deploy script do for the smoke tests?"

    def candidates_and_scans(k: int) -> tuple[set, int]:
        """The top ``k``, and how many of the statement's scans of the memories ran (EXPLAIN ANALYZE)."""
        with transaction.atomic(), CaptureQueriesContext(connection) as statements:
            found = {
                pk
                for pk, _, _ in lexical_candidates(
                    Memory.objects.for_team(team).servable(), query, k, team_id=team.pk
                )
            }
        (statement,) = [s["sql"] for s in statements.captured_queries if "ts_rank" in s["sql"]]
        with transaction.atomic(), connection.cursor() as cursor, search._word_index_plans(cursor):
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement)
            plan = cursor.fetchone()[0]
        nodes, ran = [plan[0]["Plan"]], 0
        while nodes:
            node = nodes.pop()
            nodes += node.get("Plans", [])
            ran += node.get("Relation Name") == "memory_memory" and node["Actual Loops"] > 0
        return found, ran

    filled, scans = candidates_and_scans(3)
    assert filled <= every_word_ids and len(filled) == 3
    assert scans == 1  # every word fills the 3: the sample is not read
    room, scans = candidates_and_scans(8)
    # Only 4 hold every word: the sample is read, and fills the 8.
    assert every_word_ids < room and room & runbook_ids and scans == 2
    tune(settings, LEXICAL_SCAN_ROWS=5, LEXICAL_SKIP_SAMPLED_RAREST=False)
    assert candidates_and_scans(3) == (filled, 2)  # without the rule it is read, and here changes nothing


def test_the_bounded_scan_leaves_the_planner_as_it_found_it(team, db, settings):
    # The bounded query is planned without sequential scans and with dearer operators; what follows in
    # the transaction (an exact vector scan) must be planned with the caller's settings again.
    target = deploy_corpus(team)
    tune(settings, LEXICAL_SCAN_ROWS=4)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL cpu_operator_cost = 0.003")
    found = lexical_candidates(
        Memory.objects.for_team(team).servable(),
        "where does the deploy script get its kubeconfig?",
        50,
        team_id=team.pk,
    )
    assert found[0][0] == target.pk
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan'), "
            "current_setting('cpu_operator_cost')"
        )
        assert cursor.fetchone() == ("on", "off", "0.003")


def project_corpus(team) -> list[Memory]:
    """42 memories, a third of them about project alpha, in an HNSW graph of these rows only."""
    topics = ["caching", "retries", "migrations", "feature flags", "logging", "deploys", "testing"]
    items = []
    for i in range(42):
        project = "project:alpha" if i % 3 == 0 else "project:beta"
        items.append(
            {
                "content": f"For {topics[i % len(topics)]} in service {i}, the team agreed on rule number {i}.",
                "entities": [project],
            }
        )
    stored = [result.memory for result in memory_store_batch(items, team=team, dedupe=False)]
    # An index is not transactional: the rows earlier tests rolled back stay in the HNSW graph
    # until a vacuum, and on a table this small they change which neighbours it finds. Rebuild it
    # from the live rows, as a vacuumed table would have it.
    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX memory_embedding_hnsw")
    return stored


def exact_ids(base, vector, n: int) -> list:
    with transaction.atomic():
        return list(base.nearest(vector, n, exact=True).values_list("pk", flat=True))


def test_a_filtered_vector_search_on_the_index_returns_what_an_exact_scan_returns(team, db, settings):
    project_corpus(team)
    alpha = entity_service.entities_for_slugs(["project:alpha"], team=team, create=False)["project:alpha"]
    base = Memory.objects.for_team(team).servable().mentioning([alpha.pk])
    vector = embeddings.encode_one("how do we handle retries?")
    tune(settings, VECTOR_EXACT_MAX_ROWS=0)  # the index plan, with over-fetching
    with transaction.atomic():
        index_scans_only()
        ids, plan = vector_candidates(base, vector, 10, filtered=True)
    assert plan == "hnsw"
    assert ids == exact_ids(base, vector, 10)


def test_an_index_scan_that_yields_too_few_filtered_rows_falls_back_to_an_exact_scan(team, db, settings):
    project_corpus(team)
    alpha = entity_service.entities_for_slugs(["project:alpha"], team=team, create=False)["project:alpha"]
    base = Memory.objects.for_team(team).servable().mentioning([alpha.pk])
    vector = embeddings.encode_one("what did we agree on for logging?")
    tune(settings, VECTOR_EXACT_MAX_ROWS=0)
    tune(settings, HNSW_EF_SEARCH=10)
    tune(settings, HNSW_EF_SEARCH_MAX=10)  # 10 rows from the index, a third of them alpha's
    with transaction.atomic():
        index_scans_only()
        ids, plan = vector_candidates(base, vector, 10, filtered=True)
    assert plan == "hnsw, then exact"
    assert ids == exact_ids(base, vector, 10)


def test_an_exact_scan_finds_the_nearest_and_leaves_the_planner_as_it_found_it(team, db):
    # The exact scan is planned with cheaper random page reads; what follows in the transaction is
    # planned with the caller's settings again.
    project_corpus(team)
    alpha = entity_service.entities_for_slugs(["project:alpha"], team=team, create=False)["project:alpha"]
    base = Memory.objects.for_team(team).servable().mentioning([alpha.pk])
    vector = embeddings.encode_one("what did we agree on for caching?")
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL random_page_cost = 3")
        ids, plan = vector_candidates(base, vector, 10, filtered=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('random_page_cost')")
            assert cursor.fetchone() == ("3",)
    assert plan == "exact"
    nearest = sorted(base, key=lambda memory: -float(memory.embedding @ vector))[:10]
    assert ids == [memory.pk for memory in nearest]


def test_entity_filtered_search_gives_the_same_results_whichever_vector_plan_serves_it(team, db, settings):
    project_corpus(team)
    query = "which rule did the team agree on for feature flags?"
    exact = memory_search(team=team, query=query, entities=["project:alpha"], record=False)
    tune(settings, VECTOR_EXACT_MAX_ROWS=0)
    planned = memory_search(team=team, query=query, entities=["project:alpha"], record=False)
    assert [h.memory.pk for h in planned.results] == [h.memory.pk for h in exact.results]
    assert len(exact.results) == 10


def test_a_new_entity_is_detected_in_the_next_query(team, db):
    store(team, "Checkout totals are rounded per line item.", entities=["project:billing"])
    assert [
        e.slug for e in memory_search(team=team, query="billing rounding", record=False).detected_entities
    ] == ["project:billing"]
    store(team, "The zebra cart keeps a draft order per browser tab.", entities=["project:zebra-cart"])
    outcome = memory_search(team=team, query="how does the zebra cart keep drafts?", record=False)
    assert [e.slug for e in outcome.detected_entities] == ["project:zebra-cart"]


def test_an_alias_counts_in_the_next_query(team, db):
    memory = store(team, "Checkout totals are rounded per line item.", entities=["project:billing"])
    assert (
        memory_search(team=team, query="how does ledgerly round totals?", record=False).detected_entities
        == []
    )
    entity = memory.mentions.get().entity
    entity_set_aliases(entity=entity, aliases=["Ledgerly"])
    outcome = memory_search(team=team, query="how does ledgerly round totals?", record=False)
    assert [e.slug for e in outcome.detected_entities] == ["project:billing"]


def test_the_name_index_finds_names_only_as_whole_words(team, db):
    store(team, "Pairing notes.", entities=["person:mark-robinson", "project:api-gateway"])
    index = NameIndex.build(entity_service.Entity.objects.for_team(team).canonical())
    assert set(index.matches("ask Mark Robinson about the API gateway")) == {"mark-robinson", "api-gateway"}
    assert index.matches("ask markrobinson about the api-gateways") == {}


@pytest.mark.parametrize(
    ("vector_similarities", "lexical_only", "stranded"),
    [
        ([0.8, 0.5], [0.6, 0.3], False),  # what the words found is further than the scan's best
        ([0.8, 0.5], [0.8], False),  # as near as the best: a tie is not a miss
        ([0.4, 0.3], [0.7], True),  # the scan returned far-off memories only
        ([], [0.3], True),  # the scan returned nothing the question could see
        ([0.4], [], False),  # nothing to compare with: the words found only what the scan found
        ([], [], False),
        # The scan found the best, but the words found three it missed nearer than its last.
        ([0.8, 0.7, 0.6, 0.5], [0.55, 0.52, 0.51, 0.2], True),
        ([0.8, 0.7, 0.6, 0.5], [0.55, 0.52, 0.5, 0.2], False),  # two: what an approximate scan misses
        # Of a list of 100, three are not enough: at least a share of 5%, five.
        ([0.9 - i / 1000 for i in range(100)], [0.85, 0.84, 0.83, 0.82], False),
        ([0.9 - i / 1000 for i in range(100)], [0.85, 0.84, 0.83, 0.82, 0.81], True),
    ],
)
def test_a_scan_is_stranded_when_the_words_found_something_nearer_than_it_did(
    vector_similarities, lexical_only, stranded
):
    assert search.vector_list_stranded(vector_similarities, lexical_only) is stranded


QUESTION = "how do we shrink images in the release pipeline?"


def stranding_corpus(team) -> tuple[Memory, Memory]:
    """A live corpus behind a crowd of dead rows, the way a purge leaves an HNSW graph until a vacuum.

    A rolled-back batch of 60 memories worded like the question stays in the graph, nearer to the
    question than any live memory: a scan that keeps only the few nearest it meets keeps dead rows
    and returns none of them. Returns the memory that shares the question's words and the one that
    only means the same."""
    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX memory_embedding_hnsw")  # no dead rows of earlier tests
    worded = store(team, "The release pipeline shrinks images with a resize step before it uploads them.")
    meant = store(
        team, "Thumbnails are generated with Pillow, at most 800 pixels wide, before upload to the CDN."
    )
    topics = ["caching", "retries", "migrations", "feature flags", "logging", "on-call", "billing"]
    memory_store_batch(
        [
            {"content": f"For {topics[i % 7]} in service {i}, the team agreed on rule number {i}."}
            for i in range(30)
        ],
        team=team,
        dedupe=False,
    )
    with transaction.atomic():
        memory_store_batch(
            [{"content": f"{QUESTION[:-1]}, variant {i} of the question?"} for i in range(60)],
            team=team,
            dedupe=False,
        )
        transaction.set_rollback(True)
    search.clear_corpus_stats()
    return worded, meant


def test_a_stranded_index_scan_is_run_again_and_the_search_finds_what_it_missed(team, db, settings):
    worded, meant = stranding_corpus(team)
    # Five candidates from a scan that keeps the five nearest rows it meets; the widest keeps 200.
    tune(settings, SEARCH_CANDIDATES_MIN=5, HNSW_EF_SEARCH=5, HNSW_EF_SEARCH_MAX=200)
    index_scans_only()
    base = Memory.objects.for_team(team).servable()
    vector = embeddings.encode_one(QUESTION)
    with transaction.atomic():
        scanned, plan = vector_candidates(base, vector, 5, filtered=False)
    assert plan == "hnsw" and meant.pk not in scanned  # the scan alone is stranded

    outcome = memory_search(team=team, query=QUESTION, limit=2, record=False)

    assert outcome.vector_plan == "hnsw, widened"
    assert {hit.memory.pk for hit in outcome.results} == {worded.pk, meant.pk}
    meant_hit = next(hit for hit in outcome.results if hit.memory.pk == meant.pk)
    assert meant_hit.explain["vector_rank"] is not None and meant_hit.explain["lexical_rank"] is None


def test_a_scan_still_stranded_at_its_widest_gives_way_to_an_exact_scan(team, db, settings):
    worded, meant = stranding_corpus(team)
    tune(settings, SEARCH_CANDIDATES_MIN=5, HNSW_EF_SEARCH=5, HNSW_EF_SEARCH_MAX=5)
    index_scans_only()

    outcome = memory_search(team=team, query=QUESTION, limit=2, record=False)

    assert outcome.vector_plan == "hnsw, widened, then exact"
    assert {hit.memory.pk for hit in outcome.results} == {worded.pk, meant.pk}


def test_a_stranded_scan_of_more_rows_than_an_exact_scan_may_read_stays_as_it_is(team, db, settings):
    worded, meant = stranding_corpus(team)
    tune(settings, SEARCH_CANDIDATES_MIN=5, HNSW_EF_SEARCH=5, HNSW_EF_SEARCH_MAX=5, VECTOR_EXACT_MAX_ROWS=10)
    index_scans_only()

    outcome = memory_search(team=team, query=QUESTION, limit=2, record=False)

    assert outcome.vector_plan == "hnsw, widened"
    assert [hit.memory.pk for hit in outcome.results] == [worded.pk]  # only the words found one


def test_a_healthy_index_scan_is_not_run_again(team, db, settings):
    worded, meant = stranding_corpus(team)
    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX memory_embedding_hnsw")  # the dead rows gone, as after a vacuum
    index_scans_only()

    outcome = memory_search(team=team, query=QUESTION, limit=2, record=False)

    assert outcome.vector_plan == "hnsw"
    assert {hit.memory.pk for hit in outcome.results} == {worded.pk, meant.pk}


def test_a_memory_without_an_embedding_is_found_by_its_words(team, db):
    """A row the server has not embedded (written outside it) can hold the question's words: the
    search ranks it by them, and it does not make the scan look stranded."""
    deploy_corpus(team)
    bare = store(team, "Image resizing runs in the release pipeline worker before the CDN upload.")
    Memory.objects.filter(pk=bare.pk).update(embedding=None)

    outcome = memory_search(team=team, query="where does the release pipeline resize images?", record=False)

    hit = next(hit for hit in outcome.results if hit.memory.pk == bare.pk)
    assert hit.explain["vector_rank"] is None and hit.explain["lexical_rank"] == 1
    assert outcome.vector_plan == "hnsw"


def test_a_compiled_search_base_finds_what_its_queryset_finds(team, db):
    """Search compiles its queryset once (search.Searched) and writes each candidate statement
    around it: the same memories, in the same order, as the queryset's own statements, and the
    plain vector ordering still served by the HNSW index."""
    deploy_corpus(team)
    store(team, "The billing service pins psycopg to 3.2 for the deploy image.", memory_type="decision")
    store(team, "Never run the deploy script from a laptop.", memory_type="decision")
    vector = embeddings.encode_one("how is the deploy run?")
    bases = [
        Memory.objects.for_team(team).servable(),
        Memory.objects.for_team(team).servable().filter(memory_type="decision"),
    ]
    with transaction.atomic():
        for base in bases:
            compiled = search.searched(base)
            for exact in (False, True):
                expected = list(base.nearest(vector, 5, exact=exact).values_list("pk", flat=True))
                assert compiled.nearest(vector, 5, exact=exact) == expected
            matching_sql, params = compiled.matching(search.tsquery_any(["deploy"]))
            with connection.cursor() as cursor:
                cursor.execute(matching_sql, params)
                found = {pk for pk, _ in cursor.fetchall()}
            assert found == set(base.filter(content__icontains="deploy").values_list("pk", flat=True))
            assert search.estimated_rows(compiled) == search.estimated_rows(base)
        index_scans_only()
        with CaptureQueriesContext(connection) as captured:
            search.searched(bases[0]).nearest(vector, 5)
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + captured.captured_queries[-1]["sql"])
            plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "memory_embedding_hnsw" in plan


def test_with_several_teams_a_teams_index_scan_plans_for_the_team_as_a_filter(team, other_team, settings):
    """The HNSW graph holds every team's memories and filters what it found afterwards: a team whose
    memories lie further from the question than another team's gets its own nearest all the same."""
    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX memory_embedding_hnsw")  # no dead rows of earlier tests
    topics = ["caching", "retries", "migrations", "feature flags", "logging", "on-call", "billing"]
    memory_store_batch(
        [
            {"content": f"For {topics[i % 7]} in service {i}, the team agreed on rule number {i}."}
            for i in range(14)
        ],
        team=team,
        dedupe=False,
    )
    memory_store_batch(
        [{"content": f"{QUESTION[:-1]}, variant {i} of the question?"} for i in range(40)],
        team=other_team,
        dedupe=False,
    )
    search.clear_corpus_stats()
    # Ten rows from the index, every one of them the other team's.
    tune(settings, SEARCH_CANDIDATES_MIN=5, HNSW_EF_SEARCH=10, HNSW_EF_SEARCH_MAX=10, VECTOR_EXACT_MAX_ROWS=0)
    index_scans_only()

    outcome = memory_search(team=team, query=QUESTION, mode="vector", limit=1, record=False)

    assert outcome.vector_plan == "hnsw, then exact"
    expected = exact_ids(Memory.objects.for_team(team).servable(), embeddings.encode_one(QUESTION), 1)
    assert [hit.memory.pk for hit in outcome.results] == expected
    theirs = memory_search(team=other_team, query=QUESTION, mode="vector", limit=1, record=False)
    assert theirs.vector_plan == "hnsw" and {hit.memory.team_id for hit in theirs.results} == {other_team.pk}
