"""``Authorization: Bearer <token>`` with hashed, scoped ApiTokens."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from memory.services.tokens import token_authenticate


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
        try:
            key = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("The token is not valid text.") from None
        token = token_authenticate(key)
        if token is None:
            raise exceptions.AuthenticationFailed("The token is invalid, revoked or expired.")
        return token.user, token

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'
