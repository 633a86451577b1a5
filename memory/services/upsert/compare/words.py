"""Ordinary words compared: the scope, the polarity, contrast words exchanged, things replaced by
others, quantifiers — and the rest of the words that differ, which is wording."""

from __future__ import annotations

import re

from memory.conf import setting
from memory.services.upsert.compare.changes import Change, Comparison, surfaces
from memory.services.upsert.compare.contrasts import contrast_group_of, opposed, polar_groups
from memory.services.upsert.lexicon import never_a_thing, parts_of_speech, verb_form, verb_lemma
from memory.services.upsert.parts import RELATIVE_PRONOUNS
from memory.services.upsert.reading import Reading
from memory.services.upsert.sequence import ORDER_KEYS
from memory.services.upsert.tokens import stem, synonyms


def compare_scope(old: Reading, new: Reading, result: Comparison) -> None:
    old_scope = {t.key for t in old.tokens if t.kind == "scope"}
    new_scope = {t.key for t in new.tokens if t.kind == "scope"}
    if old_scope ^ new_scope == {"only"} and _rejected(old) & _rejected(new):
        return  # "pnpm only, not npm" ≡ "use pnpm, not npm": the rejected alternative says "only"
    narrow, other = (old, new) if "only" in old_scope else (new, old)
    if (
        old_scope ^ new_scope == {"only"}
        and narrow.conditional_only
        and (other.negations % 2 == 0 < other.negations or result.same_order)
    ):
        # "never ship without sign-off" ≡ "ship only after sign-off" ≡ "sign off first, then ship": a
        # condition said twice over.
        return
    if old_scope != new_scope:
        result.changes.append(
            Change("scope", surfaces(old, old_scope - new_scope), surfaces(new, new_scope - old_scope))
        )


def _rejected(reading: Reading) -> set[str]:
    """Keys of the things a rule rejects ("not npm", "instead of Jenkins")."""
    return {
        token.key
        for token, role in zip(reading.tokens, reading.role, strict=True)
        if role == "-" and token.kind not in ("negation", "scope", "contrast")
    }


