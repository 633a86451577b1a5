"""How a text reads (DESIGN.md §4.3): its content-bearing tokens, and the role each one plays.

A bag of tokens cannot tell "use pnpm, not npm" from "use npm, not pnpm", nor "staging shares the
cluster, production has its own" from the reverse. A reading adds, for each token:
- its **clause** — the text cut at punctuation, at clause words (while, whereas, but, then, if…)
  and at "and"/"or" before a new subject — so that what is said of each thing stays bound to it;
- its **polarity role** — preferred (+) or rejected (−): what a negated clause says ("don't use
  npm"), what follows a contrastive "not", "instead of", "rather than", "over" (after "prefer"),
  and what a clause calls deprecated is rejected;
- whether it is **verbal** (a verb or an adverb: the wording of the rule) or **nominal** (a thing
  the rule is about), guessed from its neighbours and its ending — no tagger, a few general cues;
- its **position** in its clause, with the agent of a passive clause ("scanned by Snyk") read
  first, so that voice does not change the order.
And for the text: how many negations it holds, and the relational frames — what follows each
relation word (from, to, before, after, than, then…) in its clause.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from memory.conf import setting
from memory.services.upsert.agents import agent_actions
from memory.services.upsert.clauses import clauses, phrases_opened_by
from memory.services.upsert.conditions import (
    CIRCUMSTANCE_WORDS,
    conditional_only,
    conditional_words,
    time_bounds,
)
from memory.services.upsert.lexicon import parts_of_speech, verb_lemma
from memory.services.upsert.parts import (
    ARTICLES,
    AUXILIARIES,
    BE,
    PREPOSITIONS,
    PRONOUNS,
    is_verbal,
    phrase,
    qualifies,
)
from memory.services.upsert.sequence import sequence
from memory.services.upsert.tokens import (
    DETERMINERS,
    FUNCTION_WORDS,
    Token,
    _rewrite_phrases,
    _words,
    content_tokens,
    silenced_at_start,
    stem,
    word_setting,
)

# A word, or a mark that ends a clause.
ITEM_RE = re.compile(
    r"(?P<word>[\w][\w'’]*(?:[.:@+#/-][\w'’]+)*)|(?P<mark>[,;:!?()\[\]—–]|\.(?=\s|$)|\s[-–]\s)"
)
EVERYONE = frozenset({"nobody", "no-one", "everyone", "everybody", "anyone", "anybody", "whoever"})


class Frame(NamedTuple):
    """What a relation word points at in its clause."""

    relation: str
    targets: frozenset[str]  # the keys it may point at
    role: str  # "+" preferred, "-" in a rejected span
    verb: str  # the verb before it in its clause, or ""
    # The other words qualifying the same head ("into ledger prod hosts": prod), which one side may say
    # after the head instead ("into production hosts for the ledger service").
    qualifiers: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Reading:
    tokens: tuple[Token, ...]
    clause: tuple[int, ...]  # per token
    role: tuple[str, ...]  # per token: "+" preferred, "-" rejected
    verbal: tuple[bool, ...]  # per token (a word: a contrast word is a thing, see verb_like)
    verb_like: tuple[bool, ...]  # per token, whatever its kind ("start the job", "must never target")
    determined: tuple[bool, ...]  # per token: right after a determiner ("the QA team")
    qualifying: tuple[
        bool, ...
    ]  # per token: bound to a thing or said of one ("production repos", "is optional")
    leading: tuple[bool, ...]  # per token: the first word of its clause, bar function words ("Acme is…")
    position: tuple[float, ...]  # per token, within its clause (a passive agent first)
    agentless: frozenset[int]  # passive clauses with no "by" ("TLS is terminated at the gateway")
    negations: int
    frames: tuple[Frame, ...]
    quantifiers: tuple[tuple[str, str], ...]  # (kind: all or some, as written)
    quantified: tuple[frozenset[str], ...]  # per quantifier: the stems of the words it quantifies
    modifiers: dict[str, frozenset[str]]  # a word's stem → the stems of the words just before it
    joined: frozenset[str]  # two neighbouring words as one ("roll back" → "rollback", "log in" → "login")
    relations: frozenset[str]
    silenced: frozenset[str]  # capitalized light verbs or modals at a sentence start ("Act …", "Use …")
    # "only" before a condition, in its clause or opening the next ("ships only after QA signs off",
    # "only promote a model after it beats the baseline")
    conditional_only: bool = False
    # A word's stem → the two words just before it (stems), and per quantifier the word before it:
    # what stands in a quantifier's place ("doesn't write [any] logs" / "doesn't write [debug] logs").
    preceding: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    before_quantifier: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()  # the stem of every word, function words and light verbs included
    # The content words of a phrase that bounds the rule in time ("during business hours", "outside
    # the maintenance window"): said on one side only, the scope changed.
    conditions: frozenset[str] = frozenset()
    # Who does what, in either voice: (agent's stem, action's lemma) ("reviewed by legal" → legal,
    # review; "…, which legal writes" → legal, write). See agents.py.
    agents: frozenset[tuple[str, str]] = frozenset()
    # The rule said of everyone ("nobody", "no one", "anyone"): against a subject named on the other
    # side ("interns may not push"), the scope widened.
    everyone: bool = False
    # The content words of the clauses opened by "if", "when", "unless" ("when a partner has production
    # access"), and whether there is one: a condition said on one side only narrows or widens the rule.
    conditional: frozenset[str] = frozenset()
    conditioned: bool = False
    # (earlier, later) keys of the steps the text orders ("review before adding", "add first, review
    # afterwards"): sequence.py.
    sequence: frozenset[tuple[str, str]] = frozenset()
    # Per token: in a label opening the text ("fraud-model: …") or a setting fronted before its clause
    # ("In game-physics-sim, …"), whose place in the order or among the clauses says nothing.
    topic: tuple[bool, ...] = ()
    # Clauses with no subject of their own, going on with the one before ("…, and [they] are logged",
    # "… and need approval").
    subjectless: frozenset[int] = frozenset()
    # Per token: right before a word English has as a verb ("staging [uses]", "production [runs]").
    before_verb: tuple[bool, ...] = ()
    text: str = ""  # as given: what tokens' offsets point into


def _settings_key() -> tuple:
    return tuple(
        repr(setting(name))
        for name in (
            "UPSERT_CONTRAST_GROUPS",
            "UPSERT_SYNONYMS",
            "UPSERT_PHRASES",
            "UPSERT_NEGATED_COMPARATIVES",
            "UPSERT_MODAL_WORDS",
            "UPSERT_LIGHT_VERBS",
            "UPSERT_SCOPE_WORDS",
            "UPSERT_SCOPE_WORDS_BEFORE_THINGS",
            "UPSERT_REJECTION_WORDS",
            "UPSERT_OMISSION_VERBS",
            "UPSERT_CLOSING_WORDS",
            "UPSERT_PRIVATIVE_WORDS",
            "UPSERT_KEEPING_VERBS",
            "UPSERT_CONDITION_PREPOSITIONS",
            "UPSERT_PREFERENCE_VERBS",
            "UPSERT_REPLACING_VERBS",
            "UPSERT_ACTION_SYNONYMS",
            "UPSERT_OBJECT_PREPOSITIONS",
            "UPSERT_CLAUSE_WORDS",
            "UPSERT_RELATIONS",
            "UPSERT_ASSENT_NOUNS",
            "UPSERT_GROUP_NOUNS",
            "UPSERT_QUANTIFIERS",
        )
    )


def read(text: str) -> Reading:
    """The reading of ``text``. Pure: the same text (and rule book) gives the same reading."""
    return _read(text, _settings_key())


@lru_cache(maxsize=1024)
def _read(text: str, _key: tuple) -> Reading:
    tokens = tuple(content_tokens(text))
    rewritten = _rewrite_phrases(unicodedata.normalize("NFKC", text))
    items = [
        (m.lastgroup, m.group().lower().replace("’", "'"), m.start()) for m in ITEM_RE.finditer(rewritten)
    ]
    clause_of_item, fronted, labels = clauses(items)
    # Each token sits on the item it starts in.
    starts = [start for _, _, start in items]
    # A token opening with a mark sits on the word after it (".terraform", "~/.gradle/caches").
    at = [_item_at(starts, token.start + _leading_marks(token.surface)) for token in tokens]
    item_tokens: dict[int, list[int]] = {}
    for index, item in enumerate(at):
        item_tokens.setdefault(item, []).append(index)
    clause = tuple(clause_of_item[i] for i in at)
    verbal = tuple(is_verbal(items, at[n], item_tokens, tokens) for n in range(len(tokens)))
    verb_like = tuple(is_verbal(items, at[n], item_tokens, tokens, any_kind=True) for n in range(len(tokens)))
    determined = tuple(bool(i) and items[i - 1][1] in ARTICLES for i in at)
    qualifying = tuple(qualifies(items, i) for i in at)
    first_words = {}
    for index, (group, word, _) in enumerate(items):
        opening = index not in fronted and index not in labels  # "In fraud-scorer, the model is…": "model"
        if group == "word" and word not in FUNCTION_WORDS and word not in DETERMINERS and opening:
            first_words.setdefault(clause_of_item[index], index)
    leading = tuple(first_words.get(clause_of_item[i]) == i for i in at)
    role, rejected_spans, preferences = _roles(items, clause_of_item, at, tokens)
    position, agentless = _positions(items, clause_of_item, at, fronted)
    frames, relations = _frames(items, clause_of_item, at, tokens, verbal, rejected_spans)
    # What may name a step: things, bar a label ("fraud-model: …") and a fronted setting ("On the edge
    # workers, …"); a fronted "Before opening a PR, …" is a step.
    step_phrases = phrases_opened_by(items, fronted, ("before", "after"))
    steps = [
        not verbal[n] and at[n] not in labels and (at[n] not in fronted or at[n] in step_phrases)
        for n in range(len(tokens))
    ]
    # "prefer X over Y" rejects Y as "X, not Y" does: it counts as a negation.
    negations = sum(token.kind == "negation" for token in tokens) + preferences
    quantifier_words = setting("UPSERT_QUANTIFIERS")
    # "any" under a negation is a universal too: "doesn't write any logs" is not "doesn't write debug
    # logs", but "never store it in any system" ≡ "don't store it in a system" (no qualifier).
    at_quantifiers = [
        index for index, (group, word, _) in enumerate(items) if group == "word" and word in quantifier_words
    ]
    quantifiers = tuple((quantifier_words[items[i][1]], items[i][1]) for i in at_quantifiers)
    quantified = tuple(frozenset(stem(word) for word in phrase(items, i + 1, 1)) for i in at_quantifiers)
    modifiers: dict[str, set[str]] = {}
    for index, (group, word, _) in enumerate(items):
        if group == "word" and word not in FUNCTION_WORDS:
            modifiers.setdefault(stem(word), set()).update(stem(w) for w in _modifiers(items, index))
    preceding: dict[str, set[tuple[str, str]]] = {}
    for index, (group, word, _) in enumerate(items):
        if group == "word" and index and items[index - 1][0] == "word":
            preceding.setdefault(stem(word), set()).add(
                (_word_before(items, index - 1), stem(items[index - 1][1]))
            )
    words = [word for group, word, _ in items if group == "word"]
    joined = frozenset(
        joined
        for first, second in zip(words, words[1:], strict=False)
        for joined in (first + second, stem(first) + stem(second), stem(first + second))
    )
    return Reading(
        text=text,
        joined=joined,
        tokens=tokens,
        clause=clause,
        role=role,
        verbal=verbal,
        verb_like=verb_like,
        determined=determined,
        qualifying=qualifying,
        leading=leading,
        position=position,
        agentless=agentless,
        negations=negations,
        frames=frames,
        relations=relations,
        quantifiers=quantifiers,
        quantified=quantified,
        modifiers={key: frozenset(found) for key, found in modifiers.items()},
        silenced=silenced_at_start(text),
        conditional_only=conditional_only(items, clause_of_item),
        preceding={key: frozenset(found) for key, found in preceding.items()},
        before_quantifier=tuple(_word_before(items, i) for i in at_quantifiers),
        words=frozenset(stem(word) for word in words),
        conditions=time_bounds(items),
        agents=agent_actions(items),
        everyone=_said_of_everyone(words),
        conditional=conditional_words(items),
        sequence=sequence(items, clause_of_item, at, tokens, position, steps),
        conditioned=any(word in CIRCUMSTANCE_WORDS for word in words),
        topic=tuple(i in labels or (i in fronted and i not in step_phrases) for i in at),
        subjectless=_subjectless(items, clause_of_item),
        before_verb=tuple(
            i + 1 < len(items) and items[i + 1][0] == "word" and "VERB" in parts_of_speech(items[i + 1][1])
            for i in at
        ),
    )


CONTINUING = _words("they it them")  # a clause opening with these goes on with the subject before


def _subjectless(items, clause_of_item) -> frozenset[int]:
    """The clauses (after the first) whose first word, past "and"/"or"/"but", is a pronoun, an
    auxiliary or a modal: they say more of the subject of the clause before."""
    silent = word_setting("UPSERT_MODAL_WORDS") | word_setting("UPSERT_LIGHT_VERBS")
    found, seen = set(), set()
    for index, (group, word, _) in enumerate(items):
        clause = clause_of_item[index]
        if group != "word" or clause in seen or word in ("and", "or", "but", "then"):
            continue
        seen.add(clause)
        # Not a verb the lexicon knows: "and validate on the 2024 data" is an imperative of its own.
        verb = word in AUXILIARIES or word in BE or word in silent
        if index and (word in CONTINUING or verb):
            found.add(clause)
    return frozenset(found)


def _said_of_everyone(words: list[str]) -> bool:
    """Is the rule said of everyone ("nobody may push", "no one merges")? Not "whenever anyone
    touches …": the subject of a condition, not of the rule."""
    return any(
        (word in EVERYONE or (word == "no" and words[i + 1 : i + 2] == ["one"]))
        and not (i and words[i - 1] in CIRCUMSTANCE_WORDS)
        for i, word in enumerate(words)
    )


