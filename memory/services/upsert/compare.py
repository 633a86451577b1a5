"""Is it another fact? Two readings compared (DESIGN.md §4.3).

A changed fact needs a real change of content:
- a strong token (number, version, port, date, time, path, identifier, name) added, removed or
  replaced — an acronym and its words ("CAB" ≡ "change advisory board") are the same token;
- the polarity of the rule flipped: another count of negations (a contrastive "not X",
  "instead of X", "rather than X", "X is deprecated" and "don't", "never", "avoid" count alike, so
  "not X" ≡ "instead of X" and "don't" ≡ "never" keep the polarity);
- the scope narrowed or widened ("only" on one side);
- a contrast pair exchanged (up → down, before → after, staging → production);
- a thing replaced by another: nouns on both sides, a few words ("the platform team" → "the
  payments team") — verbs and adverbs replaced are a rewording ("fires" → "triggers");
- roles exchanged: two tokens trading their polarity role (preferred ↔ rejected), their clause
  ("staging shared, production dedicated" → the reverse), what follows a relation word (from/to,
  before/after, then), or their order in a clause once a passive is read as active.
Reordering whole clauses, the passive voice and rewording are none of these.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations, permutations

from memory.conf import setting
from memory.services.upsert.lexicon import never_a_thing
from memory.services.upsert.reading import Reading, read
from memory.services.upsert.tokens import _frozen, stem, synonyms

MAX_CLAUSES = 6  # clauses matched by trying every matching: a handful at most

KIND_ORDER = [
    "negation",
    "scope",
    "number",
    "version",
    "port",
    "date",
    "time",
    "path",
    "identifier",
    "name",
    "term",
    "role",
    "order",
]


@dataclass
class Change:
    kind: str
    old: list[str]
    new: list[str]

    def describe(self) -> str:
        old, new = ", ".join(self.old) or "—", ", ".join(self.new) or "—"
        if self.kind == "order":
            return f"order changed: {old} → {new}"
        if self.kind == "role":
            return (
                f"roles exchanged: {old} ↔ {new}"
                if self.new
                else f"role changed: {old} moved to another clause"
            )
        if self.kind == "scope":
            if self.new and not self.old:
                return f"scope changed: {new} added"
            return f"scope changed: {old} removed" if not self.new else f"scope changed: {old} → {new}"
        if self.kind == "negation":
            return (
                "negation added"
                if self.new and not self.old
                else "negation removed"
                if self.old and not self.new
                else f"negation changed: {old} → {new}"
            )
        if not self.old:
            return f"{self.kind} added: {new}"
        if not self.new:
            return f"{self.kind} removed: {old}"
        return f"{self.kind} changed: {old} → {new}"


@dataclass
class Comparison:
    changes: list[Change] = field(default_factory=list)
    identical: bool = False  # every content-bearing token the same, ordinary words included
    reworded: list[str] = field(default_factory=list)  # ordinary words that differ without changing a fact
    old_keys: set[str] = field(default_factory=set)  # tokens whose role changed, to highlight
    new_keys: set[str] = field(default_factory=set)
    spelled_out: bool = False  # an acronym spelled out on the other side (the cosine undercounts it)


def _pole(entry: str) -> str:
    """A group's entry is a pole: one word, or synonyms joined by "|" ("increase|raise"); words of
    one stem ("enable", "enabled") are one pole."""
    return stem(entry.split("|")[0])


@lru_cache(maxsize=8)
def _contrast_groups(groups: tuple[tuple[str, ...], ...]) -> dict[str, frozenset[tuple[int, str]]]:
    found: dict[str, set[tuple[int, str]]] = {}
    for index, group in enumerate(groups):
        for entry in group:
            for word in entry.split("|"):
                found.setdefault(stem(word), set()).add((index, _pole(entry)))
    return {key: frozenset(places) for key, places in found.items()}


def contrast_group_of() -> dict[str, frozenset[tuple[int, str]]]:
    """A contrast word's stem → its places: (group, pole) for each group it belongs to ("lower":
    higher/lower, upper/lower, increase/decrease)."""
    return _contrast_groups(_frozen(setting("UPSERT_CONTRAST_GROUPS")))


def _opposed(mine: frozenset, theirs: frozenset) -> set[int]:
    """The groups in which two contrast words stand at different poles."""
    return {
        group for group, pole in mine for other, their_pole in theirs if group == other and pole != their_pole
    }


@lru_cache(maxsize=8)
def _polar(groups: tuple[tuple[str, ...], ...]) -> frozenset[int]:
    return frozenset(
        index for index, group in enumerate(groups) if len({_pole(entry) for entry in group}) == 2
    )


def _polar_groups() -> frozenset[int]:
    """The contrast groups of two poles (enable/disable, include/exclude): one negated is the other."""
    return _polar(_frozen(setting("UPSERT_CONTRAST_GROUPS")))


def compare(old_text: str, new_text: str) -> Comparison:
    old, new = read(old_text), read(new_text)
    result = Comparison()
    # An acronym on one side spelled out on the other ("PR" / "pull request", "FCM" / "Firebase
    # Cloud Messaging", "MFA" / "multi-factor authentication"): neither side's words are a change.
    spelled_old, spelled_new = _spelled_out(old, new), _spelled_out(new, old)
    explained_old = spelled_old[0] | spelled_new[1]
    explained_new = spelled_new[0] | spelled_old[1]
    # A name at the start of the other text's sentence may have been read as a light verb ("Act
    # stores…" / "…, and Act stores…"): not a removed name.
    explained_old |= new.silenced
    explained_new |= old.silenced
    result.spelled_out = bool(spelled_old[0] or spelled_new[0])
    _compare_strong(old, new, result, explained_old, explained_new)
    _compare_scope(old, new, result)
    _compare_words(old, new, result, explained_old, explained_new)
    _compare_roles(old, new, result)
    result.changes.sort(key=lambda c: KIND_ORDER.index(c.kind) if c.kind in KIND_ORDER else len(KIND_ORDER))
    return result


def _surfaces(reading: Reading, keys, *, kinds=None) -> list[str]:
    shown: list[str] = []
    for token in reading.tokens:
        if token.key in keys and (kinds is None or token.kind in kinds) and token.surface not in shown:
            shown.append(token.surface)
    return shown


def _compare_strong(
    old: Reading, new: Reading, result: Comparison, explained_old=frozenset(), explained_new=frozenset()
) -> None:
    # A name at the start of a sentence reads as a word ("Snyk scans…" / "…scanned by Snyk"): a
    # strong token is matched by the same key of any kind.
    old_keys = {t.key for t in old.tokens if t.strong}
    new_keys = {t.key for t in new.tokens if t.strong}
    removed = old_keys - {t.key for t in new.tokens}
    added = new_keys - {t.key for t in old.tokens}
    removed -= _acronyms(old, removed, new) | _compounds(old, removed, new) | explained_old
    added -= _acronyms(new, added, old) | _compounds(new, added, old) | explained_new
    by_kind: dict[str, Change] = {}
    for reading, keys, attribute in ((old, removed, "old"), (new, added, "new")):
        for token in reading.tokens:
            if token.strong and token.key in keys:
                change = by_kind.setdefault(token.kind, Change(token.kind, [], []))
                values = getattr(change, attribute)
                if token.surface not in values:
                    values.append(token.surface)
    result.changes.extend(by_kind.values())


def _acronyms(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Keys of ``reading`` that are acronyms of consecutive words of ``other`` ("CAB" → "change
    advisory board", "DM" → "direct message")."""
    found = set()
    surfaces = [t.surface.lower() for t in other.tokens]
    for token in reading.tokens:
        letters = token.surface
        if token.key not in keys or not (2 <= len(letters) <= 6 and letters.isalpha() and letters.isupper()):
            continue
        size = len(letters)
        for start in range(len(surfaces) - size + 1):
            if "".join(word[:1] for word in surfaces[start : start + size]) == letters.lower():
                found.add(token.key)
                break
    return found