def compare_words(
    old: Reading, new: Reading, result: Comparison, explained_old=frozenset(), explained_new=frozenset()
) -> None:
    """Contrast words exchanged, and things replaced by others; the rest of the ordinary words
    differing is wording."""
    kinds = ("word", "contrast")
    old_keys = {stem(t.key) if t.kind == "contrast" else t.key for t in old.tokens if t.kind in kinds}
    new_keys = {stem(t.key) if t.kind == "contrast" else t.key for t in new.tokens if t.kind in kinds}
    removed = old_keys - new_keys - {t.key for t in new.tokens} - explained_old - _compound_parts(new)
    added = new_keys - old_keys - {t.key for t in old.tokens} - explained_new - _compound_parts(old)
    if result.same_order:  # "clean first, then bump, then build" ≡ "bump after cleaning, build last"
        removed -= ORDER_KEYS - _determined(old)  # not "before the first import": a thing's ordinal
        added -= ORDER_KEYS - _determined(new)
    # An abbreviation and its word ("var" / "variable", "auth" / "authentication").
    short = {
        a for a in removed | added for b in removed | added if a != b and len(a) >= 3 and b.startswith(a)
    }
    long = {b for a in short for b in removed | added if b != a and b.startswith(a)}
    removed -= short | long
    added -= short | long
    # A kind said after a name both sides give ("the ml-notebooks repo" / "ml-notebooks", "the develop
    # branch" / "develop"): the name says which, the kind adds nothing.
    removed -= _kind_after_shared_name(old, new, removed)
    added -= _kind_after_shared_name(new, old, added)
    # One word or two ("rollback" / "roll back", "login" / "log in").
    removed = {key for key in removed if key not in new.joined}
    added = {key for key in added if key not in old.joined}
    # A verb's other form ("bind" / "bound", "hold" / "held", "write" / "wrote").
    forms = {(a, b) for a in removed for b in added if _other_form(a, b)}
    removed -= {a for a, _ in forms}
    added -= {b for _, b in forms}
    _said_of_everyone(old, new, result, removed, added)
    # "on the last day" / "the last day": a preposition, not a state, when nothing replaces it.
    prepositions = {stem(word) for word in setting("UPSERT_PREPOSITION_CONTRASTS")}
    result.identical = (
        not (removed - prepositions)
        and not (added - prepositions)
        and not result.changes
        and old.negations % 2 == new.negations % 2
    )

    def nominal(reading: Reading, keys: set[str], *, strict: bool = True) -> set[str]:
        """Things, not verbs — and not contrast words, whose change is an exchange (above), unless
        they name a thing ("the content team" → "the QA team"). ``strict``: and not a word the
        lexicon knows only as a verb or an adverb, unless a determiner makes it a noun ("the
        deploy role") or a relation word points at it in a form no verb takes ("cut from develop",
        not "to whoever owns it")."""
        pointed = {key for frame in reading.frames for key in frame.targets}

        def named_by_relation(t) -> bool:
            return t.key in pointed and verb_lemma(t.surface) in ("", t.surface.lower())

        return {
            key
            for key in keys
            if any(
                (
                    t.kind == "word"
                    and t.key == key
                    and not reading.verbal[n]
                    and not (
                        strict
                        and not reading.determined[n]
                        and not named_by_relation(t)
                        and never_a_thing(t.surface)
                    )
                )
                or (t.kind == "contrast" and stem(t.key) == key and reading.determined[n])
                for n, t in enumerate(reading.tokens)
            )
        }

    def shown(reading: Reading, keys: set[str]) -> list[str]:
        return [
            t.surface
            for t in reading.tokens
            if t.kind in kinds and (stem(t.key) if t.kind == "contrast" else t.key) in keys
        ]

    groups = contrast_group_of()
    exchanged_old, exchanged_new = set(), set()
    for key in removed:
        mine = groups.get(key, frozenset())
        partners = {other for other in added if opposed(mine, groups.get(other, frozenset()))}
        if partners and not all(_converse(old, key, new, other) for other in partners):
            exchanged_old.add(key)
            exchanged_new |= partners
    removed -= exchanged_old
    added -= exchanged_new
    # A contrast word on one side only ("optional", "all", "production") narrows or widens the
    # fact; a preposition or a particle ("on the last day", "bring the stack up") does not.
    relations = {stem(str(word)) for word in setting("UPSERT_RELATIONS")} | prepositions

    def lone(reading: Reading, keys: set[str]) -> set[str]:
        """Contrast words that qualify a thing — not verbs ("start the job"), not relations — and
        adverbs of frequency, which qualify the rule itself ("always pin" / "rarely need to pin")."""
        return {
            stem(t.key)
            for n, t in enumerate(reading.tokens)
            if t.kind == "contrast"
            and stem(t.key) in keys
            and (not reading.verb_like[n] and reading.qualifying[n] or parts_of_speech(t.surface) == {"ADV"})
        } - relations

    lone_old, lone_new = lone(old, removed) - _prohibitive(old), lone(new, added) - _prohibitive(new)
    # A permission said with "can" on the other side: "contractors can read it" ≡ "contractors are
    # permitted to read it" ("can" is a function word, "may" a contrast word).
    if "can" in new.words:
        lone_old -= {"may"}
    if "can" in old.words:
        lone_new -= {"may"}
    # Under an exclusive scope on both sides the permission is the rule itself: "only the captain may
    # tag a build" ≡ "nobody but the captain tags builds"; so in "users may read it but never write".
    if (_exclusive(old) and _exclusive(new)) or result.allowed_alone:
        lone_old -= {"may"}
        lone_new -= {"may"}
    removed -= lone_old
    added -= lone_new
    # A word and its negation by prefix ("safe" / "unsafe", "encrypted" / "unencrypted").
    prefixes = tuple(setting("UPSERT_NEGATING_PREFIXES"))
    negated = [(a, b) for a in removed for b in added if _negates(a, b, prefixes) or _negates(b, a, prefixes)]
    # The same when the side that negates by prefix also names the plain word in another form ("must
    # be hashed before they land" / "can land unhashed; hashing happens downstream", "always encrypt
    # backups" / "never leave backups unencrypted; encrypt them"): the prefix still flips it.
    negated += [(a, b) for a in old_keys for b in added if _negates(a, b, prefixes) and (a, b) not in negated]
    negated += [
        (a, b) for a in removed for b in new_keys if _negates(b, a, prefixes) and (a, b) not in negated
    ]
    removed -= {a for a, _ in negated}
    added -= {b for _, b in negated}
    # Polarity, not count: "no migration ships without sign-off" ≡ "a migration ships after
    # sign-off"; and a negation with a polar word flipped keeps the rule: "never disable TLS
    # verification" ≡ "TLS verification stays enabled".
    polar = polar_groups()
    flipped = {
        group
        for key in exchanged_old
        for other in exchanged_new
        for group in opposed(groups.get(key, frozenset()), groups.get(other, frozenset()))
        if group in polar
    }
    # Each pair of words flipped counts once, in however many groups it is opposed ("disable" /
    # "enabled" in enable/disable and in on/off).
    flipped_pairs = {
        (key, other)
        for key in exchanged_old
        for other in exchanged_new
        if set(opposed(groups.get(key, frozenset()), groups.get(other, frozenset()))) & polar
    }
    flips = len(flipped_pairs) + len(negated)
    negation_flipped = old.negations % 2 != new.negations % 2 and not _without_as_before(old, new)

    def in_flipped(key: str) -> bool:
        return any(group in flipped for group, _ in groups.get(key, ()))

    # A flip answers a negation only where that negation is ("never disable TLS" / "TLS stays enabled"):
    # not two flips alone ("keep the first, drop later ones" / "keep the last, drop earlier ones"), nor
    # a negation in one clause against a flip in another ("limits are not required, and the webhook
    # accepts …" / "pods must set limits; … are rejected by the webhook").
    answered = bool(negated) or (
        negation_flipped
        and _beside_negation(
            old, new, {k for k in exchanged_old if in_flipped(k)}, {k for k in exchanged_new if in_flipped(k)}
        )
    )
    if (negation_flipped + flips) % 2 == 0 and flips and answered:
        exchanged_old = {key for key in exchanged_old if not in_flipped(key)}
        exchanged_new = {key for key in exchanged_new if not in_flipped(key)}
    elif negation_flipped or negated:
        old_neg = [t.surface for t in old.tokens if t.kind == "negation"] if negation_flipped else []
        new_neg = [t.surface for t in new.tokens if t.kind == "negation"] if negation_flipped else []
        old_neg += shown(old, {a for a, _ in negated})
        new_neg += shown(new, {b for _, b in negated})
        result.changes.append(Change("negation", old_neg, new_neg))

    limit = setting("UPSERT_SUBSTITUTION_WORDS")
    old_things, new_things = nominal(old, removed), nominal(new, added)
    old_shown, new_shown = shown(old, exchanged_old | lone_old), shown(new, exchanged_new | lone_new)
    # One or two things swapped for one or two, as the reading guessed them: more is a rewording.
    few = (
        len(nominal(old, removed, strict=False)) <= limit and len(nominal(new, added, strict=False)) <= limit
    )
    replaced = old_things and new_things and few
    if replaced:
        old_shown += shown(old, old_things)
        new_shown += shown(new, new_things)
        removed -= old_things
        added -= new_things
    if old_shown or new_shown:
        result.changes.append(Change("term", old_shown, new_shown))
    _compare_quantifiers(old, new, old_things | lone_old, new_things | lone_new, result, removed, added)
    bound_old = old.conditions - new.words | _condition_unsaid(old, new, removed)
    bound_new = new.conditions - old.words | _condition_unsaid(new, old, added)
    if bound_old or bound_new:
        result.changes.append(Change("scope", shown(old, bound_old), shown(new, bound_new)))
        removed -= bound_old
        added -= bound_new
    result.reworded = shown(old, removed) + shown(new, added)
    result.unmatched_things = shown(old, nominal(old, removed)) + shown(new, nominal(new, added))


