from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from memory.models import Scope, TeamRole
from memory.services.errors import MemoryLaneError
from memory.services.teams import member_add, team_default
from memory.services.tokens import InvalidScopes, parse_projects, parse_scopes, token_create


def role_for_new_user(scopes: list[str], *, staff: bool) -> str:
    """What a user made by ``--create-user`` becomes in the team: an owner with --staff, a curator
    when the token curates, else a member (existing scripts keep working)."""
    if staff:
        return TeamRole.OWNER
    return TeamRole.CURATOR if Scope.CURATE in scopes else TeamRole.MEMBER


class Command(BaseCommand):
    help = (
        "Create an API token of USER's membership of a team and print it on the last line (only its "
        "hash is stored). Without --team: the user's only team; a user made by --create-user joins "
        "the team 'default'."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--team", default=None, help="The team's slug.")
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user if it does not exist."
        )
        parser.add_argument(
            "--staff", action="store_true", help="Make the user staff (Django admin) and a team owner."
        )
        parser.add_argument("--scopes", default="read,write", help="Comma-separated: read, write, curate.")
        parser.add_argument(
            "--projects", default="", help="Limit the token to these projects: project:a,project:b."
        )
        parser.add_argument("--name", default="", help="A label for the token.")
        parser.add_argument("--expires-days", type=int, default=None, help="Expire after this many days.")

    def handle(
        self,
        *args,
        username: str,
        team: str | None,
        create_user: bool,
        staff: bool,
        scopes: str,
        projects: str,
        name: str,
        expires_days: int | None,
        **options,
    ) -> None:
        try:
            scope_list = parse_scopes(scopes)
            project_list = parse_projects(projects)
        except InvalidScopes as exc:
            raise CommandError(str(exc)) from exc
        if expires_days is not None and expires_days <= 0:
            raise CommandError("--expires-days must be a positive number of days")
        User = get_user_model()
        with transaction.atomic():
            from memory.models import Team

            user = User.objects.filter(username=username).first()
            created = user is None
            if created:
                if not create_user:
                    raise CommandError(f"no user {username!r}; pass --create-user to create one")
                user = User.objects.create_user(username=username)
                self.stdout.write(f"Created user {username}")
            if staff and not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
            target = None
            if team is not None:
                target = Team.objects.filter(slug=team).first()
                if target is None:
                    raise CommandError(f"no team {team!r}; create it with: manage.py create_team {team}")
            elif created:
                target = team_default()
            if created or (staff and target is not None):
                role = role_for_new_user(scope_list, staff=staff)
                if created or not user.memberships.filter(team=target).exists():
                    member_add(team=target, user=user, role=role)
                    self.stdout.write(f"{username} joined {target.slug} as {role}")
            expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
            try:
                token, key = token_create(
                    user=user,
                    team=target,
                    scopes=scope_list,
                    projects=project_list,
                    name=name,
                    expires_at=expires_at,
                )
            except (InvalidScopes, MemoryLaneError) as exc:
                raise CommandError(str(exc)) from exc
        limited = f" limited to {','.join(token.projects)}" if token.projects else ""
        self.stdout.write(
            f"Token {token.prefix} for {username} in {token.membership.team.slug} "
            f"with scopes {','.join(token.scopes)}{limited}"
        )
        self.stdout.write(key)
