"""The wall between teams in the pipeline (DESIGN.md §11): sessions, extraction, reflection, decay,
rescan, their tasks and their commands. Nothing of one team is seen, compared with or changed by
another's work; another team's id answers exactly like a missing one."""

from __future__ import annotations

import uuid

import pytest
from django.core.management import CommandError, call_command

from memory.models import (
    Entity,
    ExtractionStatus,
    FeedbackEvent,
    Memory,
    Recall,
    Session,
    SessionMessage,
    TaskName,
    TaskRun,
)
from memory.services.entities import entity_get_or_create
from memory.services.errors import NotFound
from memory.services.extraction import extraction_run
from memory.services.jobs import run_create
from memory.services.reflection import reflection_queue, reflection_run
from memory.services.rescan import rescan_run
from memory.services.search import memory_search
from memory.services.sessions import messages_append, session_end, session_resolve, session_start
from memory.services.store import memory_store
from memory.tasks import decay_task, reflect_task
from tests.conftest import join
from tests.pipeline.test_reflection import MIGRATIONS, store

pytestmark = pytest.mark.usefixtures("embedder")

SECRET = "shpat_" + "0f" * 16


# --- sessions -------------------------------------------------------------------------------------


def test_another_teams_session_ids_answer_not_found_exactly_like_missing_ones(
    member, team, other_team, outsider
):
    join(member, other_team, "member")  # one person in two teams: each team sees only its own sessions
    ours, created = session_start(team=team, user=member, external_id="cc-1", agent="claude-code")
    assert created and ours.team == team

    def refusal(**kwargs) -> str:
        with pytest.raises(NotFound) as error:
            session_resolve(create=False, **kwargs)
        assert error.value.code == "NOT_FOUND"
        return error.value.message

    for reference in (str(ours.pk), "cc-1"):
        assert refusal(team=other_team, user=member, reference=reference) == f"No session {reference!r}."
        assert refusal(team=other_team, user=outsider, reference=reference) == f"No session {reference!r}."
    missing = str(uuid.uuid4())
    assert refusal(team=team, user=member, reference=missing) == f"No session {missing!r}."
    assert session_resolve(team=team, user=member, reference=str(ours.pk), create=False) == ours
    assert session_resolve(team=team, user=member, reference="cc-1", create=False) == ours


def test_an_agent_session_id_is_unique_per_team_and_its_rows_carry_the_team(member, team, other_team):
    join(member, other_team, "member")
    memory_store(team=team, content="The billing API runs on Node 20.", entities=["project:billing"])
    memory_store(team=other_team, content="The billing API runs on Node 20.", entities=["project:billing"])
    ours, _ = session_start(team=team, user=member, external_id="cc-same", project="billing")
    theirs, created = session_start(team=other_team, user=member, external_id="cc-same", project="billing")
    assert created and theirs.pk != ours.pk and theirs.team == other_team
    assert ours.project.team == team and theirs.project.team == other_team
    assert ours.project != theirs.project
    # Resolving the agent's id in each team gives that team's session; nothing else is created.
    assert session_resolve(team=other_team, user=member, reference="cc-same") == theirs
    assert Session.objects.filter(external_id="cc-same").count() == 2

    for session in (ours, theirs):
        messages_append(session=session, messages=[{"seq": 0, "role": "user", "content": "Which Node?"}])
        memory_search(team=session.team, query="billing node version", session=session)
        session_end(session=session, success=True, duration_ms=1000)
    for session in (ours, theirs):
        assert set(SessionMessage.objects.filter(session=session).values_list("team_id", flat=True)) == {
            session.team_id
        }
        recalls = Recall.objects.filter(session=session)
        assert recalls.exists()
        assert {(r.team_id, r.memory.team_id) for r in recalls} == {(session.team_id, session.team_id)}
        events = FeedbackEvent.objects.filter(session=session)
        assert events.exists() and {e.team_id for e in events} == {session.team_id}
        assert {e.memory.team_id for e in events} == {session.team_id}


# --- extraction -------------------------------------------------------------------------------------

NAMED = [
    {"seq": 0, "role": "user", "content": "Always ask Mark Robinson before changing the billing schema."}
]


