from __future__ import annotations

import subprocess
import sys

import numpy as np

from tests.workers import ROOT


def test_vectors_are_normalized_and_384_dimensional(embedder):
    vectors = embedder.encode(["Always run the linter before committing", "Hello"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder):
    anchor, paraphrase, unrelated = embedder.encode(
        [
            "The deploy failed because the database migration timed out",
            "Deployment broke since the DB migration took too long",
            "Our team lunch is on Friday at the Italian place",
        ]
    )
    assert anchor @ paraphrase > 0.6
    assert anchor @ paraphrase > anchor @ unrelated + 0.4


def test_importing_django_the_api_and_the_tasks_does_not_import_torch():
    code = (
        "import django, sys; django.setup();"
        "import api.urls, api.views, memory.tasks, memory.embeddings, memory.services.health;"
        "bad = [m for m in ('torch', 'sentence_transformers') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "memorylane.settings"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
