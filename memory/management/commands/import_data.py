"""``manage.py import_data FILE [--team SLUG] [--recompute-embeddings]``: restore an export into a
team (memory/services/backup.py).

The whole file is checked first; every problem is listed with its line number and nothing is
written. A valid file is written into the team in one transaction; rows already present in it are
left as they are, and a memory or session whose id belongs to another team is given a new id (that
team's row is never touched). Without ``--team``: the only team (``default`` when there is none yet);
with several teams ``--team`` is required.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.management.team_option import add_team_argument, one_team
from memory.services.backup import ImportProblems, import_lines
from memory.services.teams import team_default


class Command(BaseCommand):
    help = "Import a JSON-lines export into a team (validated whole first; all or nothing; idempotent)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="an export_data file, or - for standard input")
        parser.add_argument(
            "--recompute-embeddings",
            action="store_true",
            help="embed every memory of the team again with this server's model (needed when the export used another)",
        )
        add_team_argument(parser, every_team=False)

    def handle(
        self, *args, file: str, recompute_embeddings: bool, team: str | None = None, **options
    ) -> None:
        target = one_team(team) or team_default()
        try:
            handle = sys.stdin if file == "-" else open(file, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        progress, close = progress_bar(self, "Importing")
        try:
            with handle:
                report = import_lines(
                    handle, team=target, recompute_embeddings=recompute_embeddings, progress=progress
                )
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
        self.stdout.write(f"Imported {created} into team {target.slug}; {skipped} rows were already present.")
        if report.new_ids:
            self.stdout.write(
                f"{report.new_ids} memories and sessions had ids of another team and were given new ones."
            )
        if report.recomputed_embeddings:
            self.stdout.write(f"Recomputed {report.recomputed_embeddings} embeddings.")
        if report.embedded_missing:
            self.stdout.write(
                f"Embedded {report.embedded_missing} memories the file carried without an embedding."
            )