def _word_before(items, index: int) -> str:
    """The stem of the word just before ``index`` ("" after a mark or at the start)."""
    return stem(items[index - 1][1]) if index and items[index - 1][0] == "word" else ""


def _modifiers(items, index: int) -> list[str]:
    """The words qualifying the word at ``index`` ("[signed] images", "the [admin] actions"): the
    content words before it, when they open a noun phrase — at a clause's start, after a
    determiner or a preposition — not a verb and its object ("must not [contain] PII")."""
    words = phrase(items, index - 1, -1)
    opener = index - 1 - len(words)
    if opener >= 0 and items[opener][0] == "word":
        word = items[opener][1]
        if word not in DETERMINERS and word not in PREPOSITIONS:
            return []
    return words


def _leading_marks(surface: str) -> int:
    return len(surface) - len(surface.lstrip("./~`'\"$@#-"))


def _item_at(starts: list[int], offset: int) -> int:
    return max(0, bisect_right(starts, offset) - 1)


def _roles(items, clause_of_item, at, tokens) -> tuple[tuple[str, ...], set[int], int]:
    """The role of each token: "+" for what a text prefers or asserts, "-" for what it rejects or
    negates; the items rejected up to the end of their clause ("not production to staging"); and
    how many "over"s reject what follows them."""
    preferences = 0
    negated: dict[int, int] = {}  # clause → negations that reject it
    rejected_items: set[int] = set()
    rejected_spans: set[int] = set()
    preference = word_setting("UPSERT_PREFERENCE_VERBS")
    replacing = word_setting("UPSERT_REPLACING_VERBS")
    token_items = {item: n for n, item in enumerate(at)}
    for index, (group, word, _) in enumerate(items):
        if group != "word":
            continue
        token = tokens[token_items[index]] if index in token_items else None
        is_negation = token is not None and token.kind == "negation"
        marker = False
        if word == "over":
            marker = any(
                _prefers(items[j][1], preference)
                for j in range(index)
                if clause_of_item[j] == clause_of_item[index]
            )
        elif word == "to" and 0 < index < len(items) - 1:
            # "X is preferred to Y" rejects Y; "it is preferred to run …" is an infinitive (a name
            # after it is no verb: "preferred to Jest").
            before, after = items[index - 1], items[index + 1]
            named = index + 1 in token_items and (
                tokens[token_items[index + 1]].strong or tokens[token_items[index + 1]].kind != "word"
            )
            marker = (
                before[0] == "word"
                and verb_lemma(before[1], participle=True) in preference
                and after[0] == "word"
                and (named or "VERB" not in parts_of_speech(after[1]))
            )
        elif is_negation and word in ("not", "insteadof"):
            previous = items[index - 1] if index else ("mark", "", 0)
            marker = word == "insteadof" or previous[0] == "mark" or previous[1] in ("and", "but", "or")
            marker = marker or (previous[0] == "word" and previous[1] not in AUXILIARIES | BE)
        if not marker and _prefers(word, replacing) and _replacement_named(items, clause_of_item, index):
            # What is replaced gives way: "replace X with Y", "Y replaces X", "X is replaced by Y"
            # reject X, so the reverse exchanges the roles; and the rejection counts as a negation
            # does ("replace X with Y" ≡ "use Y instead of X").
            rejected_items.update(_replaced(items, clause_of_item, index))
            preferences += 1
        preferences += marker and word in ("over", "to")
        if marker:
            rejected_items.update(_phrase_after(items, clause_of_item, index))
            rejected_spans.update(_phrase_after(items, clause_of_item, index, whole=True))
        elif is_negation:
            negated[clause_of_item[index]] = negated.get(clause_of_item[index], 0) + 1
    # Two negations in one clause assert it: "don't forget to tag it", "never ship without review".
    rejected_clauses = {clause for clause, count in negated.items() if count % 2}
    rejected_spans |= {i for i in range(len(items)) if clause_of_item[i] in rejected_clauses}
    roles = tuple(
        "-" if clause_of_item[item] in rejected_clauses or item in rejected_items else "+" for item in at
    )
    return roles, rejected_spans, preferences


