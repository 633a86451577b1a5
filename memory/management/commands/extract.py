from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.management.team_option import add_team_argument, team_or_every_team
from memory.models import ExtractionStatus, Session
from memory.services.extraction import extraction_run


class Command(BaseCommand):
    help = (
        "Run extraction (DESIGN.md §4.8) now, in this process, on ended sessions still pending — of one "
        "team (--team), or of every team. Each session's lessons go into its own team."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--session", action="append", default=[], help="A session id (repeatable).")
        add_team_argument(parser, every_team=True)

    def handle(self, *args, session=(), team: str | None = None, **options) -> None:
        target = team_or_every_team(team)
        every = Session.objects.all() if target is None else Session.objects.for_team(target)
        sessions = every.filter(ended_at__isnull=False, extraction_status=ExtractionStatus.PENDING)
        if session:
            try:
                sessions = every.filter(pk__in=session)
                ids = list(sessions.values_list("pk", flat=True))
            except Exception as exc:  # a malformed UUID
                raise CommandError(f"Not a session id: {exc}") from exc
            missing = set(session) - {str(pk) for pk in ids}
            if missing:  # with --team, a session of another team is missing too
                raise CommandError(f"No such session: {', '.join(sorted(missing))}")
        rows = list(sessions.order_by("ended_at").values_list("pk", "team_id"))
        draw, close = progress_bar(self, "extraction")
        added = messages = failed = 0
        try:
            for done, (pk, team_id) in enumerate(rows, start=1):
                report = extraction_run(pk, team_id)
                added += len(report.added)
                messages += report.messages
                failed += report.status == ExtractionStatus.FAILED
                if report.status not in (ExtractionStatus.DONE, ExtractionStatus.FAILED):
                    self.stderr.write(f"{pk}: {report.status}")
                draw(done, len(rows))
        finally:
            close()
        self.stdout.write(
            f"Extracted {len(rows)} sessions ({messages} messages): {added} new memories, {failed} failed."
        )
