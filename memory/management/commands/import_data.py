"""``manage.py import_data FILE [--recompute-embeddings]``: restore an export (memory/services/backup.py).

The whole file is checked first; every problem is listed with its line number and nothing is
written. A valid file is written in one transaction; rows already present are left as they are.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.services.backup import ImportProblems, import_lines


class Command(BaseCommand):
    help = "Import a JSON-lines export (validated whole first; all or nothing; idempotent)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="an export_data file, or - for standard input")
        parser.add_argument(
            "--recompute-embeddings",
            action="store_true",
            help="embed every memory again with this server's model (needed when the export used another)",
        )

    def handle(self, *args, file: str, recompute_embeddings: bool, **options) -> None:
        try:
            handle = sys.stdin if file == "-" else open(file, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        progress, close = progress_bar(self, "Importing")
        try:
            with handle:
                report = import_lines(handle, recompute_embeddings=recompute_embeddings, progress=progress)
        except ImportProblems as exc:
            close()
            shown = exc.problems[:50]
            more = f"\n… and {len(exc.problems) - 50} more" if len(exc.problems) > 50 else ""
            raise CommandError(
                f"{file} was not imported (nothing changed):\n" + "\n".join(shown) + more
            ) from exc
        except UnicodeDecodeError as exc:
            close()
            raise CommandError(f"{file} is not UTF-8 text; nothing changed") from exc
        close()
        created = ", ".join(f"{n} {kind}" for kind, n in sorted(report.created.items())) or "nothing"
        skipped = sum(report.skipped.values())
        self.stdout.write(f"Imported {created}; {skipped} rows were already present.")
        if report.recomputed_embeddings:
            self.stdout.write(f"Recomputed {report.recomputed_embeddings} embeddings.")
        if report.embedded_missing:
            self.stdout.write(
                f"Embedded {report.embedded_missing} memories the file carried without an embedding."
            )
