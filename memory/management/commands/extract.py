from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.management.progress import progress_bar
from memory.models import ExtractionStatus, Session
from memory.services.extraction import extraction_run


class Command(BaseCommand):
    help = "Run extraction (DESIGN.md §4.8) now, in this process, on ended sessions still pending."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--session", action="append", default=[], help="A session id (repeatable).")

    def handle(self, *args, session=(), **options) -> None:
        sessions = Session.objects.filter(ended_at__isnull=False, extraction_status=ExtractionStatus.PENDING)
        if session:
            try:
                sessions = Session.objects.filter(pk__in=session)
                ids = list(sessions.values_list("pk", flat=True))
            except Exception as exc:  # a malformed UUID
                raise CommandError(f"Not a session id: {exc}") from exc
            missing = set(session) - {str(pk) for pk in ids}
            if missing:
                raise CommandError(f"No such session: {', '.join(sorted(missing))}")
        ids = list(sessions.order_by("ended_at").values_list("pk", flat=True))
        draw, close = progress_bar(self, "extraction")
        added = messages = failed = 0
        try:
            for done, pk in enumerate(ids, start=1):
                report = extraction_run(pk)
                added += len(report.added)
                messages += report.messages
                failed += report.status == ExtractionStatus.FAILED
                if report.status not in (ExtractionStatus.DONE, ExtractionStatus.FAILED):
                    self.stderr.write(f"{pk}: {report.status}")
                draw(done, len(ids))
        finally:
            close()
        self.stdout.write(
            f"Extracted {len(ids)} sessions ({messages} messages): {added} new memories, {failed} failed."
        )
