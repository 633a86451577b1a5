"""An action allowed alone, said two ways (DESIGN.md §4.3): "the replica is read-only for the BI team"
≡ "the BI team can read from the replica but not write to it", "the audit log is append-only" ≡
"entries may be appended but never edited". Pure."""

from __future__ import annotations

import re

from memory.services.upsert.compare.changes import negated_at
from memory.services.upsert.reading import Reading
from memory.services.upsert.tokens import Token, stem

ONLY_COMPOUND = re.compile(r"(?i)^([a-z]+)-only$")


def only_as_but_not(narrow: Reading, narrow_text: str, other: Reading, other_text: str) -> Reading | None:
    """``narrow`` read as the other's "V but not W" when it says "V-only" and the other says, with
    one negation more and no "only" of its own, the same verb V and then "but" and a negation: the
    compound's "only" becomes that negation. None when the texts are not of that shape."""
    compound = next(
        (n for n, t in enumerate(narrow.tokens) if t.kind == "scope" and ONLY_COMPOUND.match(t.surface)), None
    )
    if compound is None or any(t.kind == "scope" for t in other.tokens):
        return None
    if (other.negations - narrow.negations) % 2 != 1:
        return None
    verb = stem(ONLY_COMPOUND.match(narrow.tokens[compound].surface)[1].lower())
    but = re.search(r"(?i)\bbut\b", other_text)
    if but is None:
        return None
    said_before = any(stem(t.key) == verb and t.end <= but.start() for t in other.tokens)
    negated_after = any(t.kind == "negation" and t.start >= but.end() for t in other.tokens)
    if not (said_before and negated_after):
        return None
    only = narrow.tokens[compound]
    return negated_at(narrow, compound, Token("not", "negation", only.surface, only.start, only.end))
