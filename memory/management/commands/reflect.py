from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.models import TaskName
from memory.services.jobs import run_job
from memory.services.reflection import reflection_run


class Command(BaseCommand):
    help = "Run reflection now (DESIGN.md §4.9): condense recent observations into playbook bullets."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--window-days",
            type=int,
            default=None,
            help="How far back to look (default REFLECTION_WINDOW_DAYS).",
        )

    def handle(self, *args, window_days=None, **options) -> None:
        if window_days is not None and window_days < 1:
            raise CommandError("--window-days is a positive number of days.")
        draw, close = progress_bar(self, "reflection")
        try:
            _, report = run_job(
                TaskName.REFLECT,
                lambda progress: reflection_run(progress=progress, window_days=window_days),
                on_progress=draw,
            )
        finally:
            close()
        if report.skipped:
            self.stdout.write(f"Nothing done: {report.skipped}.")
            return
        self.stdout.write(
            f"Looked at {report.observations} observations: {report.clusters} clusters, "
            f"{len(report.created)} new reflections, {len(report.merged)} merged into existing ones, "
            f"{report.condensed} observations condensed ({report.summarizer}, {report.seconds} s)."
        )
        if report.llm_error:
            self.stdout.write(f"The LLM was not used: {report.llm_error}")
