"""Strong tokens (numbers, versions, names, paths, identifiers) added, removed or replaced — an
acronym and the words it abbreviates, or a hyphenated compound and its words, are the same token."""

from __future__ import annotations

import re

from memory.services.upsert.compare.changes import Change, Comparison
from memory.services.upsert.lexicon import parts_of_speech
from memory.services.upsert.reading import Reading
from memory.services.upsert.tokens import stem, synonyms

# A number token's key: its value, then its unit's stem when it has one ("20", "20conn", "30s").
NUMBER_KEY = re.compile(r"(?P<value>[+-]?\d+(?:[.,]\d+)*)(?P<unit>\D*)")


def compare_strong(
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
    # The same number, one side naming what it counts: "capped at 20" / "20 connections".
    removed -= _counted(old, removed, new)
    added -= _counted(new, added, old)
    # A name said inside a path or an identifier of the other side ("the Gradle cache" /
    # "~/.gradle/caches", "the Terraform state" / "terraform.tfstate").
    removed -= _inside_paths(old, removed, new)
    added -= _inside_paths(new, added, old)
    # A maker's name before a product's both sides name, with nothing in its place: "the Amazon S3
    # bucket" / "the S3 bucket", "HashiCorp Vault" / "Vault".
    if not added:
        removed -= _maker_names(old, removed, new)
    if not removed:
        added -= _maker_names(new, added, old)
    # A compound of words said around one of its words, with nothing strong in its place on the
    # other side: "long-running transactions" / "transactions held open for long".
    if not added:
        removed -= _reworded_compounds(old, removed, new)
    if not removed:
        added -= _reworded_compounds(new, added, old)
    by_kind: dict[str, Change] = {}
    for reading, keys, attribute in ((old, removed, "old"), (new, added, "new")):
        for token in reading.tokens:
            if token.strong and token.key in keys:
                change = by_kind.setdefault(token.kind, Change(token.kind, [], []))
                values = getattr(change, attribute)
                if token.surface not in values:
                    values.append(token.surface)
    result.changes.extend(by_kind.values())


def _counted(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Keys of ``reading`` that are numbers the other side says with the same value, one of the two
    without a unit: what is counted said on one side only ("20 per pod" / "20 connections per pod",
    "the timeout is 30" / "30 seconds") is a detail, not another number. Two units ("3 replicas" / "3
    shards", "30 s" / "30 min") still differ."""

    def split(side: Reading, n: int) -> tuple[str, str] | None:
        """A number's value and unit; a number right before a word the reading did not take for
        its unit ("3 shards") counts that word: it is no bare number."""
        found = NUMBER_KEY.fullmatch(side.tokens[n].key)
        if found is None:
            return None
        following = side.tokens[n + 1] if n + 1 < len(side.tokens) else None
        counts_next = following is not None and following.start - side.tokens[n].end <= 1
        return (found["value"], found["unit"] or ("?" if counts_next else ""))

    theirs = {split(other, n) for n, t in enumerate(other.tokens) if t.kind == "number"} - {None}
    found = set()
    for n, token in enumerate(reading.tokens):
        mine = split(reading, n) if token.kind == "number" and token.key in keys else None
        if mine and any(value == mine[0] and not (unit and mine[1]) for value, unit in theirs):
            found.add(token.key)
    return found


def _acronyms(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Keys of ``reading`` that are acronyms of consecutive words of ``other`` ("CAB" → "change
    advisory board", "DM" → "direct message")."""
    found = set()
    surfaces = [t.surface.lower() for t in other.tokens]
    for token in reading.tokens:
        letters = _singular(token.surface)
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


def _singular(surface: str) -> str:
    """An acronym's plural read as the acronym ("PRs" → "PR", "SLOs" → "SLO")."""
    if len(surface) >= 3 and surface.endswith("s") and surface[:-1].isalpha() and surface[:-1].isupper():
        return surface[:-1]
    return surface


def spelled_out(reading: Reading, other: Reading) -> tuple[set[str], set[str]]:
    """Acronyms of ``reading`` that ``other`` lacks and spells out in consecutive words (two parts
    at least, see ``_abbreviates``): the acronyms' keys, and the keys (and stems) of the words that
    spell them."""
    other_keys = {t.key for t in other.tokens}
    acronyms, words = set(), set()
    for token in reading.tokens:
        letters = _singular(token.surface)
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


def _inside_paths(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Names of ``reading`` that are a part of a path or an identifier of ``other``."""
    parts = {
        part
        for token in other.tokens
        if token.kind in ("path", "identifier")
        for word in re.split(r"[^a-z0-9]+", token.key.lower())
        if word
        for part in (word, stem(word))
    }
    return {t.key for t in reading.tokens if t.key in keys and t.kind == "name" and t.key in parts}


def _maker_names(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Keys of ``reading`` written as a name right before another strong token that ``other`` names
    too ("Amazon S3", "Google BigQuery")."""
    other_keys = {t.key for t in other.tokens}
    return {
        token.key
        for token, following in zip(reading.tokens, reading.tokens[1:], strict=False)
        if token.key in keys
        and token.kind in ("name", "identifier")
        and following.strong
        and following.key in other_keys
        and following.start - token.end <= 1
    }


def _reworded_compounds(reading: Reading, keys: set[str], other: Reading) -> set[str]:
    """Keys of ``reading`` that are hyphenated compounds of English words ("self-hosted",
    "end-to-end", "short-lived") one of whose words ``other`` says ("runners we host ourselves",
    "tests that cover it end to end", "not meant to live long")."""
    other_keys = {t.key for t in other.tokens}
    words = synonyms()
    found = set()
    for token in reading.tokens:
        parts = token.surface.lower().split("-")
        if token.key not in keys or len(parts) < 2 or not all(parts_of_speech(part) for part in parts):
            continue  # "date-fns", "pg-boss": a product's name, not words
        if any(len(part) > 2 and _part_of(part, other, other_keys, words) for part in parts):
            found.add(token.key)
    return found


def _part_of(part: str, other: Reading, other_keys: set[str], words: dict[str, str]) -> bool:
    """A part of a hyphenated compound said by ``other``: the same word, one of its synonyms, two
    words written as one ("auto-rollback" / "rolled back automatically"), or a clipped word of at
    least four letters ("auto" / "automatically"), or any word of ``other``."""
    if (words.get(part) or words.get(stem(part)) or stem(part)) in other_keys:
        return True
    if part in other.joined or stem(part) in other.joined or stem(part) in other.words:
        return True  # a light verb is a word too ("self-serve" / "analysts serve themselves")
    return len(part) >= 4 and any(key.isalpha() and key.startswith(part) for key in other_keys)