def _prefers(word: str, preference: frozenset[str] | set[str]) -> bool:
    """A preference verb in any of its forms ("prefer", "preferred", "chosen", "favoured")."""
    return word in preference or verb_lemma(word) in preference


def _replacement_named(items, clause_of_item, index: int) -> bool:
    """Does the clause of a replacing verb at ``index`` say what replaces: after "with", "by" or
    "for", or as the subject of the active verb ("Vitest replaces Jest")? Not "pods are replaced on
    deploy" nor "replace the pods on deploy"."""
    clause = clause_of_item[index]
    after = any(
        clause_of_item[j] == clause and items[j][1] in ("with", "by", "for")
        for j in range(index + 1, len(items))
    )
    subject = index > 0 and items[index - 1][0] == "word" and items[index - 1][1] not in BE | FUNCTION_WORDS
    return after or (subject and clause_of_item[index - 1] == clause)


def _replaced(items, clause_of_item, index: int) -> list[int]:
    """The items of what a replacing verb at ``index`` replaces: its subject after a form of "be"
    ("X is being replaced by Y"), else its object ("replace X with Y", "Y replaces X")."""
    if index and items[index - 1][1] in BE:
        clause = clause_of_item[index]
        return [
            j
            for j in range(index)
            if clause_of_item[j] == clause
            and items[j][0] == "word"
            and items[j][1] not in BE | FUNCTION_WORDS
        ]
    return _phrase_after(items, clause_of_item, index)


