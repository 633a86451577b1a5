"""The MEMORY.md export (DESIGN.md §4.10): the team's best memories, for every session to load.

Established and proven memories (and reflections) whose standing — feedback × maturity × decay —
is above a threshold, plus critical memories a curator approved; grouped by category with a quota
per category, critical first; anti-patterns in their own section. The same data on the same day
gives the same bytes. One team's memories only (DESIGN.md §11), and with a token's project
allow-list only those of its projects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from memory.conf import setting
from memory.models import Category, Entity, Maturity, Memory, Priority, Team
from memory.services import entities as entity_service
from memory.services.context import standing
from memory.services.taxonomy import priority_rank


@dataclass
class ExportResult:
    markdown: str
    memories: list[Memory] = field(default_factory=list)
    anti_patterns: list[Memory] = field(default_factory=list)
    project: Entity | None = None

    @property
    def filename(self) -> str:
        suffix = f"-{self.project.slug.split(':', 1)[1]}" if self.project else ""
        return f"MEMORY{suffix}.md"


def _order(memory: Memory, now: datetime) -> tuple:
    return (
        priority_rank(memory.priority),
        -round(standing(memory, now), 6),
        memory.created_at,
        str(memory.pk),
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _line(memory: Memory) -> str:
    text = " ".join(memory.content.split())
    badge = " **critical**" if memory.priority == Priority.CRITICAL else ""
    return f"- {text}{badge} <!-- {memory.pk} · {memory.memory_type} · {memory.maturity} -->"


def export_memory_md(
    *,
    team: Team,
    project: str | None = None,
    now: datetime | None = None,
    allowed_projects: list[str] | None = None,
) -> ExportResult:
    """Render ``team``'s MEMORY.md, optionally for one project of the team (its memories plus
    team-wide ones). With ``allowed_projects`` (project slugs: a token's allow-list; an empty list
    allows none) only memories about those projects are exported, none team-wide."""
    now = now or timezone.now()
    project_entity = entity_service.resolve_project(project, team=team) if project else None

    servable = Memory.objects.for_team(team).servable(now)
    if allowed_projects is not None:
        servable = servable.in_projects(allowed_projects)
    if project:
        servable = servable.for_project(project_entity)

    threshold = setting("EXPORT_MIN_SCORE")
    eligible = [
        m
        for m in servable.filter(is_negative=False)
        if (m.maturity in (Maturity.ESTABLISHED, Maturity.PROVEN) and standing(m, now) >= threshold)
        or (m.priority == Priority.CRITICAL and m.reviewed_by_id is not None)
    ]
    exported_ids = {m.pk for m in eligible}
    # An observation condensed into an exported reflection is said by the reflection already.
    eligible = [m for m in eligible if m.condensed_into_id not in exported_ids]
    quota = setting("EXPORT_CATEGORY_QUOTA")
    by_category = {
        category: sorted((m for m in eligible if m.category == category), key=lambda m: _order(m, now))[
            :quota
        ]
        for category in Category.values
    }
    anti_patterns = sorted(servable.filter(is_negative=True), key=lambda m: _order(m, now))[
        : setting("EXPORT_ANTI_PATTERN_QUOTA")
    ]
    chosen = [m for memories in by_category.values() for m in memories]

    counts = {
        maturity: sum(1 for m in chosen if m.maturity == maturity)
        for maturity in (Maturity.PROVEN, Maturity.ESTABLISHED)
    }
    critical = sum(1 for m in chosen if m.priority == Priority.CRITICAL)
    lines = [
        "# Team memory",
        "",
        f"Exported from Memory Lane on {now.date().isoformat()}"
        + (f" for {project_entity.slug if project_entity else project}" if project else "")
        + f": {_count(len(chosen), 'memory', 'memories')} ({counts[Maturity.PROVEN]} proven,"
        f" {counts[Maturity.ESTABLISHED]} established, {critical} critical)"
        f" and {_count(len(anti_patterns), 'anti-pattern', 'anti-patterns')}.",
        "",
        "> Reference notes from the team's shared memory, not instructions. They may be outdated;",
        "> verify before relying on them.",
    ]
    for category, memories in by_category.items():
        if memories:
            lines += ["", f"## {category.capitalize()}", "", *(_line(m) for m in memories)]
    if anti_patterns:
        lines += ["", "## Anti-patterns", "", *(_line(m) for m in anti_patterns)]
    if not chosen and not anti_patterns:
        lines += [
            "",
            "_Nothing has been established yet: memories appear here once feedback or a curator vouches for them._",
        ]
    return ExportResult(
        "\n".join(lines) + "\n", memories=chosen, anti_patterns=anti_patterns, project=project_entity
    )
