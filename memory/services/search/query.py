"""What the question asks: its input checked (the query, the limit, the filters, the mode), and the
memory types its cue words point to (INTENT_CUES: "what mistake…" → correction, gap), which the
intent boost favours when a candidate is scored."""

from __future__ import annotations

import re

from memory.conf import setting
from memory.models import Category, MemoryType, Priority
from memory.services.errors import InvalidInput

MODES = ("fts", "vector", "hybrid", "full")
MAX_QUERY_CHARS = 2000


def intent_types(query: str) -> list[str]:
    """The memory types the question asks for, from its cue words ("what mistake…" → correction, gap)."""
    text = query.lower()
    boosted = []
    for memory_type, cues in setting("INTENT_CUES").items():
        if any(re.search(rf"\b{re.escape(cue)}\b", text) for cue in cues):
            boosted.append(memory_type)
    return boosted


def _validate(query, limit, memory_type, category, priority, mode) -> tuple[str, int]:
    errors: dict[str, list[str]] = {}
    if not isinstance(query, str) or not query.strip():
        errors["q"] = ["The query must be non-empty text."]
    elif len(query) > MAX_QUERY_CHARS:
        errors["q"] = [f"The query is at most {MAX_QUERY_CHARS} characters."]
    if limit is None:
        limit = setting("SEARCH_DEFAULT_LIMIT")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= setting("SEARCH_MAX_LIMIT"):
        errors["limit"] = [f"The limit is an integer from 1 to {setting('SEARCH_MAX_LIMIT')}."]
    for name, value, choices in (
        ("type", memory_type, MemoryType),
        ("category", category, Category),
        ("priority", priority, Priority),
    ):
        if value is not None and value not in choices.values:
            errors[name] = [f"'{value}' is not one of: {', '.join(choices.values)}."]
    if mode not in MODES:
        errors["mode"] = [f"The mode is one of: {', '.join(MODES)}."]
    if errors:
        raise InvalidInput(errors)
    return query.strip(), limit