def _beside_negation(old: Reading, new: Reading, flipped_old: set[str], flipped_new: set[str]) -> bool:
    """Is a polar word flipped in a clause whose count of negations changed? Clauses are matched
    by their place; texts of another number of clauses are not compared so (any clause will do)."""
    if len(set(old.clause)) != len(set(new.clause)):
        return True
    rank_old = {clause: rank for rank, clause in enumerate(sorted(set(old.clause)))}
    rank_new = {clause: rank for rank, clause in enumerate(sorted(set(new.clause)))}

    def negations(reading: Reading, ranks: dict[int, int], rank: int) -> int:
        return sum(
            t.kind == "negation" and ranks[reading.clause[n]] == rank for n, t in enumerate(reading.tokens)
        )

    changed = {
        r for r in range(len(rank_old)) if negations(old, rank_old, r) % 2 != negations(new, rank_new, r) % 2
    }
    flips = {rank_old[old.clause[n]] for n, t in enumerate(old.tokens) if stem(t.key) in flipped_old}
    flips |= {rank_new[new.clause[n]] for n, t in enumerate(new.tokens) if stem(t.key) in flipped_new}
    return bool(changed & flips)


def _said_of_everyone(
    old: Reading, new: Reading, result: Comparison, removed: set[str], added: set[str]
) -> None:
    """ "Interns may not push to main" → "no one may push to main": the rule widened to everyone (or,
    the other way, narrowed to some). The subject named on one side is then no rewording."""
    for mine, theirs, dropped in ((new, old, removed), (old, new, added)):
        named = _named_subjects(theirs, dropped) if mine.everyone and not theirs.everyone else set()
        if named:
            said = [t.surface for t in theirs.tokens if t.key in named]
            result.changes.append(
                Change("scope", *((said, ["everyone"]) if theirs is old else (["everyone"], said)))
            )
            dropped -= named


