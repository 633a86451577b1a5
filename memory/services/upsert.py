"""The upsert decision (DESIGN.md §4.3): is a new memory the same fact as an old one, a changed
fact, or something else? A pure function of both sides — text, similarity, entities, category —
with no database access, so it can be tested on thousands of labeled pairs.

A fact is never silently lost, so the rule leans one way: NOOP only when the new text adds
nothing. Two texts say the same thing when every *content-bearing* token matches, in the same
order where order carries meaning. Content-bearing here is broad on purpose: every word that is
not a function word (after case folding, light stemming, number words → digits and a small table
of engineering synonyms), because a team or project name ("the platform team" → "the payments
team") is as much a fact as a version number. Tokens are classed (number, version, port, date,
time, path, identifier, name, negation, contrast, word) so the reason can say what changed.

Decisions, for a new memory against each neighbour of a compatible scope (closest first):
- scope: entities of one kind on both sides and disjoint (another project, person, feature…)
  → never the same fact, never superseded;
- NOOP: the same normalized text, or a close text (near-identical: cosine ≥ NOOP_COSINE or
  Jaccard ≥ NOOP_JACCARD; or a paraphrase at cosine ≥ UPDATE_COSINE) whose content-bearing tokens
  are all the same, in the same order — the reinforcement keeps the incoming text, so nothing
  is lost;
- UPDATE (a changed fact): close, same category, some content-bearing token differs → the new
  memory supersedes the old one and a curator reviews the pair;
- otherwise ADD.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from memory.conf import setting

ADD, UPDATE, NOOP = "ADD", "UPDATE", "NOOP"

WORD_RE = re.compile(r"[a-z0-9]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def normalize_text(text: str) -> str:
    """Case, Unicode form and whitespace do not make two memories different."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


# Both are asked of the same texts again and again (a batch of at most MAX_BATCH compares each item
# with every earlier one): cached per text, a bounded number of texts of at most MAX_CONTENT_CHARS.
@lru_cache(maxsize=1024)
def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode()).hexdigest()


@lru_cache(maxsize=1024)
def token_set(text: str) -> frozenset[str]:
    return frozenset(WORD_RE.findall(normalize_text(text)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


# --- content-bearing tokens ---------------------------------------------------------------------

# One token of text: a code span, a path, a date, a time, a number with its unit, a version, an
# identifier (dotted, snake, kebab, camel, ALL_CAPS), a word (with an apostrophe), or a symbol
# that carries meaning (<, >, ≤, ≥, =, !=).
RAW_TOKEN_RE = re.compile(
    r"""
    (?P<code>`[^`\n]+`)
  | (?P<url>\b[a-z][a-z0-9+.-]*://[^\s`'"<>)\]]+)
  | (?P<path>(?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+*-]*|\b[\w-]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|toml|md|txt|sh|cfg|ini|env|lock|go|rs|rb|java|kt|swift|sql|html|css|conf)\b)
  | (?P<date>\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b)
  | (?P<time>\b\d{1,2}(?::\d{2})+\s?(?:[ap]\.?m\.?)?(?![\w:])|\b\d{1,2}\s?[ap]\.?m\.?(?![\w]))
  | (?P<word>[\w][\w'’]*(?:[.:@+#/-][\w'’]+)*[+#]*%?)
  | (?P<symbol><=|>=|!=|==|=>|->|[<>≤≥=→])
    """,
    re.VERBOSE | re.IGNORECASE,
)

NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000", "twice": "2x", "once": "1x", "thrice": "3x",
    "single": "1", "double": "2x", "half": "0.5", "dozen": "12",
}  # fmt: skip

UNITS = {
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms", "msec": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d", "w": "wk", "wk": "wk", "week": "wk", "weeks": "wk",
    "month": "mo", "months": "mo", "y": "yr", "yr": "yr", "year": "yr", "years": "yr",
    "b": "b", "byte": "b", "bytes": "b", "kb": "kb", "kib": "kb", "k": "k",
    "mb": "mb", "mib": "mb", "megabyte": "mb", "megabytes": "mb",
    "gb": "gb", "gib": "gb", "gigabyte": "gb", "gigabytes": "gb",
    "tb": "tb", "tib": "tb", "terabyte": "tb", "terabytes": "tb",
    "%": "%", "percent": "%", "pct": "%", "x": "x", "times": "x",
    "px": "px", "rem": "rem", "em": "em", "rpm": "rpm", "rps": "rps", "qps": "qps",
    "cpu": "cpu", "cpus": "cpu", "core": "core", "cores": "core", "vcpu": "cpu", "vcpus": "cpu",
    "gbps": "gbps", "mbps": "mbps", "retries": "retry", "retry": "retry", "attempts": "attempt",
    "attempt": "attempt", "replicas": "replica", "replica": "replica", "workers": "worker",
    "worker": "worker", "threads": "thread", "thread": "thread", "connections": "conn",
    "connection": "conn", "items": "item", "rows": "row", "row": "row", "chars": "char",
    "characters": "char", "lines": "line", "line": "line", "tokens": "token", "users": "user",
}  # fmt: skip

MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
    "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9,
    "sept": 9, "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12,
    "december": 12,
}  # fmt: skip
WEEKDAYS = {
    "mon": "monday", "monday": "monday", "mondays": "monday", "tue": "tuesday", "tues": "tuesday",
    "tuesday": "tuesday", "tuesdays": "tuesday", "wed": "wednesday", "wednesday": "wednesday",
    "wednesdays": "wednesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday",
    "thursday": "thursday", "thursdays": "thursday", "fri": "friday", "friday": "friday",
    "fridays": "friday", "sat": "saturday", "saturday": "saturday", "saturdays": "saturday",
    "sun": "sunday", "sunday": "sunday", "sundays": "sunday",
}  # fmt: skip

