"""Per-token request throttling (per user for dashboard sessions, per address otherwise)."""

from __future__ import annotations

from rest_framework.throttling import SimpleRateThrottle

from memory.conf import setting
from memory.models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    scope = "token"

    def get_rate(self) -> str:
        return setting("API_THROTTLE_RATE")

    def allow_request(self, request, view) -> bool:
        # Read the rate on every request, so a changed setting applies without a restart.
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view) -> str:
        if isinstance(request.auth, ApiToken):
            ident = f"token-{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
