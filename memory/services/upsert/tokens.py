"""Content-bearing tokens (DESIGN.md §4.3): what of a text can make it another fact.

Content-bearing here is broad on purpose: every word that is not a function word (after case
folding, light stemming, number words → digits and a small table of engineering synonyms), because
a team or project name ("the platform team" → "the payments team") is as much a fact as a version
number. Tokens are classed (number, version, port, date, time, path, identifier, name, negation,
scope, contrast, word) so the reason can say what changed. Words of obligation ("must", "always",
"make sure") and light verbs ("use", "go") are read as nothing: they reword a rule, they do not
change it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memory.conf import setting

ADD, UPDATE, NOOP = "ADD", "UPDATE", "NOOP"

WORD_RE = re.compile(r"[^\W_]+")  # letters and digits of any script: Cyrillic or Hangul words are words


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
  | (?P<channel>(?<![\w&#])\#[a-z][\w-]*)
  | (?P<time>\b\d{1,2}(?::\d{2})+\s?(?:[ap]\.?m\.?)?(?![\w:])|\b\d{1,2}\s?[ap]\.?m\.?(?![\w]))
  | (?P<word>\d{1,3}(?:,\d{3})+(?![\d,])|[\w][\w'’]*(?:[.:@+#/-][\w'’]+)*[+#]*%?)
  | (?P<symbol><=|>=|!=|==|=>|->|[<>≤≥=→])
    """,
    re.VERBOSE | re.IGNORECASE,
)

# A rate's unit written with a slash ("req/min", "ops/s"), not a path.
RATE_RE = re.compile(r"[a-z]{1,5}/(?:ms|s|sec|min|h|hr|d|day)", re.IGNORECASE)

# Letters at least of a contrast word whose adverb in -ly is that word ("synchronously", "internally");
# shorter ones are other words ("only", "closely", "strictly off-limits", "locally" against "on your laptop").
ADVERB_BASE = 7

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
    "b": "b", "byte": "b", "bytes": "b", "kb": "kb", "kib": "kb", "kilobyte": "kb", "kilobytes": "kb", "k": "k",
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

TIME_UNITS = frozenset({"ms", "s", "min", "h", "d", "wk", "mo", "yr"})
# Units of a fixed length (months and years have none), largest first, in milliseconds.
FIXED_DURATIONS = {"wk": 604_800_000, "d": 86_400_000, "h": 3_600_000, "min": 60_000, "s": 1000, "ms": 1}