def _phrase_after(items, clause_of_item, index: int, *, whole: bool = False) -> list[int]:
    """The items of the phrase after a marker: up to the end of its clause or (unless ``whole``)
    the next preposition once a word was taken ("rather than requests | in the async services")."""
    taken: list[int] = []
    for j in range(index + 1, len(items)):
        group, word, _ = items[j]
        if group == "mark" or clause_of_item[j] != clause_of_item[index]:
            break
        content_taken = any(items[t][1] not in FUNCTION_WORDS for t in taken)
        if not whole and content_taken and (word in PREPOSITIONS or word in DETERMINERS):
            break
        taken.append(j)
    return taken


def _positions(items, clause_of_item, at, fronted=frozenset()) -> tuple[tuple[float, ...], frozenset[int]]:
    """The place of each token in its clause; the agent of a passive clause ("is scanned by Snyk")
    is read first, as it would be in the active voice, and a phrase fronted before its clause
    ("After any schema change, regenerate…") last, where it would stand unfronted. And the passive
    clauses without an agent, whose order says nothing of who does what."""
    agent: set[int] = set()
    passive_clauses = {
        clause_of_item[j]
        for j in range(len(items) - 1)
        if items[j][1] in BE and items[j + 1][0] == "word" and items[j + 1][1].endswith(("ed", "en"))
    }
    with_agent: set[int] = set()
    verb_at: dict[int, float] = {}
    for index, (group, word, _) in enumerate(items):
        if word not in ("by", "from") or group != "word":
            continue
        clause = clause_of_item[index]
        if _after_assent(items, index):
            agent.update(_phrase_after(items, clause_of_item, index))
            continue
        passive = word == "by" and any(
            items[j][1] in BE and clause_of_item[j] == clause for j in range(max(0, index - 4), index)
        )
        if passive:
            phrase = _phrase_after(items, clause_of_item, index)
            agent.update(phrase)
            with_agent.add(clause)
            # The participle follows its agent, as the verb of the active voice does ("decisions get
            # approved by the panel" → "the panel approves decisions").
            participle = next(
                (
                    j + 1
                    for j in range(index - 1, max(0, index - 5), -1)
                    if items[j][1] in BE and clause_of_item[j] == clause and items[j + 1][0] == "word"
                ),
                None,
            )
            if participle is not None and phrase:
                verb_at[participle] = max(phrase) - 10_000 + 0.5
    positions = tuple(
        verb_at.get(item, item - (10_000 if item in agent else 0) + (10_000 if item in fronted else 0))
        for item in at
    )
    return positions, frozenset(passive_clauses - with_agent)


