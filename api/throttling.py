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


def token_call_wait(token_id: int) -> float | None:
    """Count one call by API token ``token_id`` made outside DRF (an MCP tool call) against the same
    budget as its REST requests. None when allowed, else the seconds to wait."""
    throttle = TokenRateThrottle()
    throttle.rate = throttle.get_rate()
    throttle.num_requests, throttle.duration = throttle.parse_rate(throttle.rate)
    throttle.key = throttle.cache_format % {"scope": throttle.scope, "ident": f"token-{token_id}"}
    throttle.history = throttle.cache.get(throttle.key, [])
    throttle.now = throttle.timer()
    while throttle.history and throttle.history[-1] <= throttle.now - throttle.duration:
        throttle.history.pop()
    if len(throttle.history) >= throttle.num_requests:
        return throttle.wait()
    throttle.throttle_success()
    return None