def _condition_unsaid(reading: Reading, other: Reading, keys: set[str]) -> set[str]:
    """A condition ``reading`` states and ``other`` has none of ("rotate the keys when a partner has
    production access" / "… for every partner"): of ``keys``, the things it names that the other
    does not say — when they are ``UPSERT_CONDITION_THINGS`` or more, the scope changed."""
    if other.conditioned:
        return set()
    unsaid = (reading.conditional - other.words) & _not_verbs(reading, keys)
    return unsaid if len(unsaid) >= setting("UPSERT_CONDITION_THINGS") else set()


def _kind_after_shared_name(reading: Reading, other: Reading, keys: set[str]) -> set[str]:
    """Of ``keys``, the kind nouns (``UPSERT_KIND_NOUNS``) of ``reading`` after words that qualify
    them, all of which the other reading also has ("repo" in "the ml-notebooks repo"; not "bucket" in
    "the ml-artifacts S3 bucket" against "S3")."""
    kinds = {stem(word) for word in setting("UPSERT_KIND_NOUNS")}
    synonym = synonyms()
    found = set()
    for token in reading.tokens:
        word = token.surface.lower()
        if token.key not in keys or not ({stem(word), token.key, synonym.get(word)} & kinds):
            continue
        qualifiers = reading.modifiers.get(stem(word), frozenset())
        if qualifiers and qualifiers <= other.words:
            found.add(token.key)
    return found


def _determined(reading: Reading) -> set[str]:
    """Keys of the tokens right after a determiner ("the first import")."""
    return {t.key for n, t in enumerate(reading.tokens) if reading.determined[n]}


def _not_verbs(reading: Reading, keys: set[str]) -> set[str]:
    """Of ``keys``, those of things and qualities, not of verbs ("production access", not "has")."""
    return {t.key for n, t in enumerate(reading.tokens) if t.key in keys and not reading.verbal[n]}


def _named_subjects(reading: Reading, keys: set[str]) -> set[str]:
    """Of ``keys``, the things opening a clause of ``reading`` — its subject — that name some people
    and not people in general ("interns", "contractors"; not "engineers", "we")."""
    generic = {stem(word) for word in setting("UPSERT_GENERIC_PEOPLE")}
    return {
        t.key
        for n, t in enumerate(reading.tokens)
        if t.key in keys
        and reading.leading[n]
        and not reading.verbal[n]
        and t.kind in ("word", "name")
        and not verb_form(t.surface)  # "any changed query": no one named
    } - generic


