from __future__ import annotations

from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.models import TaskName
from memory.services import jobs
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
        run = jobs.run_start(TaskName.REFLECT)
        record = jobs.progress_recorder(run)
        draw, close = progress_bar(self, "reflection")

        def progress(done: int, total: int) -> None:
            draw(done, total)
            record(done, total)

        try:
            report = reflection_run(progress=progress, window_days=window_days)
        except Exception as exc:
            jobs.run_fail(run, exc)
            raise
        finally:
            close()
        jobs.run_finish(run, asdict(report))
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
