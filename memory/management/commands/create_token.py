from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from memory.services.tokens import InvalidScopes, parse_scopes, token_create


class Command(BaseCommand):
    help = "Create an API token for USER and print it on the last line (only its hash is stored)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user if it does not exist."
        )
        parser.add_argument("--staff", action="store_true", help="Make the user a curator (staff).")
        parser.add_argument("--scopes", default="read,write", help="Comma-separated: read, write, curate.")
        parser.add_argument("--name", default="", help="A label for the token.")
        parser.add_argument("--expires-days", type=int, default=None, help="Expire after this many days.")

    def handle(
        self,
        *args,
        username: str,
        create_user: bool,
        staff: bool,
        scopes: str,
        name: str,
        expires_days: int | None,
        **options,
    ) -> None:
        try:
            scope_list = parse_scopes(scopes)
        except InvalidScopes as exc:
            raise CommandError(str(exc)) from exc
        if expires_days is not None and expires_days <= 0:
            raise CommandError("--expires-days must be a positive number of days")
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(username=username).first()
            if user is None:
                if not create_user:
                    raise CommandError(f"no user {username!r}; pass --create-user to create one")
                user = User.objects.create_user(username=username)
                self.stdout.write(f"Created user {username}")
            if staff and not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
            expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
            token, key = token_create(user=user, scopes=scope_list, name=name, expires_at=expires_at)
        self.stdout.write(f"Token {token.prefix} for {username} with scopes {','.join(token.scopes)}")
        self.stdout.write(key)
