"""The screen of intent (issue 43, DESIGN.md §8): what a memory would make an agent *do*.

The wording screen (``memory/services/injection/``) knows phrasings; a payload in words it has no
pattern for passes it. This screen reads the sentence vector the store computes anyway and asks a
small linear classifier whether the text instructs its reader to act against the team — run
destructive commands, disclose or ask for credentials, skip reviews or tests, widen its own
permissions, take a new identity, or override its instructions — whatever the wording. A memory it
flags goes to review (quarantined), like one the wording screen flags.

The classifier is a logistic regression over the model's unit vectors, trained by
``manage.py build_intent_screen`` on the labeled dev data in ``bench/data/`` (never the frozen test
splits) and shipped as ``memory/data/intent_screen.json``: weights, bias, the threshold chosen by
cross-validation on dev, and the figures of that cross-validation. A file made for another embedding
model (other dimensions) is not used: the screen then says nothing, and the wording screen remains.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from memory.conf import setting
from memory.services.language import reads_as_english

logger = logging.getLogger(__name__)

MODEL_FILE = Path(__file__).resolve().parents[1] / "data" / "intent_screen.json"
REASON = "instructs the agent (screen of intent, score {score:.2f})"


@dataclass(frozen=True)
class IntentModel:
    weights: np.ndarray  # (dimensions,)
    bias: float
    threshold: float  # the probability from which a text is held for review
    model: str  # the embedding model it was trained on

    def scores(self, vectors: np.ndarray) -> np.ndarray:
        """The probability that each vector's text instructs its reader (pure)."""
        logits = np.asarray(vectors, dtype=np.float32) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-logits))


def flagged(score: float, threshold: float) -> bool:
    """The decision: held for review from the threshold on."""
    return not math.isnan(score) and score >= threshold


@lru_cache(maxsize=1)
def intent_model() -> IntentModel | None:
    """The shipped classifier, or None when the screen is off or its file does not fit the model."""
    if not setting("INTENT_SCREEN"):
        return None
    path = Path(setting("INTENT_SCREEN_FILE") or MODEL_FILE)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        logger.warning("the screen of intent is off: cannot read %s (%s)", path, exc)
        return None
    weights = np.asarray(data["weights"], dtype=np.float32)
    if weights.shape != (setting("EMBEDDING_DIMENSIONS"),):
        logger.warning("the screen of intent is off: %s has %s weights", path, weights.shape)
        return None
    threshold = setting("INTENT_SCREEN_THRESHOLD")
    return IntentModel(
        weights=weights,
        bias=float(data["bias"]),
        threshold=float(data["threshold"] if threshold is None else threshold),
        model=data.get("model", ""),
    )


def intent_reasons(vector, text: str) -> list[str]:
    """Why ``text``, of unit sentence vector ``vector``, is held for review: one reason, or none (a
    text that does not read as English is left to the wording screen)."""
    model = intent_model()
    if model is None or not reads_as_english(text):
        return []
    score = float(model.scores(np.asarray(vector)[None, :])[0])
    return [REASON.format(score=score)] if flagged(score, model.threshold) else []
