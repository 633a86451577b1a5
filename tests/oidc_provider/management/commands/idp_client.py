from __future__ import annotations

from django.core.management.base import BaseCommand
from oauth2_provider.models import Application


class Command(BaseCommand):
    help = "Register a confidential OpenID Connect client that is never asked for consent."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--client-id", required=True)
        parser.add_argument("--client-secret", required=True)
        parser.add_argument("--redirect-uri", required=True)

    def handle(self, *args, client_id: str, client_secret: str, redirect_uri: str, **options) -> None:
        Application.objects.filter(client_id=client_id).delete()
        Application.objects.create(
            name="Memory Lane",
            client_id=client_id,
            client_secret=client_secret,  # hashed on save
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=redirect_uri,
            algorithm=Application.RS256_ALGORITHM,
            skip_authorization=True,
        )
