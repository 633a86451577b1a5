"""``manage.py export_data [FILE]``: the team's memory as JSON lines (memory/services/backup.py)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from memory.management.progress import progress_bar
from memory.services.backup import export_lines


class Command(BaseCommand):
    help = "Export memories, entities, sessions, feedback and the audit log as JSON lines (no tokens, no passwords)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", nargs="?", default="-", help="where to write (default: standard output)")

    def handle(self, *args, file: str, **options) -> None:
        progress, close = progress_bar(self, "Exporting")
        lines = 0
        handle = sys.stdout if file == "-" else open(file, "w", encoding="utf-8")  # noqa: SIM115
        try:
            for line in export_lines(progress=progress):
                handle.write(line + "\n")
                lines += 1
        finally:
            close()
            if handle is not sys.stdout:
                handle.close()
        if file != "-":
            self.stderr.write(f"Exported {lines - 1} rows to {file}")
