"""Contrast words and their poles (``UPSERT_CONTRAST_GROUPS``): "before" against "after", "enable"
against "disable"."""

from __future__ import annotations

from functools import lru_cache

from memory.conf import setting
from memory.services.upsert.tokens import _frozen, stem


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


def opposed(mine: frozenset, theirs: frozenset) -> set[int]:
    """The groups in which two contrast words stand at different poles."""
    return {
        group for group, pole in mine for other, their_pole in theirs if group == other and pole != their_pole
    }


@lru_cache(maxsize=8)
def _polar(groups: tuple[tuple[str, ...], ...]) -> frozenset[int]:
    return frozenset(
        index for index, group in enumerate(groups) if len({_pole(entry) for entry in group}) == 2
    )


def polar_groups() -> frozenset[int]:
    """The contrast groups of two poles (enable/disable, include/exclude): one negated is the other."""
    return _polar(_frozen(setting("UPSERT_CONTRAST_GROUPS")))