CAMEL_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _parts(surface: str) -> list[str]:
    """The parts an acronym may take a letter from: hyphenated parts and camel-case humps
    ("multi-factor" → multi, factor; "GitHub" → git, hub)."""
    return [hump.lower() for part in surface.split("-") for hump in CAMEL_RE.findall(part) if hump.isalpha()]


def _abbreviates(letters: str, parts: list[str]) -> bool:
    """Each part gives its first letter and maybe more of its letters in order ("DWH" → data
    warehouse, "MFA" → multi-factor authentication, "GHA" → GitHub Actions)."""
    if not parts:
        return not letters
    if not letters or letters[0] != parts[0][0]:
        return False
    for taken in range(1, len(letters) - len(parts) + 2):
        extra, rest = iter(parts[0][1:]), letters[1:taken]
        if all(letter in extra for letter in rest) and _abbreviates(letters[taken:], parts[1:]):
            return True
    return False


def _spelled_out(reading: Reading, other: Reading) -> tuple[set[str], set[str]]:
    """Acronyms of ``reading`` that ``other`` lacks and spells out in consecutive words (two parts
    at least, see ``_abbreviates``): the acronyms' keys, and the keys (and stems) of the words that
    spell them."""
    other_keys = {t.key for t in other.tokens}
    acronyms, words = set(), set()
    for token in reading.tokens:
        letters = token.surface
        if token.key in other_keys or not (
            2 <= len(letters) <= 6 and letters.isalpha() and letters.isupper()
        ):
            continue
        letters = letters.lower()
        for start in range(len(other.tokens)):
            found = False
            for end in range(start + 1, min(len(other.tokens), start + len(letters)) + 1):
                parts = [part for t in other.tokens[start:end] for part in _parts(t.surface)]
                if len(parts) >= 2 and _abbreviates(letters, parts):
                    acronyms.add(token.key)
                    words |= {k for t in other.tokens[start:end] for k in (t.key, stem(t.key))}
                    found = True
                    break
            if found:
                break
    return acronyms, words


