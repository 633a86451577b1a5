"""Who does what: the (agent, action) pairs of a text, in either voice.

"Support macros are written by the CX leads and reviewed by legal" and "the CX leads write the
macros, which legal reviews" say the same; "the CX leads review the macros, which legal writes"
exchanges who does what while every word stays. The roles of ``compare`` read each clause's order;
an object relative clause ("…, which legal writes") puts its agent after the thing it acts on, so
the order alone cannot tell. These pairs can:
- a passive with its agent: a verb's participle, "by", the agent ("reviewed by legal");
- an active clause: a noun phrase opening a sentence, a clause or a relative clause ("which",
  "that", "who", "and") followed by a verb, itself followed by its object or the clause's end
  ("the CX leads review the …", "…, which legal writes,");
- a verb whose object follows a preposition (``UPSERT_OBJECT_PREPOSITIONS``: "the app depends on
  the framework", "the job waits for the lock"): the action is the verb with its preposition, so
  "runs on the cluster" and "runs the cluster" are two actions, never one done by two agents.
The agent is the last word of its noun phrase ("the CX leads" → leads), the action the verb's lemma.
Pure: a function of the text's items.
"""

from __future__ import annotations

from memory.conf import setting
from memory.services.upsert.lexicon import adverb_in_ly, parts_of_speech, verb_lemma
from memory.services.upsert.parts import ARTICLES, OBJECTS, RELATIVE_PRONOUNS, phrase
from memory.services.upsert.tokens import DETERMINERS, stem

# What may come just before an active clause's subject: a relative pronoun or "and".
OPENERS = RELATIVE_PRONOUNS | {"and"}
# Verbs that say what a thing is or has, not what it does ("Maria is the release manager").
NOT_ACTIONS = frozenset({"be", "have", "get", "do"})


def agent_actions(items) -> frozenset[tuple[str, str]]:
    """(agent stem, action lemma) for every agent this reading can tell, in either voice. Empty
    when an action has two agents: the pairs then cannot say who does which."""
    found, verbs = set(), set()
    prepositions = frozenset(setting("UPSERT_OBJECT_PREPOSITIONS"))
    for index, (group, word, _) in enumerate(items):
        if group != "word":
            continue
        if word == "by" and index:
            action = verb_lemma(items[index - 1][1], participle=True)
            agent = _noun_phrase(items, index + 1, 1)
            if action and agent:
                found.add((stem(_head(agent)), action))
            continue
        action = verb_lemma(word)
        if action and index - 1 not in verbs and _object_after_preposition(items, index, prepositions):
            action = f"{action} {items[index + 1][1]}"  # "depends on the framework" → "depend on"
        elif not (
            action
            and index - 1 not in verbs
            and (_takes_object_or_ends(items, index) or _in_relative(items, index))
        ):
            continue
        subject = _subject_before(items, index)
        if subject:
            found.add((stem(subject), action))
            verbs.add(index)  # what follows is its object ("files access requests"), not a clause
    same = _action_synonyms()
    found = {(agent, same.get(action, action)) for agent, action in found if action not in NOT_ACTIONS}
    actions = [action for _, action in found]
    return frozenset(found) if len(set(actions)) == len(actions) else frozenset()


def _action_synonyms() -> dict[str, str]:
    """A verb's lemma → the lemma that stands for its group (``UPSERT_ACTION_SYNONYMS``)."""
    return {verb: group[0] for group in setting("UPSERT_ACTION_SYNONYMS") for verb in group}


def _head(words: list[str]) -> str:
    """The word that names the agent: the last of its phrase, or the one before a word for a group
    ("the data team" → data: "the data team" and "the mobile team" are two agents)."""
    groups = {stem(word) for word in setting("UPSERT_GROUP_NOUNS")}
    return words[-2] if len(words) > 1 and stem(words[-1]) in groups else words[-1]


def _noun_phrase(items, index: int, step: int) -> list[str]:
    """The content words of a noun phrase from ``index`` one way, in the text's order, determiners
    skipped at its open end ("the CX leads" → cx, leads)."""
    while step == 1 and index < len(items) and items[index][1] in DETERMINERS | ARTICLES:
        index += 1
    words = phrase(items, index, step)
    words = words if step == 1 else words[::-1]
    while len(words) > 1 and adverb_in_ly(words[-1]):
        words.pop()  # "by a Spark job hourly": the phrase ends at its noun
    return words


def _subject_before(items, index: int) -> str:
    """The last word of the noun phrase that opens a clause right before the verb at ``index``, or
    "" when the words before it are no clause's subject."""
    words = _noun_phrase(items, index - 1, -1)
    if not words:
        return ""
    opener = index - 1 - len(words)
    while opener >= 0 and items[opener][1] in DETERMINERS | ARTICLES and items[opener][1] not in OPENERS:
        opener -= 1
    if opener >= 0 and items[opener][0] == "word" and items[opener][1] not in OPENERS:
        return ""
    return _head(words)


def _in_relative(items, index: int) -> bool:
    """Is the verb at ``index`` that of an object relative clause ("changes that the mobile team
    proposes for …")? Its object is the thing before the pronoun; what follows it is no object."""
    words = _noun_phrase(items, index - 1, -1)
    opener = index - 1 - len(words)
    while opener >= 0 and items[opener][1] in ARTICLES and items[opener][1] not in RELATIVE_PRONOUNS:
        opener -= 1
    following = items[index + 1] if index + 1 < len(items) else ("mark", "", 0)
    subject_goes_on = following[0] == "word" and bool(
        verb_lemma(following[1])
    )  # "the mobile [team] proposes"
    return (
        bool(words)
        and opener >= 1
        and items[opener][1] in RELATIVE_PRONOUNS
        and items[opener - 1][0] == "word"
        and not subject_goes_on
    )


def _takes_object_or_ends(items, index: int) -> bool:
    """Is the word at ``index`` followed by what a verb takes — an article or determiner opening its
    object — or by the end of its clause ("…, which legal writes,")?"""
    if index + 1 >= len(items):
        return True
    group, word, _ = items[index + 1]
    if group == "mark" or word in ARTICLES or word in DETERMINERS or word in OBJECTS:
        return True
    # A bare plural object: "the governance team files access requests".
    return items[index][1].endswith("s") and _bare_object(items, index + 1)


def _object_after_preposition(items, index: int, prepositions: frozenset[str]) -> bool:
    """Is the verb at ``index`` followed by one of ``prepositions`` (``UPSERT_OBJECT_PREPOSITIONS``)
    and an article or determiner opening its object ("depends on the shared package")?"""
    if index + 2 >= len(items):
        return False
    (group, word, _), (_, opener, _) = items[index + 1], items[index + 2]
    return group == "word" and word in prepositions and (opener in ARTICLES or opener in DETERMINERS)


def _bare_object(items, index: int) -> bool:
    """Does a noun phrase without an article start at ``index`` and end in a plural noun
    ("access requests", "schema changes")?"""
    words = phrase(items, index, 1)
    return bool(words) and words[-1].endswith("s") and "NOUN" in parts_of_speech(words[-1])
