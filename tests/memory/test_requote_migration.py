"""Migration 0018: source chunks that extraction stored as ``role: text`` lines are relabelled the way
it quotes turns now, so that a rescan does not quarantine old lessons for the server's own words."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from memory.models import Memory
from memory.services.injection import screen_fields
from memory.services.store import memory_store

requote_migration = importlib.import_module("memory.migrations.0018_requote_source_chunks")

OLD_CHUNK = (
    "assistant: I'll add the token refresh with the requests library.\n"
    "user: No, don't use requests in the auth service — always use httpx."
)


def test_old_labels_become_a_speaker_on_a_line_of_its_own():
    assert requote_migration.requote(OLD_CHUNK) == (
        "(assistant)\nI'll add the token refresh with the requests library.\n"
        "(user)\nNo, don't use requests in the auth service — always use httpx."
    )
    outcome = "outcome: success=True, errors=2\nsummary: OAuth flow\nevaluation: fixed two type errors"
    assert requote_migration.requote(outcome) == (
        "(outcome)\nsuccess=True, errors=2\n(summary)\nOAuth flow\n(evaluation)\nfixed two type errors"
    )
    assert requote_migration.requote("the user: field stays") == "the user: field stays"


@pytest.mark.usefixtures("embedder")
def test_the_migration_relabels_extractions_chunks_only(team, member):
    lesson = memory_store(
        team=team, author=member, content="Always use httpx in the auth service.", source="api"
    ).memory
    sent = memory_store(
        team=team, author=member, content="Deploys need a second reviewer.", source_chunk=OLD_CHUNK
    ).memory
    # What extraction stored before stop 63 (the store screens what the server writes now).
    Memory.objects.filter(pk=lesson.pk).update(source="extraction", source_chunk=OLD_CHUNK)
    assert screen_fields(source_chunk=OLD_CHUNK)  # a rescan would have held it

    requote_migration.relabel(apps, None)

    lesson.refresh_from_db()
    sent.refresh_from_db()
    assert lesson.source_chunk == requote_migration.requote(OLD_CHUNK)
    assert screen_fields(content=lesson.content, source_chunk=lesson.source_chunk) == []
    assert sent.source_chunk == OLD_CHUNK  # an agent's own chunk is what it sent
