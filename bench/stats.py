"""The figures every benchmark reports about a list of timings."""

from __future__ import annotations

import statistics


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0–100) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def summary(ms: list[float], *, seconds: float | None = None, digits: int = 1) -> dict:
    """Count, p50 / p95 / p99 / mean / max of timings in milliseconds, and the rate per second when
    the timings were taken over ``seconds``."""
    if not ms:
        return {"n": 0}
    row = {"n": len(ms)}
    if seconds:
        row["per_second"] = round(len(ms) / seconds, 1)
    for q in (50, 95, 99):
        row[f"p{q}_ms"] = round(percentile(ms, q), digits)
    row["mean_ms"] = round(statistics.fmean(ms), digits)
    row["max_ms"] = round(max(ms), digits)
    return row
