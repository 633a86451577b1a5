"""Dashboard sign-in through OpenID Connect, on mozilla-django-oidc (docs/teams.md).

mozilla-django-oidc runs the authorization-code flow (state, nonce, PKCE, the ID token's RS256
signature against the provider's keys). This module adds what it leaves to its users:

- the provider's endpoints from its discovery document (``<issuer>/.well-known/openid-configuration``),
  fetched once per process when a sign-in first needs them, so an unreachable provider never stops
  a password login or a page load;
- the ID token's issuer and audience, which it does not check;
- who the person is: the provider's ``sub``, stored on :class:`dashboard.models.SignOnIdentity`. A
  first sign-in links a local account by email only when the provider says it verified that
  email and exactly one account has it; otherwise it creates an account;
- what they may do: their groups → team roles (memory.services.signon), at every sign-in. A person
  who would belong to no team is refused, and no account is created for them.

A refusal says why on the page the callback shows (dashboard/views/signon.py), never a 500.
"""

from __future__ import annotations

import logging
import re

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from dashboard.models import SignOnIdentity
from memory.services.signon import (
    GroupRole,
    current_roles,
    groups_from_claim,
    memberships_plan,
    memberships_sync,
    rules_for_existing_teams,
)

logger = logging.getLogger(__name__)

DISCOVERY_PATH = "/.well-known/openid-configuration"
# Where the callback finds why a sign-in was refused (the backend can only return None).
REFUSAL_ATTRIBUTE = "signon_refusal"
USERNAME_MAX_LENGTH = 150  # django.contrib.auth's User.username
NAME_MAX_LENGTH = 150  # and its first_name, last_name
USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")
FALLBACK_USERNAME_PREFIX = "sso-"
SUBJECT_IN_USERNAME = 12  # characters of a ``sub`` in a username made from it

NO_TEAM = (
    "None of your groups at {provider} gives you a role in a team here, and you belong to no team, "
    "so there is nothing for you to see yet. Ask your administrator to add you to a group that is "
    "mapped to a team (or a team owner to add you on their Members page)."
)
INACTIVE = "Your account here is disabled. Ask an administrator to enable it."
NOT_THE_SAME_PERSON = "{provider} described a different person in its user info than in its ID token."
NOT_FOR_US = "The ID token was not issued by {provider} for this server."


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read."""


_discovery: dict[str, dict] = {}


def signon_enabled() -> bool:
    return bool(settings.OIDC_ISSUER)


def provider_endpoint(name: str) -> str:
    """An endpoint of the configured provider (``authorization_endpoint``, ``token_endpoint``,
    ``userinfo_endpoint``, ``jwks_uri``) from its discovery document. A document is kept for the
    process's life once read; a failure is not kept, so the next sign-in tries again."""
    issuer = settings.OIDC_ISSUER
    document = _discovery.get(issuer)
    if document is None:
        try:
            response = requests.get(issuer + DISCOVERY_PATH, timeout=settings.OIDC_TIMEOUT)
            response.raise_for_status()
            document = response.json()
        except (requests.RequestException, ValueError) as exc:
            raise ProviderUnavailable(f"{issuer}{DISCOVERY_PATH}: {exc}") from exc
        if str(document.get("issuer", "")).rstrip("/") != issuer:
            # OpenID Connect Discovery §4.3: the document must name the issuer it was asked for.
            raise ProviderUnavailable(f"{issuer}{DISCOVERY_PATH} names the issuer {document.get('issuer')!r}")
        _discovery[issuer] = document
    if not document.get(name):
        raise ProviderUnavailable(f"{issuer}{DISCOVERY_PATH} has no {name}")
    return document[name]


def refuse(request, message: str) -> None:
    """Say why ``request``'s sign-in is refused (a message with ``{provider}`` in it), for the callback
    view to show: a backend can only answer None."""
    setattr(request, REFUSAL_ATTRIBUTE, message)


class SignOnBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend, matching people by ``sub`` and mapping groups to teams."""

    def __init__(self, *args, **kwargs) -> None:
        # Not the parent's __init__, which reads the endpoints: Django makes a backend for every
        # password login and every request of a person signed in through it.
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None

    OIDC_OP_TOKEN_ENDPOINT = property(lambda self: provider_endpoint("token_endpoint"))
    OIDC_OP_USER_ENDPOINT = property(lambda self: provider_endpoint("userinfo_endpoint"))
    OIDC_OP_JWKS_ENDPOINT = property(lambda self: provider_endpoint("jwks_uri"))

    def authenticate(self, request, **kwargs):
        # Only the callback view passes a nonce: a password login's request that happens to carry
        # ?code=&state= is not a sign-in.
        if not signon_enabled() or "nonce" not in kwargs:
            return None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token, **kwargs) -> dict:
        payload = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else list(audience or [])
        if (
            str(payload.get("iss", "")).rstrip("/") != settings.OIDC_ISSUER
            or self.OIDC_RP_CLIENT_ID not in audiences
        ):
            refuse(self.request, NOT_FOR_US)
            raise SuspiciousOperation("The ID token's issuer or audience is not ours.")
        return payload

    def get_or_create_user(self, access_token, id_token, payload):
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if userinfo.get("sub") != payload.get("sub"):
            # OpenID Connect Core §5.3.2: the user info's sub must be the ID token's.
            refuse(self.request, NOT_THE_SAME_PERSON)
            raise SuspiciousOperation("The user info's sub is not the ID token's.")
        user = signon_user(self.request, claims={**payload, **userinfo})
        if user is not None and not user.is_active:
            refuse(self.request, INACTIVE)
            return None
        return user


def signon_user(request, *, claims: dict):
    """The local user the verified ``claims`` sign in as, with their mapped teams brought up to
    date; None (and the reason on ``request``) when they may not sign in."""
    issuer, subject = settings.OIDC_ISSUER, str(claims["sub"])
    identity = SignOnIdentity.objects.filter(issuer=issuer, subject=subject).select_related("user").first()
    user = identity.user if identity else _user_by_verified_email(issuer, claims)
    rules = rules_for_existing_teams(GroupRole(*rule) for rule in settings.OIDC_GROUP_ROLES)
    groups = groups_from_claim(claims.get(settings.OIDC_GROUPS_CLAIM))
    plan = memberships_plan(groups=groups, rules=rules, current=current_roles(user))
    if user is None and not plan.may_sign_in:
        refuse(request, NO_TEAM)
        return None
    with transaction.atomic():
        if user is None:
            user = _user_create(claims)
        email = claims.get("email") or ""
        identity, created = SignOnIdentity.objects.get_or_create(
            issuer=issuer, subject=subject, defaults={"user": user, "email": email}
        )
        if not created:
            identity.email = email
            identity.last_signed_in_at = timezone.now()
            identity.save(update_fields=["email", "last_signed_in_at"])
        # Even a refused sign-in applies the plan: a group taken away at the provider takes the
        # team's membership (and its tokens) away now, not at some later successful sign-in.
        memberships_sync(user=user, plan=plan)
    logger.info("signon: %s at %s is %s; groups %s; %s", subject, issuer, user, sorted(groups), plan)
    if not plan.may_sign_in:
        refuse(request, NO_TEAM)
        return None
    return user


def _user_by_verified_email(issuer: str, claims: dict):
    """The one local account with the claims' email, when the provider verified that email and the
    account has no identity at this provider yet; else None. An unverified email links nothing:
    anyone may type any address into some providers' profile pages."""
    email = claims.get("email")
    if not email or claims.get("email_verified") not in (True, "true"):
        return None
    matches = list(get_user_model().objects.filter(email__iexact=email)[:2])
    if len(matches) != 1:
        return None
    if SignOnIdentity.objects.filter(user=matches[0], issuer=issuer).exists():
        return None
    return matches[0]


def _user_create(claims: dict):
    """A new local account for a person the provider vouches for, with no password: they sign in
    through the provider. Named after their ``preferred_username`` (or email) when that name is free."""
    User = get_user_model()
    email = claims.get("email") or ""
    wanted = claims.get("preferred_username") or email.split("@", 1)[0]
    base = USERNAME_UNSAFE.sub("", str(wanted))[: USERNAME_MAX_LENGTH - SUBJECT_IN_USERNAME]
    base = base or FALLBACK_USERNAME_PREFIX + str(claims["sub"])[:SUBJECT_IN_USERNAME]
    username, suffix = base, 1
    while User.objects.filter(username__iexact=username).exists():
        suffix += 1
        username = f"{base}-{suffix}"
    user = User.objects.create_user(
        username=username,
        email=email if claims.get("email_verified") in (True, "true") else "",
        first_name=str(claims.get("given_name") or "")[:NAME_MAX_LENGTH],
        last_name=str(claims.get("family_name") or "")[:NAME_MAX_LENGTH],
    )
    return user
