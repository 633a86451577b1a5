"""The upsert decision (DESIGN.md §4.3): is a new memory the same fact as an old one, a changed
fact, or something else? A pure function of both sides — text, similarity, entities, category —
with no database access, so it can be tested on thousands of labeled pairs.

The pipeline, for a new memory against each neighbour of a compatible scope (closest first):
1. ``tokens``: the content-bearing tokens of each text (numbers, versions, names, paths,
   negations, contrast words, ordinary words…), words of obligation and light verbs read as nothing;
2. ``reading``: the role each token plays — its clause (``clauses``), preferred or rejected, verb or
   thing, its place once a passive is read as active — the relation words' frames, what the text
   says of when its rule applies (``conditions``) and which steps it orders (``sequence``);
3. ``compare``: the changes of fact between two readings — a strong token, the polarity, the
   scope, a contrast pair exchanged, a thing replaced, roles exchanged — and the wording that
   differs without changing a fact;
4. the decision:
   - scope: entities of one kind on both sides and disjoint (another project, person, feature…)
     → never the same fact, never superseded (ADD);
   - NOOP (a reinforcement): the same normalized text; or no changed fact and a close text —
     near-identical (cosine ≥ NOOP_COSINE or Jaccard ≥ NOOP_JACCARD), every content-bearing
     token the same at cosine ≥ UPSERT_SAME_TOKENS_COSINE, or a rewording at cosine ≥
     UPSERT_REWORDED_COSINE. The reinforcement keeps the incoming text, so nothing is lost;
   - UPDATE (a changed fact): close (near-identical or cosine ≥ UPDATE_COSINE), same category, a
     changed fact → the new memory supersedes the old one and a curator reviews the pair;
   - otherwise ADD.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memory.conf import setting
from memory.services.language import latin_script
from memory.services.upsert.compare import Change, compare
from memory.services.upsert.tokens import (
    FUNCTION_WORDS,
    Token,
    content_hash,
    content_tokens,
    contrast_words,
    jaccard,
    normalize_text,
    stem,
    token_set,
)

__all__ = [
    "ADD",
    "NOOP",
    "UPDATE",
    "Change",
    "Decision",
    "Side",
    "Token",
    "compare_facts",
    "content_hash",
    "content_tokens",
    "decide",
    "decide_pair",
    "elaborates",
    "highlight_spans",
    "jaccard",
    "normalize_text",
    "same_fact",
    "scope_conflict",
    "scope_key",
    "scope_of",
    "stem",
    "token_set",
    "universal",
]

ADD, UPDATE, NOOP = "ADD", "UPDATE", "NOOP"


@dataclass(frozen=True)
class Side:
    """One memory as the decision sees it."""

    text: str
    category: str = ""
    entities: Mapping[str, frozenset[str]] = field(default_factory=dict)  # entity type → slugs
    ref: object = None  # the memory (or its id) this side stands for


@dataclass
class Decision:
    operation: str
    reason: str
    compared_with: object = None
    cosine: float | None = None
    jaccard: float | None = None
    changed_fact: bool = False
    changes: list[Change] = field(default_factory=list)

    def as_dict(self) -> dict:
        compared = self.compared_with
        compared = getattr(compared, "pk", compared)
        return {
            "operation": self.operation,
            "compared_with": str(compared) if compared is not None else None,
            "cosine": round(self.cosine, 4) if self.cosine is not None else None,
            "jaccard": round(self.jaccard, 4) if self.jaccard is not None else None,
            "reason": self.reason,
            "changed_fact": self.changed_fact,
            "changes": [{"kind": c.kind, "old": c.old, "new": c.new} for c in self.changes],
        }


def scope_of(slugs) -> dict[str, frozenset[str]]:
    """Entity slugs (``type:name``) by type, as the decision compares them."""
    scope: dict[str, set[str]] = {}
    for slug in slugs:
        kind, _, _ = str(slug).partition(":")
        scope.setdefault(kind, set()).add(str(slug))
    return {kind: frozenset(found) for kind, found in scope.items()}


def scope_key(scope: Mapping[str, frozenset[str]]) -> str:
    """The scope as one short string (the unique index that lets the same text live once per scope)."""
    kinds = setting("UPSERT_SCOPE_ENTITY_TYPES")
    key = "|".join(sorted(slug for kind in kinds for slug in scope.get(kind, ())))
    return key if len(key) <= 200 else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def scope_conflict(new: Mapping[str, frozenset[str]], old: Mapping[str, frozenset[str]]) -> str | None:
    """The entity type on which two memories are about different things, if any: both name
    entities of that type and share none ("project: billing vs checkout")."""
    kinds = setting("UPSERT_SCOPE_ENTITY_TYPES")
    for kind in kinds:
        mine, theirs = new.get(kind) or frozenset(), old.get(kind) or frozenset()
        if mine and theirs and not (mine & theirs):
            return f"{kind}: {', '.join(sorted(theirs))} vs {', '.join(sorted(mine))}"
    return None


def compare_facts(old_text: str, new_text: str) -> list[Change]:
    """What a reader would call a different fact between two texts (see ``compare``): strong
    tokens removed, added or replaced, the polarity or the scope changed, a contrast pair
    exchanged, a thing replaced, roles exchanged. Empty when both say the same thing in the same
    roles, however worded."""
    return compare(old_text, new_text).changes


def same_fact(old_text: str, new_text: str) -> bool:
    return not compare_facts(old_text, new_text)


def decide_pair(new: Side, old: Side, cosine: float, *, same_lesson_cosine: float | None = None) -> Decision:
    """The verdict of one new memory against one existing memory. With ``same_lesson_cosine``
    (extraction), a rewording at that cosine or above that changes no fact — only ordinary words
    differ, or a detail is added or left out, but no number, version, name, identifier, path or
    date is replaced (:func:`elaborates`), no contrast word or "all"/"every" is said on one side only
    (:func:`universal`) and no negation, scope or role changes — is the same lesson: NOOP."""
    overlap = jaccard(token_set(new.text), token_set(old.text))
    conflict = scope_conflict(new.entities, old.entities)
    if conflict:  # even the same text: DESIGN.md §4.3, another scope is never a duplicate
        return Decision(ADD, f"different scope ({conflict})", old.ref, cosine, overlap)
    if content_hash(new.text) == content_hash(old.text):
        return Decision(NOOP, "same text", old.ref, cosine, 1.0)
    # The model reads English (memory/services/language.py): between texts in another script its
    # cosine vouches for nothing unless they share words.
    latin = latin_script(new.text) and latin_script(old.text)
    cosine_vouches = latin or overlap >= setting("UPSERT_OTHER_LANGUAGE_JACCARD")
    seen = cosine if cosine_vouches else 0.0
    near_identical = seen >= setting("NOOP_COSINE") or overlap >= setting("NOOP_JACCARD")
    close = near_identical or seen >= setting("UPDATE_COSINE")
    lesson = same_lesson_cosine is not None and seen >= same_lesson_cosine
    far = f"no close memory (closest cosine {cosine:.2f})"
    if not cosine_vouches:
        far = f"no close memory (cosine {cosine:.2f} between texts the model does not read, few words shared)"
    if not (close or lesson) and seen < setting("UPSERT_SAME_TOKENS_COSINE"):
        return Decision(ADD, far, old.ref, cosine, overlap)
    comparison = compare(old.text, new.text)
    changes = comparison.changes
    if not changes:
        if comparison.identical and (near_identical or seen >= setting("UPSERT_SAME_TOKENS_COSINE")):
            wording = "near-identical" if near_identical else "reworded"
            reason = f"{wording}, every content-bearing token the same, in the same roles"
            return Decision(NOOP, reason, old.ref, cosine, overlap)
        # An acronym spelled out on the other side is a word the model cannot match: its cosine
        # undercounts the pair, which is then held to the bar of an identical reading.
        reworded_cosine = setting(
            "UPSERT_SAME_TOKENS_COSINE" if comparison.spelled_out else "UPSERT_REWORDED_COSINE"
        )
        # Below a close text, a rewording that names several things the other does not ("migrations
        # must be reversible" / "… backward compatible with the previous release") is another fact
        # on the same topic: a memory of its own.
        many_things = len(comparison.unmatched_things) > setting("UPSERT_REWORDED_THINGS")
        if close or lesson or (seen >= reworded_cosine and not many_things):
            shown = ", ".join(comparison.reworded[:6]) or "order"
            reason = f"reworded ({shown}), the same content-bearing tokens in the same roles"
            return Decision(NOOP, reason, old.ref, cosine, overlap)
        if many_things and seen >= reworded_cosine:
            things = ", ".join(comparison.unmatched_things[:6])
            return Decision(
                ADD, f"another fact on the topic ({things} said on one side only)", old.ref, cosine, overlap
            )
        return Decision(ADD, far, old.ref, cosine, overlap)
    if lesson and elaborates(changes) and universal(old.text) == universal(new.text):
        return Decision(NOOP, "the same lesson in other words (no fact changed)", old.ref, cosine, overlap)
    if not close:
        return Decision(ADD, far, old.ref, cosine, overlap)
    if old.category and new.category and old.category != new.category:
        reason = f"close text but another category ({old.category} → {new.category})"
        return Decision(ADD, reason, old.ref, cosine, overlap)
    reason = "; ".join(change.describe() for change in changes)
    return Decision(UPDATE, reason, old.ref, cosine, overlap, changed_fact=True, changes=changes)


# Pronouns that quantify as "all" does, with no thing after them ("anyone who touches…", "everyone must").
UNIVERSAL_PRONOUNS = frozenset(["everyone", "everybody", "everything", "anyone", "anybody", "anything"])
# What may follow "all" before the thing it quantifies: "all the hosts", "all of our services".
QUANTIFIED_DETERMINERS = frozenset(
    ["the", "these", "those", "its", "their", "our", "your", "his", "her", "my", "of"]
)


def universal(text: str) -> bool:
    """Whether ``text`` quantifies a thing with "all", "every", "each" or "any" (UPSERT_QUANTIFIERS of
    the kind ``all``; "no" is a negation): the quantifier followed by a word that is not a function
    word, or by a determiner ("all the hosts", "all of the hosts"; not "turns them all into…"). One
    side quantified and the other not, while words were added or left out, is a scope narrowed or
    widened ("all hosts" / "internet-facing hosts", "the Go services" / "every service"), not a
    detail."""
    quantifiers = {
        word for word, kind in setting("UPSERT_QUANTIFIERS").items() if kind == "all" and word != "no"
    }
    words = re.findall(r"[^\W_]+|[^\w\s]", normalize_text(text))
    if any(word in UNIVERSAL_PRONOUNS for word in words):
        return True
    return any(
        word in quantifiers
        and following.isalnum()
        and (following not in FUNCTION_WORDS or following in QUANTIFIED_DETERMINERS)
        for word, following in zip(words, words[1:], strict=False)
    )


def elaborates(changes: Sequence[Change]) -> bool:
    """Whether the differences only reword or add detail without changing a fact (pure): ordinary
    words, or a name, number or identifier only added or only left out. Never one thing replaced by
    another — also when the comparison reads the two as different kinds ("Postmark", a name, left out
    and "SendGrid", an identifier, added) —, never a contrast word on one side only ("optional",
    "required": UPSERT_CONTRAST_GROUPS, the prepositions of UPSERT_PREPOSITION_CONTRASTS aside), and
    never a negation, a scope, a role or an order."""
    polar = contrast_words() - set(setting("UPSERT_PREPOSITION_CONTRASTS"))
    left_out = added = False
    for change in changes:
        if change.kind in ("negation", "order", "role", "scope"):
            return False
        if change.kind == "term":
            words = {word.lower() for phrase in (*change.old, *change.new) for word in phrase.split()}
            if words & polar:
                return False
            # Many words differ: the same thing said another way. One or two swapped for one or two
            # ("pnpm" → "yarn", "platform team" → "payments team") is a changed fact.
            if change.old and change.new and len(change.old) <= 2 and len(change.new) <= 2:
                return False
            continue
        if change.old and change.new:
            return False
        left_out, added = left_out or bool(change.old), added or bool(change.new)
    return not (left_out and added)


def decide(
    new: Side, neighbours: Sequence[tuple[Side, float]], *, same_lesson_cosine: float | None = None
) -> Decision:
    """The upsert verdict of ``new`` against its nearest memories (each with its cosine), closest
    first. The first NOOP wins; else the closest UPDATE; else ADD (explained by the closest)."""
    verdicts = [
        decide_pair(new, old, cosine, same_lesson_cosine=same_lesson_cosine)
        for old, cosine in sorted(neighbours, key=lambda n: -n[1])
    ]
    for operation in (NOOP, UPDATE):
        found = next((v for v in verdicts if v.operation == operation), None)
        if found is not None:
            return found
    if verdicts:
        return verdicts[0]
    return Decision(ADD, "no similar memory")


def highlight_spans(text: str, other: str) -> list[tuple[str, bool]]:
    """``text`` cut into pieces, each flagged when it holds a content-bearing token that ``other``
    lacks, or one whose role changed (a swap: "use pnpm, not npm" against "use npm, not pnpm"):
    what the changed-fact review shows side by side."""
    mine, theirs = content_tokens(text), content_tokens(other)
    missing = Counter(t.key for t in mine) - Counter(t.key for t in theirs)
    moved = compare(other, text).new_keys
    pieces, cursor = [], 0
    for token in mine:
        flagged = token.key in moved or missing[token.key] > 0
        if flagged and token.start >= cursor:
            if missing[token.key] > 0:
                missing[token.key] -= 1
            if token.start > cursor:
                pieces.append((text[cursor : token.start], False))
            pieces.append((text[token.start : token.end], True))
            cursor = token.end
    if cursor < len(text):
        pieces.append((text[cursor:], False))
    return pieces
