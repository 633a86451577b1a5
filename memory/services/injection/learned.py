"""The learned screen (issue 43): a classifier of character n-grams that holds for review a text
shaped like the dev payloads, in any language.

The wording screen (``families.py``) knows the phrasings its patterns were written from, and the
screen of intent (``memory/services/intent.py``) reads only English, the one language the embedding
model knows. Pieces of words carry across phrasings and languages better than either ("instrucc",
"anweis", "credenc", "evil.", "--no-ver", "r own"): this screen weighs every piece of 3 to 5
characters of the text, across word boundaries (chosen over pieces inside words by cross-validation
on dev), learned from the labeled dev texts in ``bench/data/`` (never the frozen test splits), and
scores each reading the wording screen makes of the text (decoded, de-obfuscated).
A reading it scores at or above the threshold chosen by cross-validation on dev holds the memory
for review, like a wording match.

The model is a logistic regression over TF-IDF weights (sub-linear counts, unit length), built by
``manage.py build_injection_screen`` (``learned_build.py``) and shipped as
``memory/data/injection_ngrams.json``: each piece's inverse document frequency and weight, the bias,
the threshold and the figures of the cross-validation. Scoring is pure Python, a dictionary look-up
per piece.
"""

from __future__ import annotations

import json
import logging
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memory.conf import setting
from memory.services.injection.normalize import INVISIBLE, variants

logger = logging.getLogger(__name__)

MODEL_FILE = Path(__file__).resolve().parents[2] / "data" / "injection_ngrams.json"
REASON = "reads like an instruction to the agent (learned screen, score {score:.2f})"


def grams(text: str, sizes: tuple[int, int]) -> list[str]:
    """Every piece of ``sizes[0]`` to ``sizes[1]`` characters of ``text``, across the boundaries of
    its words, which are joined by one space with a space before the first and after the last (so a
    word's start and end are pieces too); the text case-folded, in compatibility form, without
    invisible characters (pure)."""
    low, high = sizes
    words = INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).casefold().split()
    if not words:
        return []
    joined = f" {' '.join(words)} "
    return [joined[i : i + size] for size in range(low, high + 1) for i in range(len(joined) - size + 1)]


@dataclass(frozen=True)
class LearnedScreen:
    pieces: dict[str, tuple[float, float]]  # piece → (inverse document frequency, weight)
    bias: float
    threshold: float
    sizes: tuple[int, int]

    def score(self, text: str) -> float:
        """The probability that one reading is a payload: TF-IDF of its pieces (1 + ln count, unit
        length over the pieces the model knows), logistic regression (pure)."""
        counts = Counter(piece for piece in grams(text, self.sizes) if piece in self.pieces)
        if not counts:
            return 1.0 / (1.0 + math.exp(-self.bias))
        values = {piece: (1.0 + math.log(n)) * self.pieces[piece][0] for piece, n in counts.items()}
        length = math.sqrt(sum(v * v for v in values.values()))
        logit = self.bias + sum(v * self.pieces[piece][1] for piece, v in values.items()) / length
        return 1.0 / (1.0 + math.exp(-logit))

    def best_score(self, text: str) -> float:
        """The highest score of any reading of ``text`` (decoded, de-obfuscated: ``variants``)."""
        return max(self.score(reading) for reading in variants(text))


def held(score: float, threshold: float) -> bool:
    """The decision: held for review from the threshold on."""
    return not math.isnan(score) and score >= threshold


def from_file(data: dict, threshold: float | None = None) -> LearnedScreen:
    return LearnedScreen(
        pieces={piece: (float(idf), float(weight)) for piece, (idf, weight) in data["pieces"].items()},
        bias=float(data["bias"]),
        threshold=float(data["threshold"] if threshold is None else threshold),
        sizes=(int(data["sizes"][0]), int(data["sizes"][1])),
    )


@lru_cache(maxsize=1)
def learned_screen() -> LearnedScreen | None:
    """The shipped classifier, or None when the screen is off or its file cannot be read."""
    if not setting("INJECTION_LEARNED_SCREEN"):
        return None
    path = Path(setting("INJECTION_LEARNED_FILE") or MODEL_FILE)
    try:
        return from_file(json.loads(path.read_text()), setting("INJECTION_LEARNED_THRESHOLD"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("the learned injection screen is off: cannot read %s (%s)", path, exc)
        return None


def learned_reasons(text: str) -> list[str]:
    """Why ``text`` is held for review by the learned screen: one reason, or none."""
    screen = learned_screen()
    if screen is None or not text or not text.strip():
        return []
    score = screen.best_score(text)
    return [REASON.format(score=score)] if held(score, screen.threshold) else []
