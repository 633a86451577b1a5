from __future__ import annotations

import pytest

from memory.services.sessions import messages_append, session_end, session_start

# The seeds' worked example (memory-lane-sidecar-design.md §6.7.6) with a user correction added.
CORRECTION_TRANSCRIPT = [
    {"seq": 0, "role": "user", "content": "Implement the OAuth login flow with JWT for the auth service."},
    {
        "seq": 1,
        "role": "assistant",
        "content": "I'll add the token refresh with the requests library. Let me make sure the tests pass.",
    },
    {
        "seq": 2,
        "role": "user",
        "content": "No, don't use requests in the auth service — always use httpx with the shared client.",
    },
    {"seq": 3, "role": "tool", "content": "error TS2304: Cannot find name 'TokenPair'."},
    {"seq": 4, "role": "tool", "content": "error TS2339: Property 'exp' does not exist."},
    {"seq": 5, "role": "assistant", "content": "Fixed both type errors; the build passes now."},
]

WORKED_OUTCOME = {
    "success": True,
    "duration_ms": 180_000,
    "error_count": 2,
    "retry_count": 0,
    "files_touched": ["src/auth/service.ts", "src/auth/schema.ts"],
    "summary": "OAuth login flow implemented with JWT",
    "evaluation": "Used 5min refresh buffer to prevent race conditions. Build initially failed with 2 TS "
    "errors, fixed by adding types.",
}


@pytest.fixture
def ended_session(member, team):
    """An ended session of the worked example, of ``member`` in ``team`` (no extraction has run:
    nothing is queued in tests that roll back, since on-commit callbacks never fire there)."""

    def make(external_id="cc-worked", messages=CORRECTION_TRANSCRIPT, *, user=None, in_team=None, **outcome):
        session, _ = session_start(
            team=in_team or team, user=user or member, external_id=external_id, agent="claude-code"
        )
        messages_append(session=session, messages=messages)
        session, _ = session_end(session=session, **{**WORKED_OUTCOME, **outcome})
        return session

    return make


@pytest.fixture
def api_client_for(db):
    """An API client with a read/write token of the given user."""
    from rest_framework.test import APIClient

    from memory.services.tokens import token_create

    def make(user) -> APIClient:
        client = APIClient()
        client.credentials(
            HTTP_AUTHORIZATION=f"Bearer {token_create(user=user, scopes=['read', 'write'])[1]}"
        )
        return client

    return make
