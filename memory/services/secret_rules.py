"""Provider secret formats from a maintained rule set (issue 43), beside our own patterns.

``memory/data/betterleaks.toml`` is the default configuration of betterleaks 2.0.0 (MIT, its licence
beside it): ~460 provider rules, each a regex (RE2 syntax), the keywords that must occur for it to
run, and a filter that rejects weak matches. They are applied here with Python's ``re`` — no
native scanner in the process, no binary per store (the measurement of the packaged scanners is in
docs/safety.md):

- each regex is translated from RE2 (``\\z``, named groups, POSIX classes, inline flags in the
  middle) and compiled with ``re.ASCII``, as RE2 reads ``\\w``, ``\\b``, ``\\d`` and ``\\s``; one that
  still does not compile is left out;
- a token may end at sentence punctuation (``.``, ``,``, ``)``…), not only at a space or a quote:
  memories are prose;
- a filter is read, never evaluated: its entropy bounds, its ``matchesAny``/``containsAny`` lists on
  the secret and its token-ratio bound (text made of words; without a tokenizer here, estimated by
  :func:`wordy`) each reject a finding; the rule set's global filter rejects its placeholders, and
  so does ``redaction.is_placeholder``;
- the generic rules (``generic-*``: any value after a keyword) are left to our own keyword patterns,
  and the helper rules of composite findings (client ids, account names) are left out, except those
  that are secrets themselves.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memory.conf import setting
from memory.services.literals import StringIndex

RULES_FILE = Path(__file__).resolve().parents[1] / "data" / "betterleaks.toml"
TERMINATOR = r"""(?:\\?['"\x60]|[\s;]|\\[nr]|$)"""
PROSE_TERMINATOR = r"""(?:\\?['"\x60]|[\s;.,:!?)\]}>]|\\[nr]|$)"""
QUOTES = "\"'`"
SECRET_HELPER = re.compile(r"secret|passphrase|security-token|password")
POSIX_CLASSES = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:xdigit:]": "0-9a-fA-F",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:space:]": r"\s",
    "[:word:]": r"\w",
    "[:punct:]": r"!-/:-@\[-`{-~",
}
MID_FLAGS = re.compile(r"(?<!^)(?<!\\)\(\?([imsU]+)\)")
ENTROPY_BOUND = re.compile(r'entropy\(finding\["secret"\]\)\s*(<=|<)\s*([\d.]+)')
TOKEN_RATIO_BOUND = re.compile(r'tokenRatio\(finding\["secret"\]\)\s*>=?\s*([\d.]+)')
LIST_ON_SECRET = re.compile(r'(matchesAny|containsAny)\(finding\["secret"\],\s*\[(.*?)\]\)', re.S)
LIST_ITEM = re.compile(r'`([^`]*)`|"((?:[^"\\]|\\.)*)"')


def translate(pattern: str) -> str:
    """An RE2 pattern in Python's ``re`` syntax (pure)."""
    pattern = pattern.replace(r"\z", r"\Z")
    pattern = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", pattern)
    for posix, explicit in POSIX_CLASSES.items():
        pattern = pattern.replace(posix, explicit)
    # RE2 runs in linear time; Python backtracks, and an unbounded gap (".*") before a later part of
    # the pattern makes a long text quadratic ("curl " 4,000 times took 1.7 s). Gaps are bounded.
    gap = f"{{0,{setting('SECRET_RULE_GAP_CHARS')}}}"
    pattern = re.sub(r"(?<!\\)\.\*(\??)", lambda m: "." + gap + m.group(1), pattern)
    # RE2 applies a flag group met mid-pattern to the rest of its enclosing group; Python wants it
    # scoped: (?i) … up to that group's closing parenthesis becomes (?i: … ).
    while found := MID_FLAGS.search(pattern):
        close = _enclosing_close(pattern, found.end())
        pattern = (
            f"{pattern[: found.start()]}(?{found.group(1)}:{pattern[found.end() : close]}){pattern[close:]}"
        )
    return pattern


def _enclosing_close(pattern: str, start: int) -> int:
    """The index of the parenthesis closing the group that encloses ``start`` (the pattern's length
    at the top level), skipping escapes and character classes."""
    depth, index, in_class = 0, start, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                index += 1
            if pattern[index + 1 : index + 2] == "]":
                index += 1  # a "]" right after "[" or "[^" is a member
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    return len(pattern)


def entropy(text: str) -> float:
    """Shannon entropy of the bytes, in bits (the rule set's ``entropy``)."""
    data = text.encode()
    return -sum(n / len(data) * math.log2(n / len(data)) for n in Counter(data).values()) if data else 0.0


