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


def test_the_onnx_backend_gives_the_vectors_sentence_transformers_gives(embedder, settings):
    from memory import embeddings

    texts = [
        "Pin Node 20 for the billing service; Node 18 breaks the PDF renderer.",
        "Hello",
        "ERR_LEDGER_LOCK_TIMEOUT means the nightly rollup holds the ledger lock. " * 12,  # past 256 tokens
    ]
    location = embeddings.model_location()
    target = embeddings.exported_path(location)
    if not target.exists():
        embeddings.export_onnx(location, target)
    onnx = embeddings.OnnxEncoder(location, target).encode(texts, batch_size=2)
    torch = embeddings.TorchEncoder(location).encode(texts, batch_size=2)
    assert onnx.shape == torch.shape == (3, 384)
    assert np.min(np.sum(onnx * torch, axis=1)) > 0.9999
    if settings.MEMORY_LANE["EMBEDDING_BACKEND"] == "onnx":
        assert embeddings.get_model().backend == "onnx"  # and the running server uses it


def test_a_model_onnx_cannot_serve_says_why_and_is_served_by_torch(tmp_path):
    from memory import embeddings

    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text(
        '[{"type": "sentence_transformers.models.Transformer"}, {"type": "sentence_transformers.models.Pooling"}]'
    )
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert embeddings.onnx_servable(str(tmp_path)) == "not mean pooling"
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    assert embeddings.onnx_servable(str(tmp_path)) == "no tokenizer.json, sentence_bert_config.json"
    assert embeddings.onnx_servable("sentence-transformers/all-MiniLM-L6-v2").startswith("not a local")
    assert embeddings.onnx_servable(embeddings.model_location()) == ""


def test_a_few_texts_run_on_one_thread_and_many_on_several_with_the_same_vectors(settings):
    """A query or a store runs on a single-threaded session (less CPU under load), a batch on
    EMBEDDING_THREADS threads (less wait): the vectors are the same either way."""
    from memory import embeddings

    settings.MEMORY_LANE = {**settings.MEMORY_LANE, "EMBEDDING_PARALLEL_MIN_TEXTS": 4, "EMBEDDING_THREADS": 2}
    location = embeddings.model_location()
    target = embeddings.exported_path(location)
    if not target.exists():
        embeddings.export_onnx(location, target)
    encoder = embeddings.OnnxEncoder(location, target)
    texts = [
        "Pin Node 20 for the billing service; Node 18 breaks the PDF renderer.",
        "The nightly rollup holds the ledger lock until 02:00 UTC.",
        "Run the linters before pushing.",
        "Never deploy on Fridays after lunch.",
        "Hello",
    ]
    alone = np.stack([encoder.encode([text], batch_size=8)[0] for text in texts])
    together = encoder.encode(texts, batch_size=8)
    assert np.min(np.sum(alone * together, axis=1)) > 0.99999
    threads = {
        count: session.get_session_options().intra_op_num_threads
        for count, session in encoder._sessions.items()
    }
    assert threads == {1: 1, 2: 2}
