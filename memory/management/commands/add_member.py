from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory.models import Team, TeamRole
from memory.services.teams import member_add


class Command(BaseCommand):
    help = "Make USER a member of TEAM with a role (or change their role)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("team", help="The team's slug.")
        parser.add_argument("--role", required=True, choices=TeamRole.values)
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user if it does not exist."
        )

    def handle(self, *args, username: str, team: str, role: str, create_user: bool, **options) -> None:
        User = get_user_model()
        with transaction.atomic():
            found = Team.objects.filter(slug=team).first()
            if found is None:
                raise CommandError(f"no team {team!r}; create it with: manage.py create_team {team}")
            user = User.objects.filter(username=username).first()
            if user is None:
                if not create_user:
                    raise CommandError(f"no user {username!r}; pass --create-user to create one")
                user = User.objects.create_user(username=username)
                self.stdout.write(f"Created user {username}")
            membership = member_add(team=found, user=user, role=role)
        self.stdout.write(f"{username} is {membership.role} of {found.slug}")