def _after_assent(items, index: int) -> bool:
    """Is the word at ``index`` ("from", "by") after a noun of assent? Whoever gives an approval is
    its agent, no source: "need sign-off from the finance lead" ≡ "must be approved by the finance
    lead"."""
    assents = {stem(word) for word in word_setting("UPSERT_ASSENT_NOUNS")}
    return index > 0 and stem(items[index - 1][1]) in assents


def _gerund_object(following, at, tokens, verbal) -> bool:
    """Does a gerund open what follows a relation word, with a word read as a verb right after it
    ("before running apply", "after calling publish")? That word is what the gerund acts on."""
    return (
        len(following) > 1
        and verbal[following[0]]
        and verbal[following[1]]
        and tokens[following[0]].surface.lower().endswith("ing")
        and at[following[1]] == at[following[0]] + 1
    )


def _compound_modifier(things, at, tokens) -> bool:
    """Is the first thing a hyphenated compound of words ("on-call SRE", "long-running queries") or
    a name ("Google BigQuery") right before another thing? It qualifies that thing, the head of what
    the relation points at."""
    first = tokens[things[0]] if things else None
    compound = first is not None and "-" in first.surface and first.surface.replace("-", "").isalpha()
    return (
        len(things) > 1
        and (compound and first.surface.islower() or first.kind == "name" and tokens[things[1]].strong)
        and at[things[1]] == at[things[0]] + 1
    )


