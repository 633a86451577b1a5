"""What English allows a word to be, from a maintained lexicon (LemmInflect's, inside its wheel:
nothing is fetched at run time). The reading guesses a word's part from its neighbours; the
lexicon vetoes the guesses English does not allow:
- a word that can only be a verb or an adverb ("prefer", "choose", "sent", "lacks") is never a
  thing that another thing replaced;
- a word in -ly that can be an adjective ("nightly", "weekly"), before a content word, qualifies
  that thing ("nightly builds") instead of being the adverb of a verb ("restart automatically");
- a verb's base form opening a clause before a name or an identifier is an imperative ("Raise
  max_connections", "Enable CSP reporting"), not a contrast word qualifying a thing.
Words it does not know (jargon, product names) keep the reading's guess.
"""

from __future__ import annotations

from functools import lru_cache

WORDING_TAGS = frozenset({"VERB", "AUX", "ADV"})


def load() -> None:
    """Read the lexicon's tables now (~0.4 s) rather than at the first word looked up
    (``memory/services/warmup.py``)."""
    from lemminflect import getAllInflections, getAllLemmas

    getAllLemmas("runs")
    getAllInflections("run", upos="VERB")


@lru_cache(maxsize=16384)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """The word form's lemmas by universal POS tag; empty when the lexicon lacks it."""
    if not word.isalpha():
        return {}
    from lemminflect import getAllLemmas

    return getAllLemmas(word.lower())


def parts_of_speech(word: str) -> frozenset[str]:
    """The universal POS tags a word form can take; empty when the lexicon lacks it."""
    return frozenset(_lemmas(word))


def base_verb(word: str) -> bool:
    """Is the word a verb's base form ("raise", "enable", "route"; not "staging", "logs")?"""
    return word.lower() in _lemmas(word).get("VERB", ())


def may_be_verb(word: str) -> bool:
    """Can English use the word as a verb? Unknown words may; "data" and "designers" cannot."""
    tags = parts_of_speech(word)
    return not tags or "VERB" in tags


def never_a_thing(word: str) -> bool:
    """A known word that can only be a verb or an adverb, whatever its place. Not a form in -ing,
    which English also uses as a noun ("billing", "shipping"), and not an adjective, which names a
    kind of thing ("the legal team" is not "the financial team")."""
    tags = parts_of_speech(word)
    return bool(tags) and tags <= WORDING_TAGS and not word.lower().endswith("ing")


def may_qualify(word: str) -> bool:
    """Can the word be an adjective (or a noun) — "nightly", "weekly" — and not only an adverb?
    Unknown words may."""
    tags = parts_of_speech(word)
    return not tags or bool(tags - WORDING_TAGS)


def adjective_only(word: str) -> bool:
    """A word English has as an adjective and never as a verb ("large", "old", "raw")."""
    tags = parts_of_speech(word)
    return "ADJ" in tags and "VERB" not in tags


def adverb_in_ly(word: str) -> bool:
    """A word in -ly English has as an adverb ("hourly", "monthly", "directly")."""
    return word.endswith("ly") and "ADV" in parts_of_speech(word)


def verb_form(word: str) -> bool:
    """A verb's participle or form in -ing ("changed", "failing"), not a noun ("interns")."""
    return word.lower().endswith(("ed", "ing")) and "VERB" in parts_of_speech(word)


@lru_cache(maxsize=16384)
def verb_lemma(word: str, *, participle: bool = False) -> str:
    """The lemma of a word English can use as a verb ("writes" → write), else "". With
    ``participle``, only a past participle ("written", "reviewed")."""
    lemmas = _lemmas(word).get("VERB", ())
    if not lemmas:
        return _guessed_lemma(word, participle=participle)
    if participle:
        from lemminflect import getAllInflections

        forms = getAllInflections(lemmas[0], upos="VERB")  # a regular verb's VBN is its VBD
        return lemmas[0] if word.lower() in forms.get("VBN", forms.get("VBD", ())) else ""
    return lemmas[0]


GUESSED_VERB_LENGTH = 6  # letters at least of a word the lexicon lacks, for its ending to say "verb"


def _guessed_lemma(word: str, *, participle: bool) -> str:
    """A verb the lexicon lacks (jargon: "unsubscribes", "deduped", "autoscaled"), guessed from its
    ending: -ed (a participle) or, when no participle is asked for, -es; else ""."""
    word = word.lower()
    if not word.isalpha() or len(word) < GUESSED_VERB_LENGTH or parts_of_speech(word):
        return ""
    if word.endswith("ed"):
        return word[:-1]  # "unsubscribed" → unsubscribe, "deduped" → dedupe
    if word.endswith("es") and not participle:
        return word[:-1]  # "unsubscribes" → unsubscribe
    return ""
