"""How the learned screen (``learned.py``) is built from the labeled dev texts.

- **Examples.** Every dev text of ``intent_training.dev_examples``, in any language: the dev
  injection payloads against what a team legitimately stores (the benign texts of the injection
  corpus, the secrets corpus' look-alikes, the retrieval sets' memories, the dedup pairs, the gold
  lessons). The frozen test splits are never read.
- **Model.** TF-IDF over the pieces of ``learned.grams`` (pieces in at least
  ``INJECTION_LEARNED_MIN_DF`` texts), a logistic regression with the classes weighted to balance.
- **Threshold.** Stratified cross-validation on dev, the vocabulary learned inside each fold and each
  held-out text scored on its best reading, as the screen scores it: for each regularization
  strength, the lowest score at which at most ``INJECTION_LEARNED_MAX_BENIGN_HELD`` of the benign
  injection-corpus texts and of all legitimate texts are held (``intent_training.threshold_for``);
  the strength that then holds the most payloads wins. The final model is fitted on every example.
"""

from __future__ import annotations

import numpy as np

from memory.conf import setting
from memory.services.injection.learned import LearnedScreen, grams
from memory.services.intent_training import Examples, trial, validation


def _sizes() -> tuple[int, int]:
    low, high = setting("INJECTION_LEARNED_NGRAMS")
    return int(low), int(high)


def _fit(texts: list[str], labels: np.ndarray, c: float) -> LearnedScreen:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    sizes = _sizes()
    vectorizer = TfidfVectorizer(
        analyzer=lambda text: grams(text, sizes),
        sublinear_tf=True,
        min_df=setting("INJECTION_LEARNED_MIN_DF"),
    )
    matrix = vectorizer.fit_transform(texts)
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000).fit(matrix, labels)
    weights = model.coef_[0]
    pieces = {
        piece: (float(vectorizer.idf_[column]), float(weights[column]))
        for piece, column in vectorizer.vocabulary_.items()
    }
    return LearnedScreen(pieces=pieces, bias=float(model.intercept_[0]), threshold=0.5, sizes=sizes)


def cross_validate(examples: Examples) -> dict:
    """Out-of-fold figures per regularization strength, and the chosen strength and threshold."""
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=setting("INJECTION_LEARNED_FOLDS"), shuffle=True, random_state=0)
    labels, max_held = examples.labels, setting("INJECTION_LEARNED_MAX_BENIGN_HELD")
    trials = []
    for c in setting("INJECTION_LEARNED_C"):
        scores = np.zeros(len(labels))
        for train, held_out in folds.split(np.zeros(len(labels)), labels):
            screen = _fit([examples.texts[i] for i in train], labels[train], c)
            scores[held_out] = [screen.best_score(examples.texts[i]) for i in held_out]
        trials.append(trial(c, scores, examples, max_held, threshold_digits=6))
    return validation(trials, setting("INJECTION_LEARNED_FOLDS"), max_held)


def build(examples: Examples) -> dict:
    """The file's content: the classifier fitted on every example, with its cross-validated threshold."""
    validation = cross_validate(examples)
    screen = _fit(examples.texts, examples.labels, validation["chosen"]["C"])
    return {
        "about": "Learned injection screen: logistic regression over TF-IDF of character n-grams "
        "(memory/services/injection/learned.py). Rebuild with `python manage.py build_injection_screen`.",
        "sizes": list(screen.sizes),
        "bias": round(screen.bias, 6),
        "threshold": validation["chosen"]["threshold"],
        "cross_validation": validation,
        "trained_on": {
            "files": examples.files,
            "payloads": int(examples.labels.sum()),
            "negatives": int((examples.labels == 0).sum()),
        },
        "pieces": {
            piece: [round(idf, 4), round(weight, 4)] for piece, (idf, weight) in sorted(screen.pieces.items())
        },
    }