def _amount(value: str, unit: str) -> str:
    """A number and its unit as a key; a duration in the largest unit it is a whole number of, so
    "a week" ≡ "7 days", "90 minutes" ≡ "1.5 hours", "24h" ≡ "1 day"."""
    if unit not in FIXED_DURATIONS or not re.fullmatch(r"\d+(?:\.\d+)?", value):
        return value + unit
    total = round(float(value) * FIXED_DURATIONS[unit], 3)
    for name, size in FIXED_DURATIONS.items():
        if total >= size and float(total / size).is_integer():
            return f"{int(total // size)}{name}"
    return value + unit


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
    about and or but so if then than also just very really too quite rather still even already yet
    through around across along within behind beside between among toward towards upon against
    during via while whereas although though because since whenever instead there
    which who whom whose what when where why how all any each every some such both either
    whoever whichever whatever
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
    hadn't hadnt couldn't couldnt mightn't avoid unless
    """
)


@lru_cache(maxsize=8)
def _contrast_words(groups: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    return frozenset(word for group in groups for pole in group for word in pole.split("|"))


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


@lru_cache(maxsize=8)
def _word_list(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(str(word).lower() for word in words)


@lru_cache(maxsize=8)
def _stems(words: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(word) for word in words)


def word_setting(name: str) -> frozenset[str]:
    """A word list of the rule book (UPSERT_MODAL_WORDS, UPSERT_SCOPE_WORDS…) as a set."""
    return _word_list(tuple(setting(name)))


def phrase_rewrites() -> list[tuple[re.Pattern, str]]:
    return _phrase_patterns(tuple(tuple(pair) for pair in setting("UPSERT_PHRASES")))


# A number ahead: digits, a number's word, or "a"/"an" before a unit of time ("within a week").
NUMBER_AHEAD = (
    r"(?=\s*(?:\d|(?:"
    + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
    + r")\b|an?\s+(?:second|minute|hour|day|week|month|quarter|year)\b))"
)


@lru_cache(maxsize=8)
def _phrase_patterns(pairs: tuple[tuple[str, str], ...]) -> list[tuple[re.Pattern, str]]:
    """A phrase ending in " #" matches only before a number, in digits or in words ("up to 3" → "most
    3", not "round up to");
    one starting with "# " only after a number and its unit ("48 hours or more" → "48 hours least")."""
    patterns = []
    for phrase, replacement in pairs:
        words, number = (phrase[:-2], NUMBER_AHEAD) if phrase.endswith(" #") else (phrase, r"\b")
        before = r"\b"
        if words.startswith("# "):
            words, before = words[2:], r"(?P<number>\d\s*(?:[^\W\d_]+\s+)?)"
        patterns.append((re.compile(rf"{before}{re.escape(words)}{number}", re.IGNORECASE), replacement))
    return patterns


def _rewrite(match: re.Match, replacement: str) -> str:
    """The phrase replaced, padded to its length (a longer replacement leaves it as written); the
    number before it kept."""
    kept = match.groupdict().get("number") or ""
    phrase = match.group()[len(kept) :]
    return kept + (replacement.ljust(len(phrase)) if len(replacement) <= len(phrase) else phrase)


# A time said in words ("four in the morning", "8 in the evening", "noon", "midnight") is the time
# written as a clock reads it ("4am", "8pm", "12pm", "12am").
SPOKEN_TIME_RE = re.compile(
    r"\b(?P<hour>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?:\s+o['’]clock)?"
    r"\s+in\s+the\s+(?P<part>morning|afternoon|evening)\b|\b(?P<noon>noon|midday)\b|\b(?P<midnight>midnight)\b",
    re.IGNORECASE,
)


def _spoken_time(match: re.Match) -> str:
    if match.group("noon"):
        clock = "12pm"
    elif match.group("midnight"):
        clock = "12am"
    else:
        hour = NUMBER_WORDS.get(match.group("hour").lower(), match.group("hour"))
        clock = hour + ("am" if match.group("part").lower() == "morning" else "pm")
    return clock.ljust(len(match.group()))


def _rewrite_phrases(text: str) -> str:
    """Multi-word phrases → one word ("make sure" → "ensure"), padded with spaces so every token
    keeps its position in the original text (for highlighting); and a negated comparative read as
    its bound ("no user gets more than one" ≡ "each user gets at most one"); and "out of" or
    "away from" after a verb of keeping read as "not in" ("keep tokens out of the logs" ≡ "tokens
    are never in the logs")."""
    text = SPOKEN_TIME_RE.sub(_spoken_time, text)
    text = _kept_out_pattern(tuple(setting("UPSERT_KEEPING_VERBS"))).sub(
        lambda m: m.group("head") + "not in".ljust(len(m.group("out"))), text
    )
    for pattern, replacement in phrase_rewrites():
        text = pattern.sub(lambda m, r=replacement: _rewrite(m, r), text)
    for comparative, bound in setting("UPSERT_NEGATED_COMPARATIVES").items():
        pattern = _negated_comparative(comparative)
        text = pattern.sub(
            lambda m, b=bound: (
                " " * len(m.group("negation")) + m.group("middle") + b.ljust(len(m.group("bound")))
            ),
            text,
        )
    return text


@lru_cache(maxsize=8)
def _kept_out_pattern(verbs: tuple[str, ...]) -> re.Pattern:
    """A verb of keeping, then "out of" or "away from" in the same clause."""
    alternatives = "|".join(re.escape(verb) for verb in verbs)
    return re.compile(
        rf"(?P<head>\b(?:{alternatives})\b[^,;:.!?]{{0,80}}?)(?P<out>\bout of\b|\baway from\b)", re.IGNORECASE
    )


@lru_cache(maxsize=32)
def _negated_comparative(comparative: str) -> re.Pattern:
    """A negation — "no", "not", "never", or one contracted ("shouldn't", read so by the phrases) —
    then the comparative in the same clause; one ending in " #" only before a number."""
    words, end = (comparative[:-2], r"(?=\s*\d)") if comparative.endswith(" #") else (comparative, r"\b")
    return re.compile(
        rf"\b(?P<negation>no|not|never|nobody|none|cannot|\w+n['’]t)(?![\w'’])(?P<middle>[^,.;:!?]*?)"
        rf"(?P<bound>\b{re.escape(words)}{end})",
        re.IGNORECASE,
    )


def stem(word: str) -> str:
    """A light suffix stripper: deploy, deploys, deployed, deploying → deploy; cache, cached → cach."""
    if not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("s") and word[:-1].endswith(("ation", "ator")):
        word = word[:-1]
    for suffix, replacement in (("ation", "ate"), ("ator", "ate")):  # concatenation ≡ concatenate
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return stem(word[: len(word) - len(suffix)] + replacement)
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
            if suffix in ("ing", "ed") and not re.search(r"[aeiouy]", word[: len(word) - len(suffix)]):
                continue  # "string", "thing", "shed"
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
    kind: str  # number, version, port, date, time, path, identifier, name, negation, scope, contrast, word
    surface: str  # as written, for reasons and highlighting
    start: int
    end: int

    @property
    def strong(self) -> bool:
        """Tokens whose order is the fact (a name, a number, an identifier)."""
        return self.kind not in ("word", "contrast", "negation", "scope")


IDENTIFIER_RE = re.compile(r"[._:/@#+-]|\d|[a-z][A-Z]|^[A-Z0-9_]{2,}$")
VERSION_RE = re.compile(r"^v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$|^v\d+$", re.IGNORECASE)
NUMBER_RE = re.compile(r"^[+-]?\d+(?:[.,]\d+)*-?(?P<unit>[a-z%]+)?$", re.IGNORECASE)
SENTENCE_END_RE = re.compile(r"[.!?:;]\s*$|^\s*$")
# A word with an affix that says what the rule does to it: its stem, then the marker.
AFFIXED_WORDS = (
    # "non-deterministic" ≡ "not deterministic". Only "non-": with a hyphen the other prefixes of
    # UPSERT_NEGATING_PREFIXES mostly negate nothing ("in-house", "in-memory").
    (re.compile(r"non-([a-z]{3,})"), "not", "negation"),
    (re.compile(r"([a-z][a-z-]{2,}[a-z])-only"), "only", "scope"),  # "an admin-only action" ≡ "only admins"
    (re.compile(r"([a-z]{3,})-free"), "not", "negation"),  # "deploy-free" ≡ "no deploys"
)


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
    silent = word_setting("UPSERT_MODAL_WORDS") | word_setting("UPSERT_LIGHT_VERBS")
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
        elif group == "path" and RATE_RE.fullmatch(surface.rstrip(".,;:")):
            continue  # "req/min", "ops/s": a rate's unit, said "per minute" on the other side
        elif group in ("path", "url"):
            surface = surface.rstrip(".,;:")
            end = start + len(surface)
            tokens.append(Token(surface.lower().rstrip("/"), "path", surface, start, end))
        elif group == "date":
            tokens.append(Token(_normalize_date(surface), "date", surface, start, end))
        elif group == "channel":  # "#releases": a chat channel is a name, whatever its word
            tokens.append(Token(surface.lower(), "identifier", surface, start, end))
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
            token, consumed = _word_token(
                text, match, matches[index:], previous_word, contrast, synonym, silent
            )
            index += consumed
            if token is not None:
                tokens.extend(token)
        previous_word = surface.lower()
    return tokens


def silenced_at_start(text: str) -> frozenset[str]:
    """Keys of the capitalized words at a sentence start that ``content_tokens`` reads as nothing
    (a light verb or a modal: "Use …", "Act …"). Mid-sentence the same word may be a name ("…, and
    Act stores the data"), so the other text's name of that key is not a removed name."""
    text = _rewrite_phrases(unicodedata.normalize("NFKC", text))
    silent = word_setting("UPSERT_MODAL_WORDS") | word_setting("UPSERT_LIGHT_VERBS")
    return frozenset(
        stem(match.group().lower())
        for match in RAW_TOKEN_RE.finditer(text)
        if match.lastgroup == "word"
        and match.group()[:1].isupper()
        and match.group().lower() in silent
        and _is_sentence_start(text, match.start())
    )


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


# What follows "once" when it counts ("once per sprint", "once before the release"; "once a day" too).
ONCE_COUNTED = _words("per every each more again in on at for before after during within")
DETERMINERS = _words(
    "the a an this that these those its their our your his her my every each all any some no it they we "
    "you he she i there"
)


# After a word of UPSERT_SCOPE_WORDS_BEFORE_THINGS, these make it a scope ("just for lab access").
SCOPE_PREPOSITIONS = _words("for in on at to from with by during within")


def _word_token(
    text, match, following, previous_word, contrast, synonym, silent
) -> tuple[list[Token] | None, int]:
    """One word match → its tokens (a contraction gives two), and how many following matches it
    took (a unit after a number)."""
    surface = match.group().rstrip("'’")
    start, end = match.span()
    lowered = surface.lower().replace("’", "'")
    if lowered.endswith("'s") and not lowered.startswith(
        ("it's", "let's", "that's", "what's", "here's", "there's")
    ):
        lowered = lowered[:-2]
    if lowered in ("a", "an") and following and following[0].group().lower() in UNITS:
        unit = UNITS[following[0].group().lower()]
        if unit in TIME_UNITS and not text[end : following[0].start()].strip():  # "a week" ≡ "one week"
            return [
                Token(
                    _amount("1", unit), "number", text[start : following[0].end()], start, following[0].end()
                )
            ], 1
    if lowered == "once" and following and not re.search(r"[,;:.!?]", text[end : following[0].start()]):
        after = re.split(r"['’]", following[0].group().lower())[0]
        then = following[1].group().lower() if len(following) > 1 else ""
        counted = after in ONCE_COUNTED if after not in ("a", "an") else UNITS.get(then) in TIME_UNITS
        if not counted:
            # "once the flag is on", "once you've looked", "once run is finished": a conjunction,
            # not a count ("run it once a day", "once per sprint", "once before release").
            return None, 0
    if lowered == "insteadof":  # "instead of", "rather than": what follows is rejected
        return [Token("not", "negation", surface, start, end)], 0
    for pattern, marker, kind in AFFIXED_WORDS:
        if affixed := pattern.fullmatch(lowered):
            return [
                Token(stem(affixed.group(1)), "word", surface, start, end),
                Token(marker, kind, surface, start, end),
            ], 0
    scope = setting("UPSERT_SCOPE_WORDS").get(lowered)
    if not scope and following and following[0].group().lower() in DETERMINERS | SCOPE_PREPOSITIONS:
        scope = setting("UPSERT_SCOPE_WORDS_BEFORE_THINGS").get(lowered)
    if scope:
        return [Token(scope, "scope", surface, start, end)], 0
    privative = lowered in word_setting("UPSERT_PRIVATIVE_WORDS")
    if privative and following and following[0].group().lower() in DETERMINERS:
        return [Token("not", "negation", surface, start, end)], 0  # "missing a ticket" ≡ "without a ticket"
    # A rejection with its agent is an action read in the passive ("uploads are dropped by the
    # gateway" ≡ "the gateway drops uploads"), which the active voice does not count either.
    by_agent = bool(following) and following[0].group().lower() == "by"
    if (
        (lowered in word_setting("UPSERT_REJECTION_WORDS") and not by_agent)
        or lowered in word_setting("UPSERT_CLOSING_WORDS")
        or (lowered.isalpha() and stem(lowered) in _stems(word_setting("UPSERT_OMISSION_VERBS")))
    ):
        return [Token("not", "negation", surface, start, end)], 0
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
        # "twenty five" → 25, "ten thousand" → 10000 (≡ "10,000").
        while not unit and value.isdigit() and consumed < len(following):
            nxt = following[consumed]
            word = nxt.group().lower()
            if text[end : nxt.start()].strip(" -") or word not in NUMBER_WORDS:
                break
            addend = NUMBER_WORDS[word]
            if not addend.isdigit() or (
                int(addend) < 100 and not (int(value) % 10 == 0 and int(addend) < 10)
            ):
                break
            value = str(int(value) * int(addend)) if int(addend) >= 100 else str(int(value) + int(addend))
            consumed, end = consumed + 1, nxt.end()
        if not unit and len(following) > consumed:
            nxt = following[consumed]
            gap = text[end : nxt.start()]
            candidate = nxt.group().lower()
            if (
                nxt.lastgroup in ("word", "symbol")
                and gap.strip() in ("", "-")
                and candidate in UNITS
                and len(gap) <= 1
            ):
                unit, consumed, end = UNITS[candidate], consumed + 1, nxt.end()
        if VERSION_RE.match(value):
            kind = "version"
        elif (
            value.isdigit()
            and 1024 <= int(value) <= 65535
            and previous_word in ("port", "on", "listens", "localhost")
        ):
            kind = "port"
        elif is_number_word and not unit and lowered in ("one", "single") and value == "1":
            return None, consumed  # "one" is more often an article than a count
        else:
            kind = _number_kind(previous_word) if not unit else "number"
        return [Token(_amount(value, unit), kind, text[start:end], start, end)], consumed
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
    base = lowered[:-2] if lowered.endswith("ly") else ""
    if len(base) >= ADVERB_BASE and base in contrast:  # "asynchronously", "publicly": the quality itself
        return [Token(synonym.get(base, base), "contrast", surface, start, end)], 0
    mapped = synonym.get(lowered) or (synonym.get(stem(lowered)) if lowered.isalpha() else None)
    named = surface[:1].isupper() and not _is_sentence_start(text, start)  # "Go 1.22", not "go"
    silenced = (
        lowered in silent or mapped in silent or (lowered.isalpha() and stem(lowered) in _stems(silent))
    )
    if silenced and not named:
        return None, 0  # "must", "always", "use": the rule reworded, not another fact
    if mapped:
        return [Token(mapped, "contrast" if mapped in contrast else "word", surface, start, end)], 0
    if re.fullmatch(r"[a-z]+(?:-[a-z]+)+", lowered):  # "hard-coded" ≡ "hard-code"
        head, _, last = lowered.rpartition("-")
        return [Token(f"{head}-{stem(last)}", "identifier", surface, start, end)], 0
    if IDENTIFIER_RE.search(surface) and not surface.isalpha():
        return [Token(lowered, "identifier", surface, start, end)], 0
    acronym = re.fullmatch(r"([A-Z]{2,})(?:s|es|ing|ed|'s)", surface)
    if acronym:  # "PRs" ≡ "PR", "SSHing" ≡ "SSH"
        return [Token(acronym.group(1).lower(), "identifier", surface, start, end)], 0
    if re.fullmatch(r"[A-Z0-9_]{2,}", surface) or re.search(r"[a-z][A-Z]", surface):
        return [Token(lowered, "identifier", surface, start, end)], 0
    if lowered in FUNCTION_WORDS or "'" in lowered:
        return None, 0
    if surface[:1].isupper() and not _is_sentence_start(text, start):
        return [Token(stem(lowered), "name", surface, start, end)], 0
    return [Token(stem(lowered), "word", surface, start, end)], 0
