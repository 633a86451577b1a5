"""API tokens: created once, shown once, stored only as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from memory.models import ApiToken, Scope, Team
from memory.rows import row_reader
from memory.services.teams import membership_for

TOKEN_PREFIX = "ml_"
# Writing last_used_at on every request would turn each read into a write; once a minute is plenty.
LAST_USED_RESOLUTION = timedelta(seconds=60)


class InvalidScopes(ValueError):
    code = "INVALID_SCOPES"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_scopes(raw: str | list[str]) -> list[str]:
    """``"read,write"`` or ``["read", "write"]`` → a validated, ordered list of scopes."""
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    scopes = [item.strip() for item in items if item.strip()]
    unknown = sorted(set(scopes) - set(Scope.values))
    if unknown or not scopes:
        raise InvalidScopes(
            f"scopes must be some of {', '.join(Scope.values)}; got {', '.join(unknown) or 'none'}"
        )
    return [scope for scope in Scope.values if scope in scopes]


def parse_projects(raw: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """``"project:a,project:b"`` or a list → validated project slugs (``project:`` may be left out)."""
    from memory.services.entities import normalize_slug

    items = raw.split(",") if isinstance(raw, str) else list(raw or [])
    slugs, bad = [], []
    for item in (item.strip() for item in items):
        if not item:
            continue
        slug = normalize_slug(item if ":" in item else f"project:{item}")
        if slug is None or not slug.startswith("project:"):
            bad.append(item)
        elif slug not in slugs:
            slugs.append(slug)
    if bad:
        raise InvalidScopes(
            f"projects must be project slugs such as project:mobile-app; got {', '.join(bad)}"
        )
    return slugs


@transaction.atomic
def token_create(
    *,
    user,
    scopes: list[str],
    team: Team | str | None = None,
    projects: list[str] | tuple[str, ...] = (),
    name: str = "",
    expires_at: datetime | None = None,
) -> tuple[ApiToken, str]:
    """Create a token of ``user``'s membership of ``team`` (their only team when None) and return it
    with the plain key, which is never stored. Scopes above the member's role are refused
    (InvalidScopes); ``projects`` limits the token to those projects of the team. Raises NotAMember
    or TeamRequired (teams.membership_for)."""
    scopes = parse_scopes(scopes)
    membership = membership_for(user, team)
    above = [scope for scope in scopes if scope not in membership.scopes]
    if above:
        raise InvalidScopes(
            f"a {membership.role} of {membership.team.slug} may not hold the scope {', '.join(above)}"
        )
    prefix = secrets.token_hex(4)
    key = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        membership=membership,
        user=user,
        name=name,
        prefix=prefix,
        key_hash=hash_key(key),
        scopes=scopes,
        projects=parse_projects(projects),
        expires_at=expires_at,
    )
    return token, key


def token_authenticate(key: str) -> ApiToken | None:
    """The usable token for ``key`` (:meth:`ApiToken.is_usable`), with its user, or None."""
    if not key.startswith(TOKEN_PREFIX) or key.count("_") < 2:
        return None
    prefix = key[len(TOKEN_PREFIX) :].split("_", 1)[0]
    token = token_with_user(prefix)
    now = timezone.now()
    if token is None or not hmac.compare_digest(token.key_hash, hash_key(key)) or not token.is_usable(now):
        return None
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def token_with_user(prefix: str) -> ApiToken | None:
    """The token with ``prefix`` (unique) and its user, usable or not, read by one hand-written
    statement (:mod:`memory.rows`): every API request starts here."""
    found = row_reader(ApiToken, (("user", None), ("membership", None)), key="prefix").read([prefix])
    if not found:
        return None
    token = found[0]
    # The membership's team, read once: every request then scopes its queries by it.
    token.membership.team = Team.objects.get(pk=token.membership.team_id)
    return token


def token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
