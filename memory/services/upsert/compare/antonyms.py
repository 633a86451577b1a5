"""A quality said by its opposite under a negation (DESIGN.md §4.3): "preview stacks should be
short-lived" ≡ "preview stacks are not meant to live long", "keep PRs small" ≡ "PRs must not be
large". The opposites are ``UPSERT_ANTONYMS``. Pure."""

from __future__ import annotations

from memory.conf import setting
from memory.services.upsert.compare.changes import negated_at
from memory.services.upsert.reading import Reading
from memory.services.upsert.tokens import Token, stem


def _opposites() -> dict[str, set[str]]:
    """A word's stem → the stems of its opposites."""
    found: dict[str, set[str]] = {}
    for first, second in setting("UPSERT_ANTONYMS"):
        found.setdefault(stem(first), set()).add(stem(second))
        found.setdefault(stem(second), set()).add(stem(first))
    return found


def _head(token: Token) -> str:
    """The quality a token names: the word, or the first part of a compound ("short-lived")."""
    return stem(token.surface.lower().split("-")[0])


def opposite_negated(plain: Reading, other: Reading) -> Reading | None:
    """``plain`` read with the other side's words when it names a quality whose opposite the other
    says after a negation of its own, with one negation more than ``plain`` and neither side
    naming both: the quality becomes "not" its opposite. None when the texts are not of that shape."""
    if (other.negations - plain.negations) % 2 != 1:
        return None
    opposites = _opposites()
    plain_heads = {_head(t) for t in plain.tokens}
    other_heads = {_head(t) for t in other.tokens}
    first_negation = next((t.start for t in other.tokens if t.kind == "negation"), None)
    if first_negation is None:
        return None
    for n, token in enumerate(plain.tokens):
        if token.kind not in ("word", "contrast", "identifier"):
            continue
        for opposite in opposites.get(_head(token), ()):
            said = next((t for t in other.tokens if _head(t) == opposite and t.start > first_negation), None)
            if said is None or opposite in plain_heads or _head(token) in other_heads:
                continue
            return negated_at(plain, n, Token(said.key, said.kind, token.surface, token.start, token.end))
    return None
