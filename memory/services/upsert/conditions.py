"""What a text says about when its rule applies (DESIGN.md §4.3): "only" before a condition ("ships
only after QA signs off"), a phrase that bounds the rule in time ("during business hours"), and the
clauses opened by "if", "when", "unless" — a condition said on one side only narrows or widens the
rule. Pure: functions of the text's items.
"""

from __future__ import annotations

from memory.services.upsert.parts import PREPOSITIONS, phrase
from memory.services.upsert.tokens import DETERMINERS, FUNCTION_WORDS, _words, stem, word_setting

# What "only" may restrict besides a thing: a condition ("only after review", "only if CI is green").
CONDITIONS = _words("after if when once with via through upon following")


def conditional_only(items, clause_of_item) -> bool:
    """Does "only" come before a condition word, in its clause or at the start of the next, or
    right before "then" ("look in the autosave folder first, and only then open a bug")?"""
    return any(
        word == "only"
        and (
            (index + 1 < len(items) and items[index + 1][1] == "then")
            or any(
                items[later][1] in CONDITIONS
                and clause_of_item[later] in (clause_of_item[index], clause_of_item[index] + 1)
                for later in range(index + 1, len(items))
            )
        )
        for index, (_, word, _) in enumerate(items)
    )


def time_bounds(items) -> frozenset[str]:
    """The stems of the words of each phrase opened by ``UPSERT_CONDITION_PREPOSITIONS`` ("during
    [business hours]", "outside [the maintenance window]")."""
    found: set[str] = set()
    opening = word_setting("UPSERT_CONDITION_PREPOSITIONS")
    for index, (group, word, _) in enumerate(items):
        if group != "word" or word not in opening:
            continue
        start = index + 1
        while start < len(items) and items[start][1] in DETERMINERS | {"of"}:
            start += 1
        found.update(stem(w) for w in phrase(items, start, 1))
    return frozenset(found)


CONDITIONAL_WORDS = _words("if when whenever unless")
# Words that say when a rule applies, any of which may restate another's condition ("when the phone is
# online again" / "as soon as it regains connectivity").
CIRCUMSTANCE_WORDS = CONDITIONAL_WORDS | _words("once soon after before until while upon during")


def conditional_words(items) -> frozenset[str]:
    """The stems of the content words of each clause opened by a conditional word, up to the next
    mark or clause word ("when [a partner has production access]")."""
    found: set[str] = set()
    ends = word_setting("UPSERT_CLAUSE_WORDS")
    for index, (group, word, _) in enumerate(items):
        if group != "word" or word not in CONDITIONAL_WORDS:
            continue
        for group_after, after, _ in items[index + 1 :]:
            if group_after == "mark" or after in ends:
                break
            if after not in FUNCTION_WORDS | DETERMINERS | PREPOSITIONS:
                found.add(stem(after))
    return frozenset(found)
