"""Who may change what the team has settled (DESIGN.md §4.3): pure decisions, no database.

A changed fact supersedes its old memory at once only while that memory is a plain candidate.
Settled knowledge — *established* or *proven*, *critical*, or approved or edited by a curator —
changes only by its rules: a non-curator's write that would supersede it becomes a **proposal**
(PROPOSED), stored pending review beside the memory it would change, which stays served. A
proposal takes effect when a curator confirms it, or when ``PROPOSAL_CONFIRMATIONS`` distinct people
independently propose the same change. One token never rewrites what the team has settled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from memory.conf import setting
from memory.models import Maturity, Priority
from memory.services.upsert import UPDATE, Decision

PROPOSED = "PROPOSED"

SETTLED_MATURITIES = (Maturity.ESTABLISHED, Maturity.PROVEN)


def settled_reason(*, maturity: str, priority: str, curated: bool) -> str | None:
    """Why a memory counts as the team's settled knowledge, in words; None for a plain candidate."""
    if curated:
        return "approved or edited by a curator"
    if maturity in SETTLED_MATURITIES:
        return maturity
    if priority == Priority.CRITICAL:
        return "critical"
    return None


def govern(decision: Decision, *, settled: str | None, curator: bool) -> Decision:
    """The operation a write may have: an UPDATE of a settled memory (``settled``: its
    :func:`settled_reason`) by a non-curator is PROPOSED instead; everything else stands."""
    if decision.operation != UPDATE or settled is None or curator:
        return decision
    reason = f"{decision.reason}; the memory is {settled}, so the change is proposed to a curator"
    return replace(decision, operation=PROPOSED, reason=reason)


def proposal_carried(proposers: Iterable, *, by_curator: bool) -> bool:
    """Whether a proposal takes effect: a curator proposed (or confirmed) it, or enough distinct
    people (``proposers``: their ids, the author of each proposal of the same change) did."""
    if by_curator:
        return True
    people = {person for person in proposers if person is not None}
    return len(people) >= setting("PROPOSAL_CONFIRMATIONS")
