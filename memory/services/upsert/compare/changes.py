"""What changed between two readings: the kinds of change, and the comparison they make up."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from memory.services.upsert.reading import Reading
from memory.services.upsert.tokens import Token

KIND_ORDER = [
    "negation",
    "scope",
    "number",
    "version",
    "port",
    "date",
    "time",
    "path",
    "identifier",
    "name",
    "term",
    "role",
    "order",
]


@dataclass
class Change:
    kind: str
    old: list[str]
    new: list[str]

    def describe(self) -> str:
        old, new = ", ".join(self.old) or "—", ", ".join(self.new) or "—"
        if self.kind == "order":
            return f"order changed: {old} → {new}"
        if self.kind == "role":
            return (
                f"roles exchanged: {old} ↔ {new}"
                if self.new
                else f"role changed: {old} moved to another clause"
            )
        if self.kind == "scope":
            if self.new and not self.old:
                return f"scope changed: {new} added"
            return f"scope changed: {old} removed" if not self.new else f"scope changed: {old} → {new}"
        if self.kind == "negation":
            return (
                "negation added"
                if self.new and not self.old
                else "negation removed"
                if self.old and not self.new
                else f"negation changed: {old} → {new}"
            )
        if not self.old:
            return f"{self.kind} added: {new}"
        if not self.new:
            return f"{self.kind} removed: {old}"
        return f"{self.kind} changed: {old} → {new}"


@dataclass
class Comparison:
    changes: list[Change] = field(default_factory=list)
    identical: bool = False  # every content-bearing token the same, ordinary words included
    reworded: list[str] = field(default_factory=list)  # ordinary words that differ without changing a fact
    unmatched_things: list[str] = field(
        default_factory=list
    )  # of those, the things (nouns) one side only names
    old_keys: set[str] = field(default_factory=set)  # tokens whose role changed, to highlight
    new_keys: set[str] = field(default_factory=set)
    spelled_out: bool = False  # an acronym spelled out on the other side (the cosine undercounts it)
    allowed_alone: bool = False  # "V-only" read as the other side's "V but not W" (exclusive.py)
    same_order: bool = False  # both order some steps alike and none the other way (sequence.py)


def surfaces(reading: Reading, keys, *, kinds=None) -> list[str]:
    shown: list[str] = []
    for token in reading.tokens:
        if token.key in keys and (kinds is None or token.kind in kinds) and token.surface not in shown:
            shown.append(token.surface)
    return shown


def first_surface(reading: Reading, key: str) -> str:
    return next((t.surface for t in reading.tokens if t.key == key), key)


def in_order(reading: Reading, keys) -> list[str]:
    keys = set(keys)
    ordered: list[str] = []
    for token in reading.tokens:
        if token.key in keys and token.key not in ordered:
            ordered.append(token.key)
    return ordered


def negated_at(reading: Reading, index: int, token: Token) -> Reading:
    """``reading`` with its token at ``index`` read as ``token`` and one negation more: how a side
    is read in the other's words ("read-only" as "… not write", "short-lived" as "not … long")."""
    tokens = list(reading.tokens)
    tokens[index] = token
    return replace(reading, tokens=tuple(tokens), negations=reading.negations + 1)
