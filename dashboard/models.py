"""The dashboard's own rows: how a person signed in through single sign-on is known (docs/teams.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class SignOnIdentity(models.Model):
    """A person's account at an OpenID Connect provider, bound to one local user. Sign-ins are
    matched by the provider (``iss``) and the ``sub`` it names the person by, which it never
    reuses or changes; an email address can change hands, so it links a local account only once,
    when the provider says it verified it (dashboard/signon.py)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signon_identities"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    email = models.CharField(max_length=254, blank=True, help_text="As the provider last sent it.")
    created_at = models.DateTimeField(default=timezone.now)
    last_signed_in_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="signon_identity_unique_subject"),
            models.UniqueConstraint(fields=["user", "issuer"], name="signon_identity_one_per_issuer"),
        ]

    def __str__(self) -> str:
        return f"{self.user} at {self.issuer}"