def test_extraction_of_a_session_stores_only_into_its_team(ended_session, team, other_team, outsider):
    existing = memory_store(
        team=team, content="Never use requests in the auth service; always use httpx with the shared client."
    ).memory
    entity_get_or_create("person:mark-robinson", team=team)
    acme_entities = set(Entity.objects.for_team(team).values_list("pk", "slug"))
    acme_memories = list(Memory.objects.for_team(team).order_by("pk").values_list("pk", "updated_at"))

    theirs = ended_session(external_id="globex-1", user=outsider, in_team=other_team)
    report = extraction_run(theirs.pk)

    assert report.status == ExtractionStatus.DONE and report.added
    stored = Memory.objects.filter(session=theirs)
    assert {m.team_id for m in stored} == {other_team.pk} and {str(m.pk) for m in stored} == set(report.added)
    # acme's note of the same lesson is neither a duplicate of globex's nor reinforced by it.
    assert stored.filter(content__icontains="httpx").exists()
    existing.refresh_from_db()
    assert existing.reinforcement_count == 0
    mentions = [mention for memory in stored for mention in memory.mentions.all()]
    assert mentions and {m.team_id for m in mentions} == {other_team.pk}
    assert {m.entity.team_id for m in mentions if m.entity} == {other_team.pk}
    assert Entity.objects.for_team(other_team).filter(slug="feature:auth").exists()
    assert set(Entity.objects.for_team(team).values_list("pk", "slug")) == acme_entities
    assert list(Memory.objects.for_team(team).order_by("pk").values_list("pk", "updated_at")) == acme_memories


def test_the_entity_pool_of_an_extraction_is_its_teams(ended_session, member, team, other_team, outsider):
    entity_get_or_create("person:mark-robinson", team=team)  # known in acme only
    ours = ended_session(
        external_id="named-acme", messages=NAMED, error_count=0, files_touched=[], summary=""
    )
    theirs = ended_session(
        external_id="named-globex",
        messages=NAMED,
        user=outsider,
        in_team=other_team,
        error_count=0,
        files_touched=[],
        summary="",
    )
    slugs = {}
    for session in (ours, theirs):
        extraction_run(session.pk)
        (memory,) = Memory.objects.filter(session=session)
        slugs[session.team.slug] = set(memory.mentions.values_list("entity__slug", flat=True))
    assert "person:mark-robinson" in slugs["acme"]
    assert "person:mark-robinson" not in slugs["globex"]
    assert not Entity.objects.for_team(other_team).filter(slug="person:mark-robinson").exists()


def test_the_extract_command_takes_a_team(ended_session, team, other_team, outsider, capsys):
    ours = ended_session(external_id="acme-pending")
    theirs = ended_session(external_id="globex-pending", user=outsider, in_team=other_team)
    with pytest.raises(CommandError, match="No such session"):
        call_command("extract", team="acme", session=[str(theirs.pk)])
    with pytest.raises(CommandError, match="no team 'nope'"):
        call_command("extract", team="nope")
    call_command("extract", team="acme")
    assert "Extracted 1 sessions" in capsys.readouterr().out
    assert Session.objects.get(pk=ours.pk).extraction_status == ExtractionStatus.DONE
    assert Session.objects.get(pk=theirs.pk).extraction_status == ExtractionStatus.PENDING
    call_command("extract")  # every team
    assert Session.objects.get(pk=theirs.pk).extraction_status == ExtractionStatus.DONE
    assert {m.team_id for m in Memory.objects.filter(session=theirs)} == {other_team.pk}


# --- reflection -------------------------------------------------------------------------------------


def test_reflection_never_clusters_two_teams_near_identical_observations(team, other_team):
    store(team, MIGRATIONS[:1])
    store(other_team, MIGRATIONS[1:2])
    # Together they would be a cluster; each team alone has one observation, so neither has one.
    report = reflection_run()
    assert report.teams == ["acme", "globex"] and report.observations == 2
    assert report.clusters == 0 and report.created == [] and Memory.objects.reflections().count() == 0

    store(team, MIGRATIONS[1:])
    store(other_team, [MIGRATIONS[0], MIGRATIONS[2]])
    report = reflection_run()
    assert report.clusters == 2 and len(report.created) == 2 and report.condensed == 6
    for reflection in Memory.objects.reflections():
        sources = list(reflection.sources.all())
        assert len(sources) == 3 and {s.team_id for s in sources} == {reflection.team_id}
        assert {m.team_id for m in reflection.mentions.all()} <= {reflection.team_id}
        assert {m.condensed_into_id for m in sources} == {reflection.pk}
    assert sorted(Memory.objects.reflections().values_list("team__slug", flat=True)) == ["acme", "globex"]


