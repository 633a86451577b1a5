"""What the second stage's two models share (the cross-encoder in rerank.py, the late-interaction
encoder in late.py): a model directory found inside an installed package without running its code,
its files checked against the SHA-256 sums this code was measured with; an onnxruntime session; texts
fed to it grouped by length so padding stays short; and one model per process, loaded on first use.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

Model = TypeVar("Model")
TOKEN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded (not installed, a changed file, a broken model)."""


def packaged_directory(
    packaged: tuple[str, str], sums: dict[str, str], *, what: str, error: type[ModelUnavailable]
) -> Path:
    """The directory ``packaged`` (package, path inside it) names, each of its files in ``sums``
    checked (a changed or truncated file is refused). Raises ``error``."""
    package, inside = packaged
    spec = importlib.util.find_spec(package)  # finds the package without running its code
    if spec is None or not spec.submodule_search_locations:
        raise error(f"the package {package} is not installed")
    directory = Path(next(iter(spec.submodule_search_locations))) / inside
    for name, expected in sums.items():
        try:
            digest = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        except OSError as exc:
            raise error(f"the packaged {what} cannot be read: {exc}") from exc
        if digest != expected:
            raise error(f"{directory / name} is not the file this code was measured with")
    return directory


def onnx_session(path: Path, threads: int):
    """An onnxruntime session on the CPU, quiet, not spinning between calls (as the embedder)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def padded_batches(encoded: list, batch_size: int) -> Iterator[tuple[list[int], dict]]:
    """The tokenizer's ``encoded`` texts in batches of similar length: each batch's indices and its
    token arrays (ids, attention mask, token types), padded to its longest text."""
    import numpy as np

    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        width = max(len(encoded[i].ids) for i in chosen)
        tokens = {name: np.zeros((len(chosen), width), dtype=np.int64) for name in TOKEN_INPUTS}
        for row, i in enumerate(chosen):
            length = len(encoded[i].ids)
            tokens["input_ids"][row, :length] = encoded[i].ids
            tokens["attention_mask"][row, :length] = 1
            tokens["token_type_ids"][row, :length] = encoded[i].type_ids
        yield chosen, tokens


class LoadedOnce(Generic[Model]):
    """A process's model, loaded by ``load`` on first use. Once loading failed it fails at once with
    the same message (a search does not retry a broken model on every request), until forgotten."""

    def __init__(self, load: Callable[[], Model], *, what: str, error: type[ModelUnavailable]) -> None:
        self._load, self._what, self._error = load, what, error
        self._model: Model | None = None
        self._failed = ""
        self._lock = threading.Lock()

    def get(self) -> Model:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                if self._failed:
                    raise self._error(self._failed)
                try:
                    self._model = self._load()
                except self._error as exc:
                    self._failed = str(exc)
                    raise
                except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
                    self._failed = f"the {self._what} failed to load: {exc}"
                    raise self._error(self._failed) from exc
        return self._model

    def forget(self) -> None:
        """Drop the loaded model and any failure (tests change the model's setting)."""
        with self._lock:
            self._model, self._failed = None, ""
