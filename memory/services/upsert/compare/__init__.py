"""Is it another fact? Two readings compared (DESIGN.md §4.3).

A changed fact needs a real change of content:
- a strong token (number, version, port, date, time, path, identifier, name) added, removed or
  replaced — an acronym and its words ("CAB" ≡ "change advisory board") are the same token;
- the polarity of the rule flipped: another count of negations (a contrastive "not X",
  "instead of X", "rather than X", "X is deprecated" and "don't", "never", "avoid" count alike, so
  "not X" ≡ "instead of X" and "don't" ≡ "never" keep the polarity);
- the scope narrowed or widened ("only" on one side, a quantifier against a qualifier, a bound in
  time: "during business hours");
- a contrast pair exchanged (up → down, before → after, staging → production);
- a thing replaced by another: nouns on both sides, a few words ("the platform team" → "the
  payments team") — verbs and adverbs replaced are a rewording ("fires" → "triggers");
- roles exchanged: two tokens trading their polarity role (preferred ↔ rejected), their clause
  ("staging shared, production dedicated" → the reverse), what follows a relation word (from/to,
  before/after, then), or their order in a clause once a passive is read as active.
Reordering whole clauses, the passive voice and rewording are none of these; nor is an action
allowed alone said as "V but not W" ("read-only" ≡ "can read but not write": ``exclusive``) or a
quality said by its opposite under a negation ("short-lived" ≡ "not … long": ``antonyms``).
"""

from __future__ import annotations

from memory.services.upsert.compare.antonyms import opposite_negated
from memory.services.upsert.compare.changes import KIND_ORDER, Change, Comparison
from memory.services.upsert.compare.exclusive import only_as_but_not
from memory.services.upsert.compare.roles import compare_roles
from memory.services.upsert.compare.strong import compare_strong, spelled_out
from memory.services.upsert.compare.words import compare_scope, compare_words
from memory.services.upsert.reading import read
from memory.services.upsert.sequence import same_order

__all__ = ["Change", "Comparison", "compare"]


def compare(old_text: str, new_text: str) -> Comparison:
    old, new = read(old_text), read(new_text)
    result = Comparison()
    # "read-only for the BI team" ≡ "the BI team can read it but not write to it".
    narrowed_old = only_as_but_not(old, old_text, new, new_text)
    narrowed_new = None if narrowed_old else only_as_but_not(new, new_text, old, old_text)
    old, new = narrowed_old or old, narrowed_new or new
    result.allowed_alone = bool(narrowed_old or narrowed_new)
    # "should be short-lived" ≡ "not meant to live long".
    if not result.allowed_alone:
        opposed_old = opposite_negated(old, new)
        opposed_new = None if opposed_old else opposite_negated(new, old)
        old, new = opposed_old or old, opposed_new or new
    # An acronym on one side spelled out on the other ("PR" / "pull request", "FCM" / "Firebase
    # Cloud Messaging", "MFA" / "multi-factor authentication"): neither side's words are a change.
    spelled_old, spelled_new = spelled_out(old, new), spelled_out(new, old)
    explained_old = spelled_old[0] | spelled_new[1]
    explained_new = spelled_new[0] | spelled_old[1]
    # A name at the start of the other text's sentence may have been read as a light verb ("Act
    # stores…" / "…, and Act stores…"): not a removed name.
    explained_old |= new.silenced
    explained_new |= old.silenced
    result.spelled_out = bool(spelled_old[0] or spelled_new[0])
    result.same_order = same_order(old.sequence, new.sequence)
    compare_strong(old, new, result, explained_old, explained_new)
    compare_scope(old, new, result)
    compare_words(old, new, result, explained_old, explained_new)
    compare_roles(old, new, result)
    result.changes.sort(key=lambda c: KIND_ORDER.index(c.kind) if c.kind in KIND_ORDER else len(KIND_ORDER))
    return result
