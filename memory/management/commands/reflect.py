from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.management.team_option import add_team_argument, team_or_every_team
from memory.models import TaskName
from memory.services.jobs import run_job
from memory.services.reflection import reflection_run


class Command(BaseCommand):
    help = (
        "Run reflection now (DESIGN.md §4.9): condense recent observations into playbook bullets — of "
        "one team (--team), or of every team, one after another (never clustering two teams' notes)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--window-days",
            type=int,
            default=None,
            help="How far back to look (default REFLECTION_WINDOW_DAYS).",
        )
        add_team_argument(parser, every_team=True)

    def handle(self, *args, window_days=None, team: str | None = None, **options) -> None:
        if window_days is not None and window_days < 1:
            raise CommandError("--window-days is a positive number of days.")
        target = team_or_every_team(team)
        draw, close = progress_bar(self, "reflection")
        try:
            _, report = run_job(
                TaskName.REFLECT,
                lambda progress, team: reflection_run(team=team, progress=progress, window_days=window_days),
                team=target,
                on_progress=draw,
            )
        finally:
            close()
        if report.skipped and not report.teams:
            self.stdout.write(f"Nothing done: {report.skipped}.")
            return
        self.stdout.write(
            f"Looked at {report.observations} observations: {report.clusters} clusters, "
            f"{len(report.created)} new reflections, {len(report.merged)} merged into existing ones, "
            f"{report.condensed} observations condensed ({report.summarizer}, {report.seconds} s)."
        )
        self.stdout.write(f"Teams: {', '.join(report.teams) or 'none'}.")
        if report.skipped:
            self.stdout.write(f"Skipped: {report.skipped}.")
        if report.llm_error:
            self.stdout.write(f"The LLM was not used: {report.llm_error}")