def _compounds(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Keys of ``reading`` that are a hyphenated compound of words of ``other`` ("sign-off" →
    "sign off", "hand-edit" → "edit by hand")."""
    found = set()
    surfaces = [t.surface.lower() for t in other.tokens]
    other_keys = {t.key for t in other.tokens}
    words = synonyms()
    for token in reading.tokens:
        parts = token.surface.lower().split("-")
        if token.key not in keys or len(parts) < 2:
            continue
        size = len(parts)
        joined = "".join(parts)
        if (
            joined in other_keys  # "re-trained" / "retrained", "e-mail" / "email"
            or stem(joined) in other_keys
            or any(surfaces[s : s + size] == parts for s in range(len(surfaces) - size + 1))
            or all(part.isalpha() for part in parts)
            and all(_part_of(part, other, other_keys, words) for part in parts)
        ):
            found.add(token.key)
    return found


def _part_of(part: str, other: Reading, other_keys: set[str], words: dict[str, str]) -> bool:
    """A part of a hyphenated compound said by ``other``: the same word, one of its synonyms, two
    words written as one ("auto-rollback" / "rolled back automatically"), or a clipped word of at
    least four letters ("auto" / "automatically")."""
    if (words.get(part) or words.get(stem(part)) or stem(part)) in other_keys:
        return True
    if part in other.joined or stem(part) in other.joined:
        return True
    return len(part) >= 4 and any(key.isalpha() and key.startswith(part) for key in other_keys)


def _compare_scope(old: Reading, new: Reading, result: Comparison) -> None:
    old_scope = {t.key for t in old.tokens if t.kind == "scope"}
    new_scope = {t.key for t in new.tokens if t.kind == "scope"}
    if old_scope ^ new_scope == {"only"} and _rejected(old) & _rejected(new):
        return  # "pnpm only, not npm" ≡ "use pnpm, not npm": the rejected alternative says "only"
    if old_scope != new_scope:
        result.changes.append(
            Change("scope", _surfaces(old, old_scope - new_scope), _surfaces(new, new_scope - old_scope))
        )


def _rejected(reading: Reading) -> set[str]:
    """Keys of the things a rule rejects ("not npm", "instead of Jenkins")."""
    return {
        token.key
        for token, role in zip(reading.tokens, reading.role, strict=True)
        if role == "-" and token.kind not in ("negation", "scope", "contrast")
    }


def _compare_words(
    old: Reading, new: Reading, result: Comparison, explained_old=frozenset(), explained_new=frozenset()
) -> None:
    """Contrast words exchanged, and things replaced by others; the rest of the ordinary words
    differing is wording."""
    kinds = ("word", "contrast")
    old_keys = {stem(t.key) if t.kind == "contrast" else t.key for t in old.tokens if t.kind in kinds}
    new_keys = {stem(t.key) if t.kind == "contrast" else t.key for t in new.tokens if t.kind in kinds}
    removed = old_keys - new_keys - {t.key for t in new.tokens} - explained_old
    added = new_keys - old_keys - {t.key for t in old.tokens} - explained_new
    # An abbreviation and its word ("var" / "variable", "auth" / "authentication").
    short = {
        a for a in removed | added for b in removed | added if a != b and len(a) >= 3 and b.startswith(a)
    }
    long = {b for a in short for b in removed | added if b != a and b.startswith(a)}
    removed -= short | long
    added -= short | long
    # One word or two ("rollback" / "roll back", "login" / "log in").
    removed = {key for key in removed if key not in new.joined}
    added = {key for key in added if key not in old.joined}
    # A verb's other form ("bind" / "bound", "hold" / "held", "write" / "wrote").
    forms = {(a, b) for a in removed for b in added if _other_form(a, b)}
    removed -= {a for a, _ in forms}
    added -= {b for _, b in forms}
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
        deploy role")."""
        return {
            key
            for key in keys
            if any(
                (
                    t.kind == "word"
                    and t.key == key
                    and not reading.verbal[n]
                    and not (strict and not reading.determined[n] and never_a_thing(t.surface))
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
        partners = {other for other in added if _opposed(mine, groups.get(other, frozenset()))}
        if partners and not all(_converse(old, key, new, other) for other in partners):
            exchanged_old.add(key)
            exchanged_new |= partners
    removed -= exchanged_old
    added -= exchanged_new
    # A contrast word on one side only ("optional", "all", "production") narrows or widens the
    # fact; a preposition or a particle ("on the last day", "bring the stack up") does not.
    relations = {stem(str(word)) for word in setting("UPSERT_RELATIONS")} | prepositions

    def lone(reading: Reading, keys: set[str]) -> set[str]:
        """Contrast words that qualify a thing — not verbs ("start the job"), not relations."""
        return {
            stem(t.key)
            for n, t in enumerate(reading.tokens)
            if t.kind == "contrast"
            and stem(t.key) in keys
            and not reading.verb_like[n]
            and reading.qualifying[n]
        } - relations

    lone_old, lone_new = lone(old, removed) - _prohibitive(old), lone(new, added) - _prohibitive(new)
    removed -= lone_old
    added -= lone_new
    # A word and its negation by prefix ("safe" / "unsafe", "encrypted" / "unencrypted").
    prefixes = tuple(setting("UPSERT_NEGATING_PREFIXES"))
    negated = [(a, b) for a in removed for b in added if _negates(a, b, prefixes) or _negates(b, a, prefixes)]
    removed -= {a for a, _ in negated}
    added -= {b for _, b in negated}
    # Polarity, not count: "no migration ships without sign-off" ≡ "a migration ships after
    # sign-off"; and a negation with a polar word flipped keeps the rule: "never disable TLS
    # verification" ≡ "TLS verification stays enabled".
    polar = _polar_groups()
    flipped = {
        group
        for key in exchanged_old
        for other in exchanged_new
        for group in _opposed(groups.get(key, frozenset()), groups.get(other, frozenset()))
        if group in polar
    }
    flips = len(flipped) + len(negated)
    negation_flipped = old.negations % 2 != new.negations % 2

    def in_flipped(key: str) -> bool:
        return any(group in flipped for group, _ in groups.get(key, ()))

    if (negation_flipped + flips) % 2 == 0 and flips:
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
    result.reworded = shown(old, removed) + shown(new, added)


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
    old_kinds = {kind for kind, _ in old.quantifiers}
    new_kinds = {kind for kind, _ in new.quantifiers}
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
    heads = {
        key
        for (kind, _), words in zip(quantifying.quantifiers, quantifying.quantified, strict=True)
        if kind == "all"
        for key in words
        if key in reading.modifiers
    }
    if not heads:
        return bool(dropped)
    return any(reading.modifiers[key] & (dropped | reworded) for key in heads)


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


def _compare_roles(old: Reading, new: Reading, result: Comparison) -> None:
    if any(c.kind == "negation" for c in result.changes):
        return  # the polarity already changed; roles read against another polarity mean nothing
    swaps = _polarity_swaps(old, new) or _clause_swaps(old, new)
    for x, y in swaps[:1]:
        result.changes.append(Change("role", _surfaces(old, {x}), _surfaces(old, {y} - {""})))
        result.old_keys |= {x, y}
        result.new_keys |= {x, y}
    if swaps:
        return
    # What each relation word points at: "migrations before deploy" and "deploy before
    # migrations" differ; "before they are opened" (nothing to point at) is not compared.
    unmatched_old, unmatched_new = _unmatched_frames(old, new)
    if unmatched_old and unmatched_new:
        result.changes.append(
            Change(
                "order",
                [f"{relation} {_first_surface(old, key)}" for relation, key in unmatched_old],
                [f"{relation} {_first_surface(new, key)}" for relation, key in unmatched_new],
            )
        )
        result.old_keys |= {key for _, key in unmatched_old}
        result.new_keys |= {key for _, key in unmatched_new}
        return
    inverted = _order_inversions(old, new)
    if inverted:
        a, b = inverted
        result.changes.append(
            Change(
                "order",
                [_first_surface(old, a), _first_surface(old, b)],
                [_first_surface(new, b), _first_surface(new, a)],
            )
        )
        result.old_keys |= {a, b}
        result.new_keys |= {a, b}


def _unmatched_frames(old: Reading, new: Reading) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The frames of relations both texts use that find no frame of the other pointing at the
    same thing in the same role."""
    shared = old.relations & new.relations
    old_frames = [f for f in old.frames if f[0] in shared and f[1]]
    new_frames = [f for f in new.frames if f[0] in shared and f[1]]
    left = list(new_frames)
    unmatched_old = []
    for relation, targets, role in old_frames:
        match = next((f for f in left if f[0] == relation and f[1] & targets and f[2] == role), None)
        # The relation used once on each side, to the same thing, under another polarity role: a
        # polarity question (answered by the negations), not another order.
        once = sum(f[0] == relation for f in old_frames) == sum(f[0] == relation for f in new_frames) == 1
        if match is None and once:
            match = next((f for f in left if f[0] == relation and f[1] & targets), None)
        if match is None:
            unmatched_old.append((relation, min(targets)))
        else:
            left.remove(match)
    return unmatched_old, [(relation, min(targets)) for relation, targets, _ in left]


def _first_surface(reading: Reading, key: str) -> str:
    return next((t.surface for t in reading.tokens if t.key == key), key)


def _things(reading: Reading) -> dict[str, list[int]]:
    """Token indexes by key, for the tokens that can play a role (not verbs, not negations)."""
    found: dict[str, list[int]] = {}
    for n, token in enumerate(reading.tokens):
        if token.kind in ("negation", "scope") or reading.verbal[n]:
            continue
        found.setdefault(token.key, []).append(n)
    return found


def _polarity_swaps(old: Reading, new: Reading) -> list[tuple[str, str]]:
    """Pairs of things, one preferred and one rejected, that traded places."""
    # A thing on one side is a thing on both ("Bitly is deprecated" reads "Bitly" as an adverb).
    things = (
        (_things(old).keys() | _things(new).keys())
        & {t.key for t in old.tokens}
        & {t.key for t in new.tokens}
    )
    shared = things - {t.key for t in old.tokens + new.tokens if t.kind in ("negation", "scope")}
    roles_old = {key: {old.role[n] for n, t in enumerate(old.tokens) if t.key == key} for key in shared}
    roles_new = {key: {new.role[n] for n, t in enumerate(new.tokens) if t.key == key} for key in shared}
    demoted = [k for k in shared if roles_old[k] == {"+"} and roles_new[k] == {"-"}]
    promoted = [k for k in shared if roles_old[k] == {"-"} and roles_new[k] == {"+"}]
    return [(x, y) for x in _in_order(old, demoted) for y in _in_order(old, promoted)]


def _in_order(reading: Reading, keys) -> list[str]:
    keys = set(keys)
    ordered: list[str] = []
    for token in reading.tokens:
        if token.key in keys and token.key not in ordered:
            ordered.append(token.key)
    return ordered


def _single_clause_keys(reading: Reading) -> dict[str, int]:
    clauses: dict[str, set[int]] = {}
    for n, token in enumerate(reading.tokens):
        if token.kind in ("negation",):
            continue
        clauses.setdefault(token.key, set()).add(reading.clause[n])
    return {key: next(iter(found)) for key, found in clauses.items() if len(found) == 1}


def _clause_swaps(old: Reading, new: Reading) -> list[tuple[str, str]]:
    """Pairs of things that traded clauses. The clauses of both texts are matched so that most
    tokens keep their clause (a clause reorder moves nothing); two things each found in the
    clause matched to the other's are a swap: "the primary host accepts writes and the standby
    replays" → "the standby host accepts writes and the primary replays"."""
    old_clause, new_clause = _single_clause_keys(old), _single_clause_keys(new)
    shared = old_clause.keys() & new_clause.keys()
    sources = sorted({old_clause[k] for k in shared})
    targets = sorted({new_clause[k] for k in shared})
    if len(sources) < 2 or len(targets) < 2 or max(len(sources), len(targets)) > MAX_CLAUSES:
        return []
    scores: dict[tuple, int] = {}
    for chosen in permutations(targets, min(len(sources), len(targets))):
        mapping = dict(zip(sources, chosen, strict=False))
        scores[tuple(sorted(mapping.items()))] = sum(
            mapping.get(old_clause[k]) == new_clause[k] for k in shared
        )
    best = max(scores.values())
    ranked = [dict(mapping) for mapping, score in scores.items() if score == best]
    # Two ways to match as good as each other ("A is X and B is Y" → "B is X and A is Y"): the
    # clauses are read in their order.
    in_order = [m for m in ranked if all(m[a] < m[b] for a, b in combinations(sorted(m), 2))]
    if len(ranked) > 1 and len(in_order) != 1:
        return []  # no one way to match the clauses: nothing can be said to have moved
    mapping = in_order[0] if len(ranked) > 1 else ranked[0]
    things = _things(old).keys() & _things(new).keys()
    displaced = [k for k in _in_order(old, shared & things) if mapping.get(old_clause[k]) != new_clause[k]]

    def roles(reading: Reading, key: str) -> set[str]:
        return {reading.role[n] for n, t in enumerate(reading.tokens) if t.key == key}

    def kept_apart(x: str, y: str) -> bool:
        """One rejected and one preferred, on both sides: "don't add it to v1; add it to v2" ≡
        "it belongs in v2, not v1" whatever clause each sits in."""
        return roles(old, x) == roles(new, x) != roles(old, y) == roles(new, y)

    swaps = [
        (x, y)
        for x, y in combinations(displaced, 2)
        if mapping.get(old_clause[y]) == new_clause[x]
        and mapping.get(old_clause[x]) == new_clause[y]
        and not kept_apart(x, y)
    ]
    if swaps:
        return swaps
    # A name or number moved alone into what another clause says ("Acme is the controller and we
    # are the processor" → "we are the controller and Acme is the processor").
    names = {t.key for t in old.tokens + new.tokens if t.kind == "name"}
    old_subjects, new_subjects = _subjects(old), _subjects(new)
    moved = [
        k
        for k in displaced
        if k in names and k in old_subjects and k in new_subjects and mapping.get(old_clause[k]) is not None
    ]
    return [(k, "") for k in moved[:1]]


def _subjects(reading: Reading) -> set[str]:
    """The things that open a clause: what the clause says something about ("Acme is the
    controller"; not "require MFA", an object)."""
    return {
        token.key
        for n, token in enumerate(reading.tokens)
        if reading.leading[n] and token.kind not in ("negation", "scope") and not reading.verbal[n]
    }


def _order_inversions(old: Reading, new: Reading) -> tuple[str, str] | None:
    """Two things of one clause (on both sides) that traded places while the rest of the clause
    stays, a passive read as active: "Alice reviews Bob's PRs" → "Bob reviews Alice's PRs",
    "the frontend calls the BFF" → "the BFF calls the frontend". A clause reworded around them
    ("every API change needs an OpenAPI spec" → "update the OpenAPI spec with each API change")
    is no swap, and two nouns only count with the same verb between them on both sides (subject
    and object exchanged; "drain the node before you cordon it" → "before you cordon the node,
    drain it" is not)."""
    # A name at the start of a sentence reads as a word: strong on either side is strong; and a
    # noun is a thing on both sides.
    named = {t.key for t in old.tokens + new.tokens if t.strong}
    kinds = {t.key for t in old.tokens + new.tokens if t.kind != "word"}
    strong = named | (set(_things(old)) & set(_things(new)) - kinds)
    verbs = {t.key for r in (old, new) for n, t in enumerate(r.tokens) if r.verbal[n]}
    common = {t.key for t in old.tokens} & {t.key for t in new.tokens}

    def clauses(reading: Reading) -> dict[int, dict[str, float]]:
        """Per clause (bar agentless passives), the place of each thing it holds once."""
        counts: dict[int, Counter] = {}
        places: dict[int, dict[str, float]] = {}
        for n, t in enumerate(reading.tokens):
            if t.key in strong and reading.clause[n] not in reading.agentless:
                counts.setdefault(reading.clause[n], Counter())[t.key] += 1
                places.setdefault(reading.clause[n], {})[t.key] = reading.position[n]
        return {c: {k: p for k, p in found.items() if counts[c][k] == 1} for c, found in places.items()}

    def between(reading: Reading, clause: int, a: float, b: float) -> set[str]:
        low, high = sorted((a, b))
        return {
            t.key
            for n, t in enumerate(reading.tokens)
            if reading.clause[n] == clause and low < reading.position[n] < high and t.key in verbs
        }

    def sequence(reading: Reading, clause: int) -> list[str]:
        found = [
            (reading.position[n], t.key)
            for n, t in enumerate(reading.tokens)
            if reading.clause[n] == clause and t.key in common and t.key in strong
        ]
        return [key for _, key in sorted(found)]

    new_clauses = clauses(new)
    for old_clause, old_places in clauses(old).items():
        for new_clause, new_places in new_clauses.items():
            for a, b in combinations(_in_order(old, old_places.keys() & new_places.keys()), 2):
                if (old_places[a] < old_places[b]) == (new_places[a] < new_places[b]):
                    continue
                if (a not in named or b not in named) and not (
                    between(old, old_clause, old_places[a], old_places[b])
                    & between(new, new_clause, new_places[a], new_places[b])
                ):
                    continue
                swapped = [b if key == a else a if key == b else key for key in sequence(old, old_clause)]
                if swapped == sequence(new, new_clause):
                    return a, b
    return None