def _frames(items, clause_of_item, at, tokens, verbal, rejected) -> tuple[tuple[Frame, ...], frozenset[str]]:
    """For each relation word, what it may point at in its clause — the first token after it and
    the first thing after it ("after uploading new assets" and "after new assets are uploaded"
    both point at the assets) — and whether it stands in a rejected span: "from us-east to
    eu-west" → (from, {us-east}, +), (to, {eu-west}, +). "to" before a verb ("to run") is no
    relation."""
    relations: dict[str, str] = {str(k).lower(): str(v) for k, v in setting("UPSERT_RELATIONS").items()}
    frames = []
    used: set[str] = set()
    in_clause: dict[int, list[int]] = {}
    for n, item in enumerate(at):
        if tokens[n].kind != "negation":
            in_clause.setdefault(clause_of_item[item], []).append(n)
    for index, (group, word, _) in enumerate(items):
        if group != "word" or word not in relations:
            continue
        following = [n for n in in_clause.get(clause_of_item[index], ()) if at[n] > index]
        relation = relations[word]
        if relation in ("to", "from") and (not following or verbal[following[0]]):
            continue
        if _after_assent(items, index):
            relation = (
                "by"  # "sign-off from the guild": who gives it (its agent), not where something comes from
            )
        things = [n for n in following if not verbal[n]]
        if _gerund_object(following, at, tokens, verbal):
            things.insert(0, following[1])  # "before running apply": the thing run, a verb's name or not
        heads = things[:1]
        if _compound_modifier(things, at, tokens):
            heads = things[:2]  # "to the on-call SRE" points at the SRE too ("to the SRE on call")
        targets = frozenset(tokens[n].key for n in following[:1] + heads)
        if index + 1 < len(items) and items[index + 1][1] in PRONOUNS:
            targets = frozenset()  # "until it is fixed": what "it" is, the clause does not say
        used.add(relation)
        verbs = [n for n in in_clause.get(clause_of_item[index], ()) if at[n] < index and verbal[n]]
        run = following[:1]  # the words of the phrase pointed at, a verb's form among them ("pricing")
        for n in following[1:]:
            if at[n] != at[run[-1]] + 1:
                break
            run.append(n)
        qualifiers = frozenset(tokens[n].key for n in run[:-1]) - targets
        role = "-" if index in rejected else "+"
        frames.append(Frame(relation, targets, role, tokens[verbs[-1]].key if verbs else "", qualifiers))
    return tuple(frames), frozenset(used)
