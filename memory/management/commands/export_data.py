"""``manage.py export_data [FILE] [--team SLUG]``: a team's memory as JSON lines (memory/services/backup.py)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.management.team_option import add_team_argument, one_team
from memory.services.backup import export_lines


class Command(BaseCommand):
    help = (
        "Export one team's memories, entities, sessions, feedback and the audit log as JSON lines (no "
        "tokens, no passwords, nothing of another team)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", nargs="?", default="-", help="where to write (default: standard output)")
        add_team_argument(parser, every_team=False)

    def handle(self, *args, file: str, team: str | None = None, **options) -> None:
        target = one_team(team)
        if target is None:
            raise CommandError("there is no team to export yet")
        progress, close = progress_bar(self, "Exporting")
        lines = 0
        handle = sys.stdout if file == "-" else open(file, "w", encoding="utf-8")  # noqa: SIM115
        try:
            for line in export_lines(team=target, progress=progress):
                handle.write(line + "\n")
                lines += 1
        finally:
            close()
            if handle is not sys.stdout:
                handle.close()
        if file != "-":
            self.stderr.write(f"Exported {lines - 1} rows of team {target.slug} to {file}")
