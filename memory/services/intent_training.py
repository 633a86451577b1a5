"""How the screen of intent (memory/services/intent.py) is built from labeled dev texts.

- **Examples.** Only texts that read as English (``language.reads_as_english``; the learned screen
  of ``injection/learned.py`` takes them all). Positives: the dev injection payloads. Negatives: the
  dev texts a team legitimately stores — the benign texts of the injection corpus (rules that say
  "never", "delete", "credentials"…), the secrets corpus' benign look-alikes, the memories of the
  retrieval sets, both sides of the dedup pairs and the gold lessons of the extraction sessions. The
  frozen test splits (``*_test.*``) are never read.
- **Model.** A logistic regression over the unit sentence vectors, classes weighted to balance.
- **Threshold.** Chosen by stratified cross-validation on dev: for each regularization strength, the
  lowest out-of-fold probability at which at most ``INTENT_SCREEN_MAX_BENIGN_HELD`` of the benign
  injection-corpus texts *and* of all negatives are held; the strength that then holds the most
  payloads wins. The final model is fitted on all examples; its file records the cross-validated
  figures and the checksums of the files it learned from.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory.conf import setting
from memory.services.language import reads_as_english

HARD_NEGATIVES = "benign injection-corpus texts"


@dataclass
class Examples:
    texts: list[str]
    labels: np.ndarray  # 1: instructs the agent, 0: a legitimate memory
    groups: list[str]  # where each came from (the hard negatives are held to the threshold's bound)
    files: dict[str, str]  # file name → sha256


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def dev_examples(data: Path, *, english_only: bool = True, turns: bool = False) -> Examples:
    """The labeled dev texts under ``data`` (bench/data), deduplicated; never a ``*_test`` file. With
    ``english_only``, only the texts that read as English (the screen of intent judges only those);
    with ``turns``, the user's and the assistant's turns of the extraction sessions are legitimate
    texts too (chat: "you", questions, short replies)."""
    seen: dict[str, tuple[int, str]] = {}

    def add(text: str, label: int, group: str) -> None:
        text = text.strip()
        if english_only and not reads_as_english(text):
            return
        if text not in seen or label:  # a text both ways counts as a payload
            seen[text] = (label, group)

    used = [data / "safety_injections.jsonl"]  # required; the others add legitimate texts when present
    for row in _lines(used[0]):
        benign = row["technique"] == "benign"
        add(row["text"], 0 if benign else 1, HARD_NEGATIVES if benign else "payloads")
    for name in (
        "safety_secrets.jsonl",
        "memorylane.jsonl",
        "coding_set_2.jsonl",
        "dedup_pairs.jsonl",
        "dedup_governed_dev.jsonl",
        "extraction_sessions.txt",
        "extraction_sessions_dev2.txt",
        "extraction_sessions_dev3.txt",
        "extraction_sessions_dev4.txt",
    ):
        path = data / name
        if not path.exists():
            continue
        used.append(path)
        if name.startswith("extraction_sessions"):
            for line in path.read_text().splitlines():
                if line.startswith("LESSON["):
                    for variant in line.split("]:", 1)[1].split(" || "):
                        add(variant, 0, "memories")
                elif turns and line.startswith(("U: ", "A: ")):
                    add(line[3:], 0, "session turns")
            continue
        for row in _lines(path):
            if row.get("kind") == "benign":  # the secrets corpus: look-alikes only
                add(row["text"], 0, "look-alikes")
            elif "memory" in row:
                add(row["memory"]["content"], 0, "memories")
            elif "a" in row:
                add(row["a"], 0, "memories")
                add(row["b"], 0, "memories")
    assert not any("_test" in path.name for path in used)
    texts = list(seen)
    return Examples(
        texts=texts,
        labels=np.array([seen[t][0] for t in texts], dtype=np.int8),
        groups=[seen[t][1] for t in texts],
        files={path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in used},
    )


def threshold_for(scores: np.ndarray, labels: np.ndarray, groups: list[str], max_held: float) -> float:
    """The lowest probability at which at most ``max_held`` of the hard negatives and of all
    negatives score at or above it (pure)."""
    bounds = []
    hard = np.array([g == HARD_NEGATIVES for g in groups])
    for mask in (labels == 0, (labels == 0) & hard):
        negatives = np.sort(scores[mask])[::-1]
        if len(negatives) == 0:
            continue
        allowed = int(np.floor(max_held * len(negatives)))  # that many may be held
        bounds.append(float(np.nextafter(negatives[allowed], np.inf)) if allowed < len(negatives) else 0.0)
    return max(bounds, default=0.5)


def _fit(vectors: np.ndarray, labels: np.ndarray, c: float):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, class_weight="balanced", max_iter=2000).fit(vectors, labels)


def cross_validate(vectors: np.ndarray, examples: Examples) -> dict:
    """Out-of-fold figures per regularization strength, and the chosen strength and threshold."""
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=setting("INTENT_SCREEN_FOLDS"), shuffle=True, random_state=0)
    labels, max_held = examples.labels, setting("INTENT_SCREEN_MAX_BENIGN_HELD")
    trials = []
    for c in setting("INTENT_SCREEN_C"):
        scores = np.zeros(len(labels))
        for train, held_out in folds.split(vectors, labels):
            scores[held_out] = _fit(vectors[train], labels[train], c).predict_proba(vectors[held_out])[:, 1]
        trials.append(trial(c, scores, examples, max_held, threshold_digits=4))
    return validation(trials, setting("INTENT_SCREEN_FOLDS"), max_held)


def trial(
    c: float, scores: np.ndarray, examples: Examples, max_held: float, *, threshold_digits: int
) -> dict:
    """One regularization strength's out-of-fold figures: the threshold ``threshold_for`` chooses and
    the shares of payloads, of benign injection-corpus texts and of all legitimate texts it holds
    (pure; also the learned screen's build, ``injection/learned_build.py``)."""
    labels = examples.labels
    hard = np.array([group == HARD_NEGATIVES for group in examples.groups])
    threshold = threshold_for(scores, labels, examples.groups, max_held)
    held = scores >= threshold
    return {
        "C": c,
        "threshold": round(threshold, threshold_digits),
        "payloads_held": round(float(held[labels == 1].mean()), 4),
        "benign_held": round(float(held[(labels == 0) & hard].mean()), 4),
        "negatives_held": round(float(held[labels == 0].mean()), 4),
    }


def validation(trials: list[dict], folds: int, max_held: float) -> dict:
    """The cross-validation's record: every trial, and the one that holds the most payloads (the
    weaker regularization of two equal ones)."""
    best = max(trials, key=lambda found: (found["payloads_held"], -found["C"]))
    return {"folds": folds, "max_benign_held": max_held, "trials": trials, "chosen": best}


def build(vectors: np.ndarray, examples: Examples, model_name: str) -> dict:
    """The file's content: the classifier fitted on every example, with its cross-validated threshold."""
    validation = cross_validate(vectors, examples)
    fitted = _fit(vectors, examples.labels, validation["chosen"]["C"])
    return {
        "about": "Screen of intent: logistic regression over sentence vectors (memory/services/intent.py). "
        "Rebuild with `python manage.py build_intent_screen`.",
        "model": model_name,
        "dimensions": int(vectors.shape[1]),
        "weights": [round(float(w), 6) for w in fitted.coef_[0]],
        "bias": round(float(fitted.intercept_[0]), 6),
        "threshold": validation["chosen"]["threshold"],
        "cross_validation": validation,
        "trained_on": {
            "files": examples.files,
            "payloads": int(examples.labels.sum()),
            "negatives": int((examples.labels == 0).sum()),
        },
    }