# Words that carry no fact on their own. Contrast and negation words are never in here (they are
# checked first), and neither is anything that names a thing.
FUNCTION_WORDS = _words(
    """
    a an the this that these those it its it's they them their there here we us our you your i me my
    he she his her him is are was were be been being am do does did doing done have has had having
    will would shall should can could may might must to of in on at by for with as from into onto
    about and or but so if then than also just only very really too quite rather still even
    which who whom whose what when where why how all any each every some such both either
    one's own same other another more most much many few lot lots
    please note remember make sure ensure keep ok okay well actually basically
    get gets got getting let lets let's via per
    """
)
# A word in UPSERT_CONTRAST_GROUPS is content-bearing whatever this list says ("more", "most").

NEGATIONS = _words(
    """
    not no never none nothing nobody nowhere neither nor without cannot can't cant don't dont
    doesn't doesnt didn't didnt isn't isnt aren't arent wasn't wasnt weren't werent won't wont
    wouldn't wouldnt shouldn't shouldnt mustn't mustnt needn't neednt haven't havent hasn't hasnt
    hadn't hadnt couldn't couldnt mightn't avoid
    """
)

# Words whose swap reverses a relation: the order of what stands around them matters.
RELATIONAL = _words("before after than instead over from to into vs versus then above below until")


@lru_cache(maxsize=8)
def _contrast_words(groups: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    return frozenset(word for group in groups for word in group)


@lru_cache(maxsize=8)
def _synonym_map(groups: tuple[tuple[str, ...], ...]) -> dict[str, str]:
    """Every word of a group (and its stem) → the group's first word."""
    mapping = {}
    for group in groups:
        for word in group:
            mapping[word] = group[0]
            mapping.setdefault(stem(word), group[0])
    return mapping


def _frozen(groups) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(word).lower() for word in group) for group in groups)


def contrast_words() -> frozenset[str]:
    return _contrast_words(_frozen(setting("UPSERT_CONTRAST_GROUPS")))


def synonyms() -> dict[str, str]:
    return _synonym_map(_frozen(setting("UPSERT_SYNONYMS")))


def phrase_rewrites() -> list[tuple[re.Pattern, str]]:
    return _phrase_patterns(tuple(tuple(pair) for pair in setting("UPSERT_PHRASES")))