def _exclusive(reading: Reading) -> bool:
    """Whether the rule is said of some alone ("only", "nobody except", "X-only")."""
    return any(t.kind == "scope" and t.key in ("only", "except") for t in reading.tokens)


def _without_as_before(old: Reading, new: Reading) -> bool:
    """Under a negation, "without" and "before" say one condition: "don't close a ticket without
    replying" ≡ "never close a ticket before the customer got a reply" — one side's "without" for the
    other's "before", each in a negated clause ("deploy without review" alone is no such rule)."""

    def withouts(reading: Reading) -> int:
        return sum(t.kind == "negation" and t.surface.lower() == "without" for t in reading.tokens)

    def negated_befores(reading: Reading) -> int:
        negated = {
            reading.clause[n]
            for n, t in enumerate(reading.tokens)
            if t.kind == "negation" and t.surface.lower() != "without"
        }
        return sum(
            t.kind == "contrast" and t.key == "before" and reading.clause[n] in negated
            for n, t in enumerate(reading.tokens)
        )

    extra = withouts(old) - withouts(new)
    return (
        extra != 0
        and extra == negated_befores(new) - negated_befores(old)
        and bool(old.negations - withouts(old) and new.negations - withouts(new))
    )


def _sides(reading: Reading, key: str) -> list[tuple[set[str], set[str]]]:
    """For each use of the relation word ``key``: the things of its clause before it and after it."""
    found = []
    for n, token in enumerate(reading.tokens):
        if token.kind != "contrast" or stem(token.key) != key:
            continue
        things = [
            (reading.position[m], other.key)
            for m, other in enumerate(reading.tokens)
            if reading.clause[m] == reading.clause[n]
            and m != n
            and other.kind not in ("negation", "scope", "contrast")
            and not reading.verbal[m]
        ]
        here = reading.position[n]
        found.append(({k for p, k in things if p < here}, {k for p, k in things if p > here}))
    return found


def _converse(old: Reading, old_key: str, new: Reading, new_key: str) -> bool:
    """A relation said from the other end: "review it before exposing the endpoint" ≡ "the
    endpoint is exposed after the review" — the relation words exchanged and what stood before it
    now after it, and the reverse. Only for relation words (before/after); "migrate before
    deploy" → "migrate after deploy" keeps its sides and is a changed fact."""
    relations = {stem(str(word)) for word in setting("UPSERT_RELATIONS")}
    if old_key not in relations or new_key not in relations or old_key == new_key:
        return False
    return any(
        head_old & tail_new and tail_old & head_new and not (head_old & head_new or tail_old & tail_new)
        for head_old, tail_old in _sides(old, old_key)
        for head_new, tail_new in _sides(new, new_key)
    )


def _prohibitive(reading: Reading) -> set[str]:
    """A permission under a negation is a prohibition, the modal of the rule, not a permission
    granted: "nobody may access it" ≡ "accessing it is not permitted"."""
    negated = {reading.clause[n] for n, t in enumerate(reading.tokens) if t.kind == "negation"}
    return {
        stem(t.key)
        for n, t in enumerate(reading.tokens)
        if t.kind == "contrast" and t.key == "may" and reading.clause[n] in negated
    }


def _compare_quantifiers(
    old: Reading,
    new: Reading,
    old_dropped: set[str],
    new_dropped: set[str],
    result,
    old_reworded: set[str],
    new_reworded: set[str],
) -> None:
    """ "some teams" vs "all teams" changes the scope; "every service" vs "services" does not, but
    "all actions" vs "admin actions" (a qualifier on the other side) does. ``old_dropped`` and
    ``new_dropped``: the things and qualifiers only one side has; ``*_reworded``: its other words."""
    # "no" against a negation on the other side is that negation ("interns get no SSH access" ≡
    # "interns are not given SSH access"), no quantifier.
    old_kinds = {kind for kind, word in old.quantifiers if not (word == "no" and new.negations)}
    new_kinds = {kind for kind, word in new.quantifiers if not (word == "no" and old.negations)}
    changed = "some" in old_kinds ^ new_kinds
    changed = changed or ("all" in old_kinds - new_kinds and _qualified(new, new_dropped, new_reworded, old))
    changed = changed or ("all" in new_kinds - old_kinds and _qualified(old, old_dropped, old_reworded, new))
    if changed:
        old_words = [word for kind, word in old.quantifiers if kind not in new_kinds]
        new_words = [word for kind, word in new.quantifiers if kind not in old_kinds]
        result.changes.append(Change("scope", old_words, new_words))


