"""Where a text's clauses begin and end (DESIGN.md §4.3): at punctuation, at clause words (while,
whereas, but, then, if…) and at "and"/"or" before a new subject and its verb — but not after a short
phrase fronted before its clause ("For payroll-service, run…", "Before opening a PR, run…") nor after
a label opening the text ("fraud-model: the risk team gets the alerts"), which belong to the clause
that follows. Pure: a function of the text's items.
"""

from __future__ import annotations

from memory.services.upsert.lexicon import parts_of_speech
from memory.services.upsert.parts import BE, OBJECTS, PREPOSITIONS
from memory.services.upsert.tokens import DETERMINERS, FUNCTION_WORDS, word_setting


def clauses(items: list[tuple[str, str, int]]) -> tuple[list[int], frozenset[int], frozenset[int]]:
    """The clause of each item: a new clause after a mark, at a clause word, and at "and"/"or"
    followed by a determiner or by three content words and a verb before the next mark. And the items
    of the phrases fronted before their clause, which belong to it, and of a label opening the text,
    which belongs to the clause after it but has no place in its order."""
    clause_words = word_setting("UPSERT_CLAUSE_WORDS")
    clause, result, opened, fronted, labels = 0, [], 0, set(), set()
    for index, (group, word, _) in enumerate(items):
        if word == "," and _fronted_phrase(items[opened:index], clause_words):
            fronted.update(range(opened, index))
            opened = index + 1
        elif word == ":" and not opened and _label(items[:index]):
            labels.update(range(index))
            opened = index + 1
        elif (
            group == "mark"
            and not _opens_relative(items, index)
            or word in clause_words
            and not (word == "then" and index and items[index - 1][1] == "and")
            or word in ("and", "or")
            and _starts_clause(items, index)
        ):
            clause += 1
            opened = index + 1
        result.append(clause)
    return result, frozenset(fronted), frozenset(labels)


FRONTED_WORDS = 4  # content words at most in a phrase fronted before its clause
LABEL_WORDS = 3  # words at most in a label before a colon opening a text


def _label(segment) -> bool:
    """Is ``segment``, opening the text before a colon, a label of what follows ("fraud-model: the
    risk team gets the alerts", "audit-service logs: JSON only")? It belongs to the clause after it."""
    words = [word for group, word, _ in segment if group == "word"]
    return 0 < len(words) <= LABEL_WORDS and len(words) == len(segment)


def _fronted_phrase(segment, clause_words) -> bool:
    """Is ``segment``, ended by a comma, a short phrase opened by a preposition and put before its
    clause ("For payroll-service, run the tests…", "Before opening a PR, run…")? It belongs to the
    clause that follows, as it would at the end of it. A condition ("if", "when") is a clause."""
    words = [word for group, word, _ in segment if group == "word"]
    return (
        bool(segment)
        and segment[0][0] == "word"
        and words[0] in PREPOSITIONS
        and words[0] not in clause_words
        and sum(word not in FUNCTION_WORDS for word in words[1:]) <= FRONTED_WORDS
    )


def _opens_relative(items, index: int) -> bool:
    """Is the mark a comma before "which" or "who"? What follows says more of the thing before it
    ("…holds the sellers' payouts, which are calculated in GBP"): the same clause."""
    return items[index][1] == "," and index + 1 < len(items) and items[index + 1][1] in ("which", "who")


def _starts_clause(items, index: int) -> bool:
    following = []
    for group, word, _ in items[index + 1 :]:
        if group == "mark":
            break
        following.append(word)
    if following and following[0] in DETERMINERS:
        return True
    # "…and PMs review them", "…and engineering schedules it": a subject, its verb and its object.
    if len(following) >= 3 and following[2] in OBJECTS and "VERB" in parts_of_speech(following[1]):
        return True
    # Three content words and a verb ("…and Keycloak is the identity provider"): not a list of things
    # ("…and IAM modules in infra-terraform").
    content = [word for word in following if word not in FUNCTION_WORDS]
    return len(content) >= 3 and (
        any(word in BE for word in following) or any("VERB" in parts_of_speech(word) for word in content)
    )


def phrases_opened_by(items, fronted: frozenset[int], words) -> set[int]:
    """The fronted items whose phrase opens with one of ``words``."""
    found, opener = set(), None
    for index in sorted(fronted):
        if index - 1 not in fronted:
            opener = items[index][1]
        if opener in words:
            found.add(index)
    return found
