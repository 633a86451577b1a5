"""What a word is where it stands (DESIGN.md §4.3): a verb or an adverb — the wording of a rule — or
a thing the rule is about, and whether it says something of a thing. Guessed from its neighbours
and its ending, with a maintained lexicon's veto (``lexicon``); no tagger."""

from __future__ import annotations

from memory.services.upsert.lexicon import (
    adjective_only,
    base_verb,
    may_be_verb,
    may_qualify,
    never_a_thing,
    parts_of_speech,
    verb_lemma,
)
from memory.services.upsert.tokens import DETERMINERS, FUNCTION_WORDS, _words, word_setting

AUXILIARIES = _words(
    "do does did must should will would can could may might shall "
    "have has had don't doesn't didn't isn't aren't wasn't weren't won't wouldn't shouldn't mustn't "
    "cannot can't to never always please"
)
ARTICLES = _words("the a an this that these those its their our your his her my every each all any some")
HAVE = _words("have has had")
BE = _words("is are was were be been being am get gets got gotten getting")
PARTICLES = _words("up down off out away back")
PRONOUNS = _words("it they this that these those")  # a thing referred to, not a person
OBJECTS = _words("it them us him her me you")  # after a verb: "add them to v2"
# Prepositions before a place or a state ("in staging", "on prod"), never before a gerund that acts.
PLACE_PREPOSITIONS = _words("in on at into onto from of within across via")
PREPOSITIONS = _words(
    "in on at for with by from to into onto of about via through during within without across along "
    "behind under over above below between among against per than when if while until after before"
)


def is_verbal(items, item: int, item_tokens, tokens, *, any_kind: bool = False) -> bool:
    """Is the word at ``item`` a verb or an adverb (the wording) rather than a thing (the fact)?
    Only words are, unless ``any_kind``."""
    group, word, _ = items[item]
    if group != "word" or not word.isalpha():
        return False
    if not any_kind and any(tokens[n].kind != "word" for n in item_tokens.get(item, ())):
        return False
    previous = items[item - 1][1] if item and items[item - 1][0] == "word" else ""
    following = items[item + 1] if item + 1 < len(items) else ("mark", "", 0)
    first_of_clause = not previous
    if previous and any(tokens[n].surface[:1].isupper() for n in item_tokens.get(item, ())):
        return False  # a name mid-sentence, even one the synonyms made a word: "written to Postgres, which…"
    if previous in PLACE_PREPOSITIONS and any(
        tokens[n].kind == "contrast" for n in item_tokens.get(item, ())
    ):
        return False  # "in staging", "on prod": a place, not a verb in -ing
    if _after_relative_pronoun(items, item, word):
        return True  # "API keys that live for a long time", "hosts which serve one tenant"
    if previous in DETERMINERS and previous not in ("it", "they", "we", "you", "he", "she", "i"):
        return False  # "the platform team"
    next_word = following[1] if following[0] == "word" else ""
    if word.endswith("ly") and len(word) > 4:
        # "nightly builds", "weekly reports": an adjective before the thing it qualifies.
        before_thing = next_word and next_word not in FUNCTION_WORDS | PREPOSITIONS | DETERMINERS
        return not (before_thing and may_qualify(word))
    if word in PARTICLES:
        return True
    if previous == "to" and not may_be_verb(word):
        return False  # "belongs to designers": a thing after a preposition, not an infinitive
    possessive = previous in HAVE and not (word.endswith(("ed", "en")) or verb_lemma(word, participle=True))
    if (previous in AUXILIARIES and not possessive) or previous in BE and word.endswith(("ed", "en", "ing")):
        return True  # not "has admin access": "has" owns a thing there
    if previous in BE and next_word in PREPOSITIONS and verb_lemma(word, participle=True):
        return True  # an irregular participle: "secrets are read from Vault", "logs are kept in S3"
    if word.endswith("ing") and _subject_in_ing(word, previous, next_word):
        return False  # "engineering schedules it", "Testing takes an hour": a noun before its verb
    if word.endswith(("ing", "ed")) and len(word) > 4:
        return True
    if first_of_clause and (
        next_word in DETERMINERS | PARTICLES | PREPOSITIONS | OBJECTS
        or (next_word.endswith("ing") and len(next_word) > 4 and may_be_verb(word))
    ):
        return True  # an imperative: "drain the node", "migrate from MySQL", "revert using…"
    if (
        first_of_clause
        and never_a_thing(word)
        and any(tokens[n].kind == "contrast" for n in item_tokens.get(item, ()))
    ):
        return True  # a contrast word English has only as a verb, opening its clause: "Remove stale flags"
    if first_of_clause and base_verb(word) and any(tokens[n].strong for n in item_tokens.get(item + 1, ())):
        return True  # an imperative before a name or an identifier: "raise max_connections"
    if first_of_clause and base_verb(word) and adjective_only(next_word):
        return True  # an imperative before the quality of its object: "Store large binaries in LFS"
    if previous in word_setting("UPSERT_LIGHT_VERBS") or previous in word_setting("UPSERT_PREFERENCE_VERBS"):
        return False  # the object of "use", "prefer"
    silent = word_setting("UPSERT_MODAL_WORDS") | word_setting("UPSERT_LIGHT_VERBS")
    after_thing = previous and previous not in FUNCTION_WORDS | PREPOSITIONS | silent
    after_next = items[item + 2][1] if item + 2 < len(items) and items[item + 2][0] == "word" else ""
    if next_word in RELATIVE_PRONOUNS and (after_next in DETERMINERS or after_next in OBJECTS):
        return False  # a thing and its relative clause: "drops traffic [that the auth service] tagged"
    if after_thing and (next_word in DETERMINERS or next_word in PARTICLES):
        return True  # "the alert fires at", "the team owns the"
    if after_thing and word in PREDICATE_VERBS:
        return True  # "old fields stay flagged", "unfinished features remain behind a flag"
    third_person = word.endswith("s") and not word.endswith(("ss", "us", "is"))
    next_strong = bool(next_word) and any(tokens[n].strong for n in item_tokens.get(item + 1, ()))
    # A contrast word the lexicon has as a verb, after its subject: "the proxy drops traffic".
    acting = any(
        tokens[n].kind == "contrast" for n in item_tokens.get(item, ())
    ) and "VERB" in parts_of_speech(word)
    return bool(after_thing and third_person and (next_word in PREPOSITIONS or next_strong or acting))


