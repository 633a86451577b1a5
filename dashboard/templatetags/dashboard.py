"""Formatting helpers for the dashboard templates (no queries here)."""

from __future__ import annotations

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe

from memory.services.upsert import highlight_spans

register = template.Library()

FACTORS = [
    ("type_weight", "Type weight"),
    ("intent_boost", "Intent boost"),
    ("feedback_score", "Feedback score"),
    ("decay", "Decay"),
    ("maturity_multiplier", "Maturity"),
]
FACTORS_APPLIED_ONLY = [("entity_match", "Names an entity in the question")]


@register.filter
def label(value) -> str:
    """ "pending_review" → "pending review"."""
    return str(value or "").replace("_", " ")


@register.filter
def short(value) -> str:
    return str(value)[:8]


@register.filter
def number(value, digits: int = 2) -> str:
    if value is None:
        return "—"
    return f"{float(value):.{int(digits)}f}"


@register.simple_tag
def page_url(query, page_number) -> str:
    """``?<the current filters>&page=N``."""
    query = query.copy()
    query["page"] = page_number
    return "?" + query.urlencode()


@register.filter
def explain_rows(explain: dict) -> list[dict]:
    """The factors of a search score, each with its value and what it contributed to the product."""
    applied = explain.get("applied", {})
    rows = [
        {"name": name, "value": explain[key], "applied": applied.get(key)}
        for key, name in FACTORS
        if key in explain
    ]
    rows += [
        {"name": name, "value": applied[key], "applied": None}
        for key, name in FACTORS_APPLIED_ONLY
        if key in applied
    ]
    return rows


@register.filter
def lexical_weight(fusion: dict) -> float:
    """The weight of the word match in a fused relevance: 1 − α."""
    return 1.0 - fusion.get("alpha", 0.0)


@register.filter
def signal_class(signal: str) -> str:
    return {"helpful": "good", "harmful": "bad", "irrelevant": "muted"}.get(signal, "")


@register.filter
def diff_items(diff: dict) -> list[tuple[str, str]]:
    """An audit diff as readable "field: before → after" pairs."""
    items = []
    for key, value in (diff or {}).items():
        if key == "decision" and isinstance(value, dict):
            items.append(("decision", describe_decision(value)))
        elif isinstance(value, list) and len(value) == 2:
            before, after = value
            items.append((label(key), f"{_text(before)} → {_text(after)}"))
        else:
            items.append((label(key), _text(value)))
    return items


def describe_decision(decision: dict) -> str:
    """The upsert's decision in a line: "UPDATE — version changed: 18 → 20 (cosine 0.97, …)"."""
    numbers = [
        f"{name} {decision[name]:.2f}"
        for name in ("cosine", "jaccard")
        if isinstance(decision.get(name), int | float)
    ]
    if decision.get("compared_with"):
        numbers.append(f"compared with {str(decision['compared_with'])[:8]}")
    suffix = f" ({', '.join(numbers)})" if numbers else ""
    return f"{decision.get('operation', '?')} — {decision.get('reason', '')}{suffix}"


def _text(value) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    text = str(value)
    return text if len(text) <= 160 else text[:157] + "…"


@register.filter
def duration(milliseconds) -> str:
    """180000 → "3 min 0 s"; None → "—"."""
    if milliseconds is None:
        return "—"
    seconds = int(milliseconds) // 1000
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@register.filter
def summary_items(summary: dict) -> list[tuple[str, object]]:
    """A job's summary for people: numbers and short words as they are, lists as their length."""
    items = []
    for key, value in (summary or {}).items():
        if isinstance(value, list | tuple | dict):
            value = len(value)
        elif value in ("", None):
            continue
        items.append((label(key), value))
    return items


@register.simple_tag
def changed_tokens(text: str, other: str) -> str:
    """``text`` with the content-bearing tokens that ``other`` lacks in <mark>: the changed fact."""
    return mark_safe(
        "".join(
            f"<mark>{conditional_escape(piece)}</mark>" if marked else str(conditional_escape(piece))
            for piece, marked in highlight_spans(text or "", other or "")
        )
    )
