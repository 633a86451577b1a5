"""Which step a text says comes first (DESIGN.md §4.3): "legal reviews the license before
engineering adds the dependency", "engineering adds the dependency first and legal reviews the
license afterwards", "drain the node, then upgrade the kubelet", "upgrade the kubelet only after the
node is drained". Read as pairs (earlier, later) of the keys of the things each step names, so that
two texts putting the same steps in the other order differ, however the order is worded. Pure: a
function of the reading's items and tokens.
"""

from __future__ import annotations

from memory.services.upsert.tokens import Token, stem

# Words that order two steps (their stems): one side of them comes first.
BEFORE, AFTER = stem("before"), stem("after")
# A clause holding one of these comes after the clause before it ("…, then build", "… afterwards").
LATER_WORDS = frozenset({"then", "afterwards", "afterward", "later", "next", "second", "last"})
FIRST_WORDS = frozenset({"first", "firstly"})
ORDER_KEYS = frozenset(
    {BEFORE, AFTER} | {stem(word) for word in {"until", "prior", *LATER_WORDS, *FIRST_WORDS}}
)


def sequence(
    items,
    clause_of_item: list[int],
    at: list[int],
    tokens: tuple[Token, ...],
    position: tuple[float, ...],
    steps: list[bool],
) -> frozenset[tuple[str, str]]:
    """(earlier key, later key) for every two things the text puts in an order. ``steps``: per
    token, whether it may name a step (a thing, not a verb; not a label or a fronted setting)."""
    things: dict[int, list[int]] = {}  # clause → its step tokens
    for n, token in enumerate(tokens):
        if steps[n] and token.kind not in ("negation", "scope") and stem(token.key) not in ORDER_KEYS:
            things.setdefault(clause_of_item[at[n]], []).append(n)
    clauses = sorted(set(clause_of_item))
    pairs: set[tuple[str, str]] = set()

    def keys(ns) -> set[str]:
        return {tokens[n].key for n in ns}

    def clause_before(clause: int) -> list[int]:
        earlier = [c for c in clauses if c < clause and things.get(c)]
        return things[earlier[-1]] if earlier else []

    def clause_after(clause: int) -> list[int]:
        later = [c for c in clauses if c > clause and things.get(c)]
        return things[later[0]] if later else []

    def order(earlier, later) -> None:
        pairs.update((a, b) for a in keys(earlier) for b in keys(later) if a != b)

    # "A before B", "B after A", in one clause (a fronted "Before B, A" read where it would stand).
    for n, token in enumerate(tokens):
        word = stem(token.key)
        if word not in (BEFORE, AFTER) or token.kind not in ("contrast", "word"):
            continue
        clause = clause_of_item[at[n]]
        ahead = [m for m in things.get(clause, ()) if position[m] < position[n]] or clause_before(clause)
        behind = [m for m in things.get(clause, ()) if position[m] > position[n]] or clause_after(clause)
        if word == BEFORE:
            order(ahead, behind)
        else:
            order(behind, ahead)
    # "A first, then B", "A, then B", "A first and B afterwards".
    marked_first = {clause_of_item[at[n]] for n, t in enumerate(tokens) if stem(t.key) in FIRST_WORDS}
    for index, (group, word, _) in enumerate(items):
        if group == "word" and word in LATER_WORDS:
            clause = clause_of_item[index]
            firsts = [c for c in marked_first if c < clause]
            earlier = [m for c in firsts for m in things.get(c, ())] or clause_before(clause)
            order(earlier, things.get(clause, []))
    return frozenset(pair for pair in pairs if (pair[1], pair[0]) not in pairs)


def reversed_steps(old: frozenset, new: frozenset) -> list[tuple[str, str]]:
    """The pairs one text orders one way and the other the other way."""
    return sorted((a, b) for a, b in old if (b, a) in new)  # each side's pairs go one way only


def same_order(one: frozenset, other: frozenset) -> bool:
    """Do both texts order some steps alike, and none the other way?"""
    return bool(one & other) and not reversed_steps(one, other)
