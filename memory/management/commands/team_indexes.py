from __future__ import annotations

from django.core.management.base import BaseCommand

from memory.services.team_indexes import team_indexes_ensure


class Command(BaseCommand):
    help = (
        "Give every team of at least TEAM_INDEX_MIN_MEMORIES memories its own search indexes now, and "
        "drop those no longer needed (the Celery beat does this every TEAM_INDEX_EVERY_SECONDS)."
    )

    def handle(self, *args, **options) -> None:
        report = team_indexes_ensure()
        self.stdout.write(
            f"Own indexes built for {len(report.created)} teams, dropped for {len(report.dropped)}"
            + (f", {len(report.repaired)} left invalid by a failed build dropped" if report.repaired else "")
            + f" ({report.seconds} s)."
        )