def wordy(text: str) -> float:
    """Characters per word-like run: letters split at case changes, digits and punctuation. Random
    keys make short runs (~2), words long ones; it stands in for the rule set's characters per
    tokenizer token, which needs a tokenizer's data this server does not ship (pure)."""
    runs = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)
    return sum(map(len, runs)) / len(runs) if runs else 0.0


@dataclass(frozen=True)
class Rule:
    id: str
    regex: re.Pattern
    keywords: tuple[str, ...]
    group: int | str | None
    min_entropy: tuple[tuple[str, float], ...]
    max_wordiness: float | None
    rejects: tuple[re.Pattern, ...]
    rejects_containing: tuple[str, ...]

    def rejected(self, secret: str) -> bool:
        """Whether the filter of the rule rejects ``secret`` (pure)."""
        value = entropy(secret)
        if any(value < bound if op == "<" else value <= bound for op, bound in self.min_entropy):
            return True
        if self.max_wordiness is not None and wordy(secret) >= self.max_wordiness:
            return True
        lowered = secret.lower()
        return any(p.search(secret) for p in self.rejects) or any(
            t in lowered for t in self.rejects_containing
        )


def _lists(filter_text: str) -> tuple[tuple[re.Pattern, ...], tuple[str, ...]]:
    patterns, contained = [], []
    for function, items in LIST_ON_SECRET.findall(filter_text):
        for raw, quoted in LIST_ITEM.findall(items):
            if function == "matchesAny":
                try:
                    patterns.append(re.compile(translate(raw or quoted), re.ASCII))
                except re.error:
                    continue
            else:
                contained.append((raw or quoted).lower())
    return tuple(patterns), tuple(contained)


def _rule(raw: dict) -> Rule | None:
    if "regex" not in raw or raw["id"].startswith("generic-"):
        return None
    if raw.get("skipReport") and not SECRET_HELPER.search(raw["id"]):
        return None
    try:
        regex = re.compile(translate(raw["regex"].replace(TERMINATOR, PROSE_TERMINATOR)), re.ASCII)
    except re.error:
        return None
    filter_text = re.sub(r"(?m)^\s*//.*$", "", raw.get("filter", ""))
    ratio = TOKEN_RATIO_BOUND.search(filter_text)
    rejects, containing = _lists(filter_text)
    return Rule(
        id=raw["id"],
        regex=regex,
        keywords=tuple(k.lower() for k in raw.get("keywords", [])),
        group=raw.get("valueGroup"),
        min_entropy=tuple((op, float(bound)) for op, bound in ENTROPY_BOUND.findall(filter_text)),
        max_wordiness=float(ratio.group(1)) if ratio else None,
        rejects=rejects,
        rejects_containing=containing,
    )


@lru_cache(maxsize=1)
def rule_set() -> tuple[tuple[Rule, ...], Rule]:
    """The rules, and the global filter as a rule that only rejects."""
    config = tomllib.loads(RULES_FILE.read_text())
    rules = tuple(rule for raw in config["rules"] if (rule := _rule(raw)) is not None)
    rejects, containing = _lists(config.get("filter", ""))
    everywhere = Rule("global", re.compile(r"(?!)"), (), None, (), None, rejects, containing)
    return rules, everywhere


@lru_cache(maxsize=1)
def _keyword_index() -> StringIndex:
    """Every rule's keywords (lowercase), to find at once which a text holds."""
    return StringIndex(keyword for rule in rule_set()[0] for keyword in rule.keywords)


def _secret_span(match: re.Match, group) -> tuple[int, int]:
    if group is None:
        group = next((i for i in range(1, (match.re.groups or 0) + 1) if match.group(i)), 0)
    return match.span(group)


def provider_secrets(text: str) -> list[tuple[int, int, str]]:
    """The provider secrets the rule set finds in ``text``: (start, end, kind) spans, the kind being
    the rule's id (``-`` read as ``_``). Pure."""
    if not setting("SECRET_RULE_SET"):
        return []
    from memory.services.redaction import is_placeholder

    rules, everywhere = rule_set()
    present = _keyword_index().found_in(text.lower())
    spans = []
    for rule in rules:
        if rule.keywords and present.isdisjoint(rule.keywords):
            continue
        for match in rule.regex.finditer(text):
            start, end = _secret_span(match, rule.group)
            while end - start > 1 and text[start] in QUOTES:  # a quoted value keeps its quotes
                start += 1
            while end - start > 1 and text[end - 1] in QUOTES:
                end -= 1
            if start < 0 or end <= start:
                continue
            secret = text[start:end]
            if is_placeholder(secret) or everywhere.rejected(secret) or rule.rejected(secret):
                continue
            spans.append((start, end, rule.id.replace("-", "_")))
    return spans