@lru_cache(maxsize=8)
def _phrase_patterns(pairs: tuple[tuple[str, str], ...]) -> list[tuple[re.Pattern, str]]:
    return [
        (re.compile(rf"\b{re.escape(phrase)}\b", re.IGNORECASE), replacement) for phrase, replacement in pairs
    ]


def _rewrite_phrases(text: str) -> str:
    """Multi-word phrases → one word ("make sure" → "ensure"), padded with spaces so every token
    keeps its position in the original text (for highlighting)."""
    for pattern, replacement in phrase_rewrites():
        text = pattern.sub(
            lambda m, r=replacement: r.ljust(len(m.group())) if len(r) <= len(m.group()) else m.group(), text
        )
    return text


def stem(word: str) -> str:
    """A light suffix stripper: deploy, deploys, deployed, deploying → deploy; cache, cached → cach."""
    if not word.isalpha() or len(word) <= 3:
        return word
    for suffix, replacement in (
        ("ies", "y"),
        ("ied", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", "e"),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                continue
            word = word[: len(word) - len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


@dataclass(frozen=True)
class Token:
    key: str  # what is compared
    kind: str  # number, version, port, date, time, path, identifier, name, negation, contrast, word
    surface: str  # as written, for reasons and highlighting
    start: int
    end: int

    @property
    def strong(self) -> bool:
        """Tokens whose order is the fact (a name, a number, an identifier)."""
        return self.kind not in ("word", "contrast", "negation")


IDENTIFIER_RE = re.compile(r"[._:/@#+-]|\d|[a-z][A-Z]|^[A-Z0-9_]{2,}$")
VERSION_RE = re.compile(r"^v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$|^v\d+$", re.IGNORECASE)
NUMBER_RE = re.compile(r"^[+-]?\d+(?:[.,]\d+)*-?(?P<unit>[a-z%]+)?$", re.IGNORECASE)
SENTENCE_END_RE = re.compile(r"[.!?:;]\s*$|^\s*$")


def _is_sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'([{*-•")
    return not before or bool(SENTENCE_END_RE.search(before)) or before.endswith("\n")


CALENDAR_FULL_NAMES = _words(
    "january february march april june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays "
    "fridays saturdays sundays"
)


def _is_calendar_word(text: str, surface: str, start: int) -> bool:
    """ "March", "Friday" always; "May" and abbreviations ("Sat", "Mar") only when capitalized
    mid-sentence, so the verbs "may", "sat" and "mar" stay words."""
    if surface.lower() in CALENDAR_FULL_NAMES:
        return True
    return surface[:1].isupper() and not _is_sentence_start(text, start)


def _number_kind(previous: str) -> str:
    if previous in ("port", "ports", "listens", "localhost", "on"):
        return "port"
    if previous in (
        "version",
        "v",
        "node",
        "python",
        "java",
        "go",
        "ruby",
        "php",
        "postgres",
        "postgresql",
        "ios",
        "android",
        "api",
    ):
        return "version"
    return "number"


def content_tokens(text: str) -> list[Token]:
    """The content-bearing tokens of ``text``, in order. Pure; the same text gives the same list."""
    text = _rewrite_phrases(unicodedata.normalize("NFKC", text))
    contrast, synonym = contrast_words(), synonyms()
    tokens: list[Token] = []
    previous_word = ""
    matches = list(RAW_TOKEN_RE.finditer(text))
    index = 0
    while index < len(matches):
        match = matches[index]
        group, surface = match.lastgroup, match.group()
        start, end = match.span()
        index += 1
        if group == "code":
            tokens.append(Token(surface.strip("`").strip().lower(), "identifier", surface, start, end))
        elif group in ("path", "url"):
            surface = surface.rstrip(".,;:")
            end = start + len(surface)
            tokens.append(Token(surface.lower().rstrip("/"), "path", surface, start, end))
        elif group == "date":
            tokens.append(Token(_normalize_date(surface), "date", surface, start, end))
        elif group == "time":
            tokens.append(Token(_normalize_time(surface), "time", surface, start, end))
        elif group == "symbol":
            tokens.append(
                Token(
                    {"≤": "<=", "≥": ">=", "→": "->", "=>": "->"}.get(surface, surface),
                    "contrast",
                    surface,
                    start,
                    end,
                )
            )
        else:
            token, consumed = _word_token(text, match, matches[index:], previous_word, contrast, synonym)
            index += consumed
            if token is not None:
                tokens.extend(token)
        previous_word = surface.lower()
    return tokens


def _normalize_date(surface: str) -> str:
    parts = re.split(r"[-/]", surface)
    if len(parts[0]) == 4:
        year, month, day = parts
    else:
        month, day, year = parts
    return f"{int(year):04d}-{int(month):02d}-{int(day):02d}" if year.isdigit() else surface.lower()


def _normalize_time(surface: str) -> str:
    lowered = surface.lower().replace(".", "").replace(" ", "")
    meridiem = "pm" if lowered.endswith("pm") else "am" if lowered.endswith("am") else ""
    digits = lowered.rstrip("apm")
    hour, _, rest = digits.partition(":")
    hour_number = int(hour) if hour.isdigit() else 0
    if meridiem == "pm" and hour_number < 12:
        hour_number += 12
    if meridiem == "am" and hour_number == 12:
        hour_number = 0
    minutes = rest or "00"
    return f"{hour_number:02d}:{minutes}"


def _word_token(text, match, following, previous_word, contrast, synonym) -> tuple[list[Token] | None, int]:
    """One word match → its tokens (a contraction gives two), and how many following matches it
    took (a unit after a number)."""
    surface = match.group().rstrip("'’")
    start, end = match.span()
    lowered = surface.lower().replace("’", "'")
    if lowered.endswith("'s") and not lowered.startswith(
        ("it's", "let's", "that's", "what's", "here's", "there's")
    ):
        lowered = lowered[:-2]
    # A number, with its unit attached ("5GB") or following ("5 GB", "30 seconds").
    bare = lowered.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", lowered) else lowered
    number = NUMBER_RE.match(bare)
    is_number_word = lowered in NUMBER_WORDS
    if number or is_number_word:
        value = NUMBER_WORDS.get(lowered, bare)
        unit = ""
        if number and number.group("unit"):
            unit_text = number.group("unit").lower()
            unit = UNITS.get(unit_text, unit_text)
            value = value[: len(value) - len(number.group("unit"))].rstrip("-")
        consumed = 0
        if not unit and following:
            nxt = following[0]
            gap = text[end : nxt.start()]
            candidate = nxt.group().lower()
            if (
                nxt.lastgroup in ("word", "symbol")
                and gap.strip() in ("", "-")
                and candidate in UNITS
                and len(gap) <= 1
            ):
                unit, consumed, end = UNITS[candidate], 1, nxt.end()
        if VERSION_RE.match(value):
            kind = "version"
        elif (
            value.isdigit()
            and 1024 <= int(value) <= 65535
            and previous_word in ("port", "on", "listens", "localhost")
        ):
            kind = "port"
        elif is_number_word and not unit and lowered in ("one", "single"):
            return None, consumed  # "one" is more often an article than a count
        else:
            kind = _number_kind(previous_word) if not unit else "number"
        return [Token(value + unit, kind, text[start:end], start, end)], consumed
    if VERSION_RE.match(lowered):
        return [Token(lowered.lstrip("v"), "version", surface, start, end)], 0
    if (lowered in MONTHS or lowered in WEEKDAYS) and _is_calendar_word(text, surface, start):
        key = f"month-{MONTHS[lowered]:02d}" if lowered in MONTHS else WEEKDAYS[lowered]
        return [Token(key, "date", surface, start, end)], 0
    if lowered in NEGATIONS:
        return [Token("not", "negation", surface, start, end)], 0
    if lowered.endswith("n't"):
        return [Token("not", "negation", surface, start, end)], 0
    if lowered in contrast:
        return [Token(synonym.get(lowered, lowered), "contrast", surface, start, end)], 0
    mapped = synonym.get(lowered) or (synonym.get(stem(lowered)) if lowered.isalpha() else None)
    if mapped:
        return [Token(mapped, "contrast" if mapped in contrast else "word", surface, start, end)], 0
    if IDENTIFIER_RE.search(surface) and not surface.isalpha():
        return [Token(lowered, "identifier", surface, start, end)], 0
    if re.fullmatch(r"[A-Z0-9_]{2,}", surface) or re.search(r"[a-z][A-Z]", surface):
        return [Token(lowered, "identifier", surface, start, end)], 0
    if lowered in FUNCTION_WORDS or "'" in lowered:
        return None, 0
    if surface[:1].isupper() and not _is_sentence_start(text, start):
        return [Token(stem(lowered), "name", surface, start, end)], 0
    return [Token(stem(lowered), "word", surface, start, end)], 0


def _relational_frame(
    tokens: Sequence[Token], text: str, relations: frozenset[str]
) -> list[tuple[str, str, str]]:
    """For each relation word (before, than, instead, from, to…) that both texts use, in order, the
    content token it points at (and, for the reason, the words around it): "migrations before
    deploy" and "deploy before migrations" differ here, while "before pushing, run tests" and "run
    tests before pushing" do not."""
    frames = []
    for match in re.finditer(r"[a-z]+", text.lower()):
        if match.group() not in relations:
            continue
        right = next((t for t in tokens if t.start > match.start()), None)
        if right is None:
            continue
        left = next((t.surface for t in reversed(tokens) if t.end <= match.start()), "")
        shown = " ".join(part for part in (left, text[match.start() : match.end()], right.surface) if part)
        frames.append((match.group(), right.key, shown))
    return frames


# --- the decision -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One memory as the decision sees it."""

    text: str
    category: str = ""
    entities: Mapping[str, frozenset[str]] = field(default_factory=dict)  # entity type → slugs
    ref: object = None  # the memory (or its id) this side stands for


@dataclass
class Change:
    kind: str
    old: list[str]
    new: list[str]

    def describe(self) -> str:
        old, new = ", ".join(self.old) or "—", ", ".join(self.new) or "—"
        if self.kind == "order":
            return f"order changed: {old} → {new}"
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
    """What a reader would call a different fact between two texts: the content-bearing tokens that
    were removed, added or replaced (grouped by kind), and relations whose order flipped. Empty
    when every content-bearing token is the same, in the same order."""
    old_tokens, new_tokens = content_tokens(old_text), content_tokens(new_text)
    old_counts = Counter(t.key for t in old_tokens)
    new_counts = Counter(t.key for t in new_tokens)
    removed_keys = old_counts - new_counts
    added_keys = new_counts - old_counts
    changes: list[Change] = []
    if removed_keys or added_keys:
        by_kind: dict[str, Change] = {}

        def collect(tokens: list[Token], keys: Counter, attribute: str) -> None:
            remaining = Counter(keys)
            for token in tokens:
                if remaining[token.key] > 0:
                    remaining[token.key] -= 1
                    kind = token.kind if token.kind not in ("contrast", "word") else "term"
                    change = by_kind.setdefault(kind, Change(kind, [], []))
                    values = getattr(change, attribute)
                    if token.surface not in values:
                        values.append(token.surface)

        collect(old_tokens, removed_keys, "old")
        collect(new_tokens, added_keys, "new")
        order = [
            "negation",
            "number",
            "version",
            "port",
            "date",
            "time",
            "path",
            "identifier",
            "name",
            "term",
        ]
        changes = sorted(
            by_kind.values(), key=lambda c: order.index(c.kind) if c.kind in order else len(order)
        )
        return changes
    old_strong = [t.key for t in old_tokens if t.strong]
    new_strong = [t.key for t in new_tokens if t.strong]
    if old_strong != new_strong:
        return [Change("order", _surfaces(old_tokens, strong=True), _surfaces(new_tokens, strong=True))]
    shared = (
        RELATIONAL & _words(_rewrite_phrases(old_text).lower()) & _words(_rewrite_phrases(new_text).lower())
    )
    old_frames = _relational_frame(old_tokens, old_text, shared)
    new_frames = _relational_frame(new_tokens, new_text, shared)
    if [frame[:2] for frame in old_frames] != [frame[:2] for frame in new_frames]:
        # In order: "staging to production, not production to staging" reversed is another rule.
        flipped_old = [frame[2] for frame in old_frames]
        flipped_new = [frame[2] for frame in new_frames]
        return [Change("order", flipped_old, flipped_new)]
    return []


def _surfaces(tokens: list[Token], *, strong: bool) -> list[str]:
    return [t.surface for t in tokens if t.strong or not strong]


def same_fact(old_text: str, new_text: str) -> bool:
    return not compare_facts(old_text, new_text)


def decide_pair(new: Side, old: Side, cosine: float, *, same_lesson_cosine: float | None = None) -> Decision:
    """The verdict of one new memory against one existing memory. With ``same_lesson_cosine``
    (extraction), a rewording at that cosine or above that changes no fact — only ordinary words
    differ, or a detail is added or left out, but no number, version, name, identifier, path or
    date is replaced and no negation or order changes — is the same lesson: NOOP."""
    overlap = jaccard(token_set(new.text), token_set(old.text))
    conflict = scope_conflict(new.entities, old.entities)
    if conflict:  # even the same text: DESIGN.md §4.3, another scope is never a duplicate
        return Decision(ADD, f"different scope ({conflict})", old.ref, cosine, overlap)
    if content_hash(new.text) == content_hash(old.text):
        return Decision(NOOP, "same text", old.ref, cosine, 1.0)
    near_identical = cosine >= setting("NOOP_COSINE") or overlap >= setting("NOOP_JACCARD")
    close = near_identical or cosine >= setting("UPDATE_COSINE")
    lesson = same_lesson_cosine is not None and cosine >= same_lesson_cosine
    if not (close or lesson) and cosine < setting("UPSERT_SAME_TOKENS_COSINE"):
        return Decision(ADD, f"no close memory (closest cosine {cosine:.2f})", old.ref, cosine, overlap)
    changes = compare_facts(old.text, new.text)
    if not changes:
        wording = "near-identical" if near_identical else "reworded"
        return Decision(NOOP, f"{wording}, every content-bearing token the same", old.ref, cosine, overlap)
    if lesson and all(_elaborates(change) for change in changes):
        return Decision(NOOP, "the same lesson in other words (no fact changed)", old.ref, cosine, overlap)
    if not close:
        return Decision(ADD, f"no close memory (closest cosine {cosine:.2f})", old.ref, cosine, overlap)
    if old.category and new.category and old.category != new.category:
        reason = f"close text but another category ({old.category} → {new.category})"
        return Decision(ADD, reason, old.ref, cosine, overlap)
    reason = "; ".join(change.describe() for change in changes)
    return Decision(UPDATE, reason, old.ref, cosine, overlap, changed_fact=True, changes=changes)


def _elaborates(change: Change) -> bool:
    """A difference that rewords or adds detail without changing a fact: ordinary words, or a
    name, number or identifier only added or only left out — never one replaced by another, and
    never a negation or an order."""
    if change.kind == "term":
        # Many words differ: the same thing said another way. One or two swapped for one or two
        # ("pnpm" → "yarn", "platform team" → "payments team") is a changed fact.
        return not (change.old and change.new) or len(change.old) > 2 or len(change.new) > 2
    return change.kind not in ("negation", "order") and not (change.old and change.new)


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
    lacks: what the changed-fact review shows side by side."""
    mine, theirs = content_tokens(text), content_tokens(other)
    missing = Counter(t.key for t in mine) - Counter(t.key for t in theirs)
    pieces, cursor = [], 0
    for token in mine:
        if missing[token.key] > 0 and token.start >= cursor:
            missing[token.key] -= 1
            if token.start > cursor:
                pieces.append((text[cursor : token.start], False))
            pieces.append((text[token.start : token.end], True))
            cursor = token.end
    if cursor < len(text):
        pieces.append((text[cursor:], False))
    return pieces