def _subject_in_ing(word: str, previous: str, next_word: str) -> bool:
    """A word in -ing English also has as a noun ("engineering", "testing"), opening its clause
    or after "and", right before a verb in -s: the subject of that verb."""
    # Opening its clause, or after a noun that qualifies it ("data engineering owns…").
    opens = not previous or previous in ("and", "or", "but", "while") or not may_be_verb(previous)
    verb_next = next_word.endswith("s") and not next_word.endswith(("ss", "us", "is"))
    return opens and verb_next and "NOUN" in parts_of_speech(word) and "VERB" in parts_of_speech(next_word)


RELATIVE_PRONOUNS = _words("that which who")


def _after_relative_pronoun(items, item: int, word: str) -> bool:
    """A verb right after a relative pronoun that follows a noun: "keys that live", "the team who
    owns it" ("deploy that build": "that" after a verb is a determiner)."""
    before = item - 2
    if before >= 1 and items[before][1] == ",":
        before -= 1  # "…to Postgres, which replicates them"
    if item < 2 or items[item - 1][1] not in RELATIVE_PRONOUNS or items[before][0] != "word":
        return False
    noun = items[before][1]
    noun_tags = parts_of_speech(noun)
    return (not noun_tags or "NOUN" in noun_tags) and may_be_verb(word)


PREDICATE_VERBS = _words("stay stays stayed remain remains remained become becomes became keep keeps kept")


def qualifies(items, item: int) -> bool:
    """Does the word at ``item`` say something of a thing? Before a content word ("production
    repositories", "the QA team"), after "is", "stays" or a modal ("is optional", "may hit"), after
    a preposition ("in production", "to staging"), or a noun after a determiner ("the month-end
    close"), or joined by "and"/"or" to a word that does ("in staging and production") — but not
    the head of "the end of", a comparative before "than", an adverb closing a clause ("scanned
    first", "30 days old") or a verb after its subject ("deploys stop at 3pm")."""
    previous = items[item - 1][1] if item and items[item - 1][0] == "word" else ""
    following = items[item + 1] if item + 1 < len(items) else ("mark", "", 0)
    next_word = following[1] if following[0] == "word" else ""
    if previous in BE or previous in AUXILIARIES or previous in PREDICATE_VERBS or previous in PREPOSITIONS:
        return True
    if next_word and next_word not in FUNCTION_WORDS and next_word not in PREPOSITIONS:
        return True
    if previous in ("and", "or") and item >= 2 and items[item - 2][0] == "word":
        return qualifies(items, item - 2)  # "in staging and production": as its partner does
    return previous in ARTICLES and next_word != "of"


# Words that open a subordinate clause and are never part of a noun phrase ("deployed by Tom once
# Priya has reviewed them": the agent is Tom).
SUBORDINATORS = _words("once when whenever because unless if")


def phrase(items, index: int, step: int, limit: int = 3) -> list[str]:
    """The content words next to ``index`` going one way (``step`` 1 or -1), at most ``limit``,
    until a mark, a function word, a determiner or a word that opens a subordinate clause: a noun
    phrase's words ("all [partner API keys]", "[admin] actions")."""
    words = []
    while 0 <= index < len(items) and len(words) < limit:
        group, word, _ = items[index]
        if (
            group != "word"
            or word in FUNCTION_WORDS
            or word in DETERMINERS
            or word in PREPOSITIONS
            or word in SUBORDINATORS
        ):
            break
        words.append(word)
        index += step
    return words
