from __future__ import annotations

from django.core.management.base import BaseCommand

from memory.management.progress import progress_bar
from memory.models import TaskName
from memory.services import jobs
from memory.services.decay import decay_run


class Command(BaseCommand):
    help = "Run the decay job now (DESIGN.md §4.7): decay, maturity, deprecation, inversion, staleness."

    def handle(self, *args, **options) -> None:
        run = jobs.run_start(TaskName.DECAY)
        record = jobs.progress_recorder(run)
        draw, close = progress_bar(self, "decay")

        def progress(done: int, total: int) -> None:
            draw(done, total)
            record(done, total)

        try:
            report = decay_run(progress=progress)
        except Exception as exc:
            jobs.run_fail(run, exc)
            raise
        finally:
            close()
        jobs.run_finish(run, {**report.__dict__})
        self.stdout.write(
            f"Examined {report.examined} memories: {report.updated} updated, {report.maturity_changed} changed "
            f"maturity, {len(report.inverted)} inverted into anti-patterns, {report.stale} stale."
        )
