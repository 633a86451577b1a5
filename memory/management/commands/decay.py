from __future__ import annotations

from django.core.management.base import BaseCommand

from memory.management.progress import progress_bar
from memory.management.team_option import add_team_argument, team_or_every_team
from memory.models import TaskName
from memory.services.decay import decay_run
from memory.services.jobs import run_job


class Command(BaseCommand):
    help = (
        "Run the decay job now (DESIGN.md §4.7): decay, maturity, deprecation, inversion, staleness — "
        "of one team (--team), or of every team, one after another."
    )

    def add_arguments(self, parser) -> None:
        add_team_argument(parser, every_team=True)

    def handle(self, *args, team: str | None = None, **options) -> None:
        target = team_or_every_team(team)
        draw, close = progress_bar(self, "decay")
        try:
            _, report = run_job(
                TaskName.DECAY,
                lambda progress, team: decay_run(team=team, progress=progress),
                team=target,
                on_progress=draw,
            )
        finally:
            close()
        where = f" of {target.slug}" if target else ""
        self.stdout.write(
            f"Examined {report.examined} memories{where}: {report.updated} updated, {report.maturity_changed} "
            f"changed maturity, {len(report.inverted)} inverted into anti-patterns, {report.stale} stale."
        )
