from __future__ import annotations

from django.core.management.base import BaseCommand

from memory.management.progress import progress_bar
from memory.management.team_option import add_team_argument, team_or_every_team
from memory.services.rescan import rescan_run


class Command(BaseCommand):
    help = (
        "Apply today's secret detectors and injection screen to everything stored: redact secrets in "
        "memories, session messages, feedback notes and the audit log; quarantine memories that now "
        "read as instructions to agents. Each change is audited; running it again changes nothing. One team "
        "(--team), or every team, one after another."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
        add_team_argument(parser, every_team=True)

    def handle(self, *args, team: str | None = None, **options) -> None:
        target = team_or_every_team(team)
        draw, close = progress_bar(self, "rescan")
        try:
            report = rescan_run(team=target, dry_run=options["dry_run"], progress=draw)
        finally:
            close()
        verb = "Would change" if report.dry_run else "Changed"
        self.stdout.write(
            f"Scanned {report.memories} memories, {report.messages} session messages, {report.notes} feedback "
            f"notes and {report.events} audit events. {verb}: {len(report.redacted_memories)} memories redacted, "
            f"{len(report.quarantined)} quarantined, {report.redacted_messages} messages, {report.redacted_notes} "
            f"notes and {report.redacted_events} audit events redacted."
        )
