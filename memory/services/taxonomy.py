"""The taxonomy of DESIGN.md §4.1: types and their ranking weights, categories, priorities."""

from __future__ import annotations

from memory.conf import setting
from memory.models import Category, MemoryType, Priority


def type_weight(memory_type: str) -> float:
    return setting("TYPE_WEIGHTS")[memory_type]


def half_life_days(priority: str) -> float:
    return setting("HALF_LIFE_DAYS")[priority]


def is_prescriptive(memory_type: str) -> bool:
    """Prescriptive memories tell an agent what to do; they can be inverted into anti-patterns."""
    return memory_type in setting("PRESCRIPTIVE_TYPES")


def priority_rank(priority: str) -> int:
    """critical 0, moderate 1, ephemeral 2 — for "highest priority" and critical-first ordering."""
    return Priority.values.index(priority)


def validate_choice(field: str, value: str, choices) -> list[str]:
    if value not in choices.values:
        return [f"'{value}' is not one of: {', '.join(choices.values)}."]
    return []


TYPES = MemoryType
CATEGORIES = Category
PRIORITIES = Priority
