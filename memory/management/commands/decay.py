from __future__ import annotations

from django.core.management.base import BaseCommand

from memory.management.progress import progress_bar
from memory.models import TaskName
from memory.services.decay import decay_run
from memory.services.jobs import run_job


class Command(BaseCommand):
    help = "Run the decay job now (DESIGN.md §4.7): decay, maturity, deprecation, inversion, staleness."

    def handle(self, *args, **options) -> None:
        draw, close = progress_bar(self, "decay")
        try:
            _, report = run_job(
                TaskName.DECAY, lambda progress: decay_run(progress=progress), on_progress=draw
            )
        finally:
            close()
        self.stdout.write(
            f"Examined {report.examined} memories: {report.updated} updated, {report.maturity_changed} changed "
            f"maturity, {len(report.inverted)} inverted into anti-patterns, {report.stale} stale."
        )