def _qualified(reading: Reading, dropped: set[str], reworded: set[str], quantifying: Reading) -> bool:
    """Does ``reading`` qualify what the other side says "all" of ("admin actions", "signed
    images" / "all actions", "every image")? When the quantified words are found in ``reading``:
    a word only it has, just before them; when they are not: any dropped thing or qualifier."""
    # A gerund after a relation word is the action done to the thing, not a kind of it: "before
    # [running] upgrade" ≡ "before any upgrade".
    relations = {stem(str(word)) for word in setting("UPSERT_RELATIONS")}
    actions = {
        word
        for word in dropped | reworded
        if _gerund(reading, word)
        and any((relation, word) in found for found in reading.preceding.values() for relation in relations)
    }
    dropped, reworded = dropped - actions, reworded - actions
    heads = {
        key
        for (kind, _), words in zip(quantifying.quantifiers, quantifying.quantified, strict=True)
        if kind == "all"
        for key in words
        if key in reading.modifiers
    }
    if not heads:
        return bool(dropped)
    if any(reading.modifiers[key] & (dropped | reworded) for key in heads):
        return True
    # A relative clause saying which ones ("merges that touch checkout code" / "every merge").
    if any(
        before in RELATIVE_PRONOUNS
        for word in dropped | reworded
        for _, before in reading.preceding.get(word, ())
    ):
        return True
    # A word in the quantifier's place, after a verb ("doesn't write [debug] logs" / "doesn't write
    # any logs"), qualifies too.
    return any(
        (before, word) in reading.preceding.get(key, ())
        for (kind, _), words, before in zip(
            quantifying.quantifiers, quantifying.quantified, quantifying.before_quantifier, strict=True
        )
        if kind == "all" and before
        for key in words
        for word in dropped | reworded
    )


def _compound_parts(reading: Reading) -> set[str]:
    """The words of the hyphenated compounds of ``reading``: said apart on the other side they are
    the compound reworded ("the on-call engineer" / "whoever is on call")."""
    return {
        stem(part)
        for t in reading.tokens
        if "-" in t.surface and t.surface.replace("-", "").isalpha()
        for part in t.surface.lower().split("-")
    }


def _gerund(reading: Reading, key: str) -> bool:
    """Is the word of ``key`` written as a verb's form in -ing ("running", "deploying")?"""
    return any(
        t.key == key and t.surface.lower().endswith("ing") and "VERB" in parts_of_speech(t.surface)
        for t in reading.tokens
    )


def _negates(word: str, negation: str, prefixes: tuple[str, ...]) -> bool:
    return any(negation == prefix + word or negation == f"{prefix}-{word}" for prefix in prefixes)


VOWELS_RE = re.compile(r"[aeiou]+")


def _other_form(a: str, b: str) -> bool:
    """The same consonants around one changed vowel: a strong verb's forms (bind, bound)."""
    if not (a.isalpha() and b.isalpha()) or min(len(a), len(b)) < 4:
        return False
    consonants_a, consonants_b = VOWELS_RE.split(a), VOWELS_RE.split(b)
    if a[:-1] == b[:-1] and {a[-1], b[-1]} == {"d", "t"}:
        return True  # build / built, send / sent
    if consonants_a != consonants_b or len("".join(consonants_a)) < 3:
        return False
    return sum(x != y for x, y in zip(VOWELS_RE.findall(a), VOWELS_RE.findall(b), strict=False)) == 1
