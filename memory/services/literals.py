"""What text a regular expression cannot match without: a prefilter for the screens' patterns.

The injection screen and the secret detector run a few hundred large patterns over every text an
agent stores, most of them alternations of words in twenty languages. Python's ``re`` tries each
alternative at each position of the text, so a screen costs ~10 ms on a 300-character text although
almost no pattern can match there. :func:`requirements` reads a compiled pattern's syntax tree and
returns what any match of it must contain, as clauses: every clause must have one of its strings in
the text (for ``(?:always|never) (?:push|merge)`` the clauses are ``{always, never}`` and ``{push,
merge}``). A :class:`Prefilter` built on many patterns finds which of all their strings a text holds,
once, and says which patterns can match at all; the others are not run.

It never skips a pattern that could match: strings are compared after the case folding ``re`` uses
for ``IGNORECASE`` (:func:`fold`, applied to both sides whatever the pattern's flags, which can only
keep more), and any construct it does not read (classes of more than a few characters, lookarounds
that forbid, back-references, optional parts) adds no clause. A pattern with no clause always runs.
"""

from __future__ import annotations

import re
import re._casefix as _casefix
import re._constants as _sre
import re._parser as _parser
from collections.abc import Iterable

# Past this many strings a clause or a run of alternatives is dropped: it would cost more to look
# for than the pattern it guards.
MAX_STRINGS = 512
_HEAD = 3

# ``re`` matches a letter to another under IGNORECASE when their simple lowercase forms are the
# same, or when Unicode lists them as extra case forms of one letter (``ſ`` and ``s``, ``K`` and
# the Kelvin sign). ``str.lower`` agrees with ``re`` except for ``İ``, which it writes as two
# characters; so: ``İ`` → ``i``, then ``lower``, then each extra form → the smallest of its class.
_EXTRA_CASES = {low: min((low, *others)) for low, others in _casefix._EXTRA_CASES.items()}
_BEFORE_LOWER = {0x130: "i"}


def fold(text: str) -> str:
    """``text`` with every letter written as the one ``re``'s IGNORECASE takes it for."""
    return text.translate(_BEFORE_LOWER).lower().translate(_EXTRA_CASES)


Clause = frozenset[str]


def requirements(pattern: re.Pattern | str) -> list[Clause]:
    """The clauses any match of ``pattern`` satisfies: each clause holds strings (folded) of which
    the matched text contains at least one. An empty list: nothing is known, run the pattern."""
    if not isinstance(pattern, re.Pattern):
        pattern = re.compile(pattern)
    clauses = []
    for clause in _sequence(list(_parser.parse(pattern.pattern, pattern.flags))):
        folded = {fold(text) for text in clause}
        if any(not text or "\u0307" in text for text in folded):
            continue  # a combining dot could be the second half of a folded İ: not safe to require
        # A string that holds a shorter one of its clause is implied by it.
        clauses.append(frozenset(t for t in folded if not any(o != t and o in t for o in folded)))
    return clauses


def _sequence(items: list) -> list[Clause]:
    """The clauses of a sequence: runs of literal characters (a small class multiplies the run)
    and what each required part contributes."""
    clauses: list[Clause] = []
    run = [""]

    def close() -> None:
        nonlocal run
        if run != [""]:
            clauses.append(frozenset(run))
        run = [""]

    for op, argument in items:
        if op is _sre.LITERAL:
            run = [text + chr(argument) for text in run]
            continue
        chars = _class_chars(op, argument)
        if chars is not None and len(chars) * len(run) <= MAX_STRINGS:
            run = [text + char for text in run for char in chars]
            continue
        if op is _sre.AT:
            continue  # an anchor (\b, ^) takes no character: the run goes on across it
        close()
        clauses.extend(_part(op, argument))
    close()
    return clauses


def _class_chars(op, argument) -> list[str] | None:
    """The characters of a class made only of a few literal characters (``[sz]``, ``[-_ ]``)."""
    if op is _sre.IN and all(kind is _sre.LITERAL for kind, _ in argument) and len(argument) <= 8:
        return [chr(code) for _, code in argument]
    return None


def _part(op, argument) -> list[Clause]:
    if op is _sre.SUBPATTERN:
        return _sequence(argument[-1])
    if op is _sre.ATOMIC_GROUP:
        return _sequence(argument)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
        minimum, _, body = argument
        return _sequence(body) if minimum >= 1 else []
    if op is _sre.ASSERT:  # a lookahead or lookbehind that must hold: its text is there too
        return _sequence(argument[1])
    if op is _sre.BRANCH:
        union: set[str] = set()
        for branch in argument[1]:
            clause = _strongest(_sequence(branch))
            if clause is None:
                return []  # one alternative needs nothing: the whole needs nothing
            union |= clause
            if len(union) > MAX_STRINGS:
                return []
        return [frozenset(union)]
    return []


def _strongest(clauses: list[Clause]) -> Clause | None:
    """The clause that rules out most: the longest shortest string, then the fewest strings."""
    return max(clauses, key=lambda c: (min(map(len, c)), -len(c)), default=None)


class StringIndex:
    """Which of many strings a text contains, looking for each only where the text has its first
    three characters (a few hundred lookups, not one scan of the text per string)."""

    def __init__(self, strings: Iterable[str]):
        strings = set(strings)
        self.short = sorted(s for s in strings if len(s) < _HEAD)
        self.by_head: dict[str, list[str]] = {}
        for string in sorted(s for s in strings if len(s) >= _HEAD):
            self.by_head.setdefault(string[:_HEAD], []).append(string)

    def found_in(self, text: str) -> frozenset[str]:
        """The strings that occur in ``text``, compared as they are (fold both sides first for
        case-insensitive matching)."""
        found = {string for string in self.short if string in text}
        for head in {text[i : i + _HEAD] for i in range(len(text) - _HEAD + 1)}:
            found.update(s for s in self.by_head.get(head, ()) if s in text)
        return frozenset(found)


class Prefilter:
    """Which of many patterns can match a text, decided by the strings their matches need."""

    def __init__(self, patterns: Iterable[re.Pattern]):
        self.clauses = [requirements(pattern) for pattern in patterns]
        self.index = StringIndex(text for clauses in self.clauses for clause in clauses for text in clause)

    def present(self, text: str) -> frozenset[str]:
        """The strings of every pattern's clauses that ``text`` contains (folded)."""
        return self.index.found_in(fold(text))

    def may_match(self, index: int, present: frozenset[str]) -> bool:
        """Whether pattern ``index`` can match a text whose :meth:`present` strings are ``present``."""
        return all(not clause.isdisjoint(present) for clause in self.clauses[index])
