"""The prefilter of literals.py never skips a pattern that matches: on thousands of generated
patterns and texts (pure, seeded), on every letter ``re`` folds under IGNORECASE, and on the
injection screen itself, whose answers are the same as running every pattern."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from memory.services import injection, redaction
from memory.services.injection.excuses import excused
from memory.services.injection.normalize import variants
from memory.services.literals import Prefilter, StringIndex, fold, requirements

RNG_SEED = 61
WORDS = [
    "push",
    "main",
    "secret",
    "token",
    "ignore",
    "rules",
    "ſkip",
    "İnstall",
    "straße",
    "review",
    "no",
    "ci",
]
ODD_LETTERS = ["İ", "ı", "ſ", "K", "ß", "ẞ", "Σ", "ς", "µ", "ﬁ", "Å"]


def _atom(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        word = rng.choice(WORDS)
        return re.escape("".join(c.upper() if rng.random() < 0.3 else c for c in word))
    if roll < 0.45:
        return rng.choice(["[sz]", "[-_ ]", "[a-z]", r"\w", ".", r"\s+", "[^x]", r"\d"])
    if roll < 0.65:
        return "(?:" + "|".join(_sequence(rng, depth + 1) for _ in range(rng.randint(1, 4))) + ")"
    if roll < 0.8:
        return "(?:" + _sequence(rng, depth + 1) + ")" + rng.choice(["?", "*", "+", "{2,3}", "{0,2}", "+?"])
    if roll < 0.9:
        return rng.choice([r"\b", "^", "$", r"\B"])
    word = re.escape(rng.choice(WORDS))
    return rng.choice(["(?=", "(?!", "(?<=", "(?<!"]) + word + ")"


def _sequence(rng: random.Random, depth: int) -> str:
    return rng.choice(["", " "]).join(_atom(rng, depth) for _ in range(rng.randint(1, 4)))


def _text(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randint(1, 8)):
        word = rng.choice(WORDS + ODD_LETTERS)
        word = "".join(c.swapcase() if rng.random() < 0.3 else c for c in word)
        if rng.random() < 0.2:
            at = rng.randrange(len(word) + 1)
            word = word[:at] + rng.choice(ODD_LETTERS) + word[at:]
        pieces.append(word)
    return rng.choice([" ", "", "_", "-"]).join(pieces)


def test_a_generated_pattern_that_matches_is_never_skipped():
    rng = random.Random(RNG_SEED)
    matched = 0
    for _ in range(3000):
        flags = rng.choice(["", "(?i)"])
        pattern = re.compile(flags + _sequence(rng, 0))
        prefilter = Prefilter([pattern])
        for _ in range(20):
            text = _text(rng)
            if pattern.search(text):
                matched += 1
                assert prefilter.may_match(0, prefilter.present(text)), (pattern.pattern, text)
    assert matched > 5_000


def test_the_clauses_name_the_words_a_match_needs():
    assert requirements(re.compile(r"(?i)\b(?:always|never) (?:push|merge)\b")) == [
        frozenset({"always", "never"}),
        frozenset({" "}),
        frozenset({"push", "merge"}),
    ]
    assert requirements(re.compile(r"hooks?|[a-z]+")) == []  # one alternative needs nothing
    assert requirements(re.compile(r"(?:--no-)?verify")) == [frozenset({"verify"})]


def test_folding_agrees_with_ignorecase_on_every_letter():
    checked = 0
    for code in range(0x30000):
        char = chr(code)
        for other in {char.lower(), char.upper(), char.casefold(), char.swapcase()}:
            if len(other) == 1 and re.fullmatch("(?i)" + re.escape(char), other):
                assert fold(char) in fold(other) or fold(other) in fold(char), (char, other)
                checked += 1
    assert checked > 2_000


def _every_pattern(text: str) -> tuple[str, ...]:
    """The screen's answer with every pattern and gate run (what it was before the prefilter)."""
    found: list[str] = []
    gates = injection._compiled_gates()
    for reading in variants(text):
        open_gates: dict[str, bool] = {}
        for family, pattern in injection._compiled():
            if family in found:
                continue
            if (gate := gates.get(family)) is not None:
                open_gates.setdefault(family, gate.search(reading) is not None)
                if not open_gates[family]:
                    continue
            if any(not excused(family, reading, match) for match in pattern.finditer(reading)):
                found.append(family)
    return tuple(found)


def test_the_injection_screen_answers_as_if_every_pattern_ran():
    rng = random.Random(RNG_SEED)
    rows = Path("bench/data/safety_injections.jsonl").read_text().splitlines()
    texts = [json.loads(row)["text"] for row in rows if row.strip()]
    sample = rng.sample(texts, 600)
    # The same texts with their case changed and letters IGNORECASE folds swapped in.
    odd = {"i": "İ", "s": "ſ", "k": "\u212a"}
    sample += [
        "".join(odd.get(c, c) if rng.random() < 0.3 else c.swapcase() for c in t) for t in sample[:300]
    ]
    flagged = 0
    for text in sample:
        expected = _every_pattern(text)
        assert injection._reasons.__wrapped__(text) == expected, text
        flagged += bool(expected)
    assert flagged > 200


def test_the_secret_detector_finds_the_same_spans_as_if_every_pattern_ran(monkeypatch):
    rows = Path("bench/data/safety_secrets.jsonl").read_text().splitlines()
    texts = [json.loads(row)["text"] for row in rows if row.strip()]
    found = [redaction.find_secrets(text) for text in texts]

    class EveryPattern(Prefilter):
        def may_match(self, index, present):
            return True

    monkeypatch.setattr(redaction, "_own_prefilter", lambda: EveryPattern([]))
    assert [redaction.find_secrets(text) for text in texts] == found
    assert sum(bool(spans) for spans in found) > 400


def test_the_string_index_finds_exactly_the_strings_a_text_holds():
    rng = random.Random(RNG_SEED)
    alphabet = "abcs ſ-"
    strings = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(400)}
    index = StringIndex(strings)
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert index.found_in(text) == {string for string in strings if string in text}
