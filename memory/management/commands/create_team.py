from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memory.services.errors import InvalidInput
from memory.services.teams import team_create


class Command(BaseCommand):
    help = "Create a team: every memory, entity and session belongs to one (DESIGN.md §11)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="Lower-case letters, digits and hyphens, e.g. mobile-app.")
        parser.add_argument("--name", default="", help="A display name (default: the slug).")

    def handle(self, *args, slug: str, name: str, **options) -> None:
        try:
            team = team_create(slug=slug, name=name)
        except InvalidInput as exc:
            raise CommandError("; ".join(m for messages in exc.fields.values() for m in messages)) from exc
        self.stdout.write(f"Created team {team.slug} ({team.name})")
