from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from memory.services.decay import decay_run


class Command(BaseCommand):
    help = "Run the decay job now (DESIGN.md §4.7): decay, maturity, deprecation, inversion, staleness."

    def handle(self, *args, **options) -> None:
        def progress(done: int, total: int) -> None:
            if self.stdout.isatty():
                filled = 30 * done // max(total, 1)
                sys.stdout.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
                sys.stdout.flush()

        report = decay_run(progress=progress)
        if self.stdout.isatty():
            sys.stdout.write("\n")
        self.stdout.write(
            f"Examined {report.examined} memories: {report.updated} updated, {report.maturity_changed} changed "
            f"maturity, {len(report.inverted)} inverted into anti-patterns, {report.stale} stale."
        )