def test_a_teams_cluster_is_never_merged_into_another_teams_reflection(team, other_team):
    ours = store(team, MIGRATIONS)
    (first,) = reflection_run(team=team).created
    theirs = store(other_team, MIGRATIONS[:2])
    assert Memory.objects.for_team(other_team).filter(condensed_into__isnull=False).count() == 0

    report = reflection_run(team=other_team)

    assert report.teams == ["globex"] and report.merged == [] and len(report.created) == 1
    acme_reflection = Memory.objects.get(pk=first)
    assert set(acme_reflection.sources.all()) == set(ours)
    globex_reflection = Memory.objects.get(pk=report.created[0])
    assert globex_reflection.team == other_team and set(globex_reflection.sources.all()) == set(theirs)


def test_a_teams_run_now_reflects_that_team_only(team, other_team, curator):
    store(team, MIGRATIONS)
    store(other_team, MIGRATIONS)
    run = reflection_queue(team=team, user=curator)
    assert run.team == team

    result = reflect_task(run.pk)  # what the worker runs, given the run's id

    run.refresh_from_db()
    assert run.status == "done" and run.summary["teams"] == ["acme"] and result["team"] == "acme"
    assert Memory.objects.for_team(team).reflections().count() == 1
    assert Memory.objects.for_team(other_team).reflections().count() == 0
    assert not Memory.objects.for_team(other_team).filter(condensed_into__isnull=False).exists()
    # A run that is gone (its team deleted) does nothing, rather than run over every team.
    assert reflect_task(run.pk + 1000) == {"run": run.pk + 1000, "skipped": "no such run"}
    assert Memory.objects.for_team(other_team).reflections().count() == 0


def test_the_reflect_command_takes_a_team(team, other_team, capsys):
    store(team, MIGRATIONS)
    store(other_team, MIGRATIONS)
    call_command("reflect", team="globex")
    out = capsys.readouterr().out
    assert "Looked at 3 observations: 1 clusters, 1 new reflections" in out and "Teams: globex." in out
    assert TaskRun.objects.get().team == other_team
    assert Memory.objects.for_team(team).reflections().count() == 0
    with pytest.raises(CommandError, match="no team 'nope'"):
        call_command("reflect", team="nope")


# --- decay and rescan ---------------------------------------------------------------------------------


def test_decay_runs_over_the_runs_team_or_every_team(team, other_team, capsys):
    store(team, MIGRATIONS[:2])
    store(other_team, MIGRATIONS[:1])
    run = run_create(TaskName.DECAY, team=other_team)
    result = decay_task(run.pk)
    run.refresh_from_db()
    assert run.status == "done" and run.summary["examined"] == 1 and result["team"] == "globex"

    call_command("decay", team="acme")
    assert "Examined 2 memories" in capsys.readouterr().out
    assert TaskRun.objects.filter(task="decay", team=team).get().summary["examined"] == 2
    call_command("decay")
    assert "Examined 3 memories" in capsys.readouterr().out
    assert TaskRun.objects.filter(task="decay", team__isnull=True).get().summary["examined"] == 3


def test_rescan_of_a_team_changes_nothing_of_another(member, team, other_team, outsider, capsys):
    sessions = {}
    for current, user in ((team, member), (other_team, outsider)):
        session, _ = session_start(team=current, user=user, external_id="leaky")
        messages_append(session=session, messages=[{"seq": 0, "role": "user", "content": "The token is x."}])
        SessionMessage.objects.filter(session=session).update(content=f"The token is {SECRET}.")
        sessions[current.slug] = session

    def message(slug: str) -> str:
        return SessionMessage.objects.get(session=sessions[slug]).content

    call_command("rescan", team="acme")
    assert "1 messages" in capsys.readouterr().out
    assert SECRET not in message("acme") and message("globex") == f"The token is {SECRET}."
    report = rescan_run()
    assert report.teams == ["acme", "globex"] and report.redacted_messages == 1
    assert SECRET not in message("globex")
