"""Agent sessions: the unit that recalls memories, ends with an outcome and feeds extraction."""

from __future__ import annotations

import uuid

from django.db import IntegrityError, transaction

from memory.models import Session
from memory.services.errors import InvalidInput, NotFound

MAX_EXTERNAL_ID = 200


def session_resolve(*, user, reference: str, create: bool = True, agent: str | None = None) -> Session:
    """A session of ``user`` by our id or by the agent's own session id; an unknown agent session id
    starts a session (agents often ask for context before they register the session)."""
    if not isinstance(reference, str) or not reference.strip() or len(reference) > MAX_EXTERNAL_ID:
        raise InvalidInput({"session_id": [f"A session id is 1 to {MAX_EXTERNAL_ID} characters."]})
    reference = reference.strip()
    try:
        return Session.objects.get(pk=uuid.UUID(reference), user=user)
    except (ValueError, Session.DoesNotExist):
        pass
    session = Session.objects.filter(user=user, external_id=reference).first()
    if session is not None:
        return session
    if not create:
        raise NotFound(f"No session {reference!r}.")
    try:
        with transaction.atomic():
            return Session.objects.create(user=user, external_id=reference, agent=agent or "other")
    except IntegrityError:  # started concurrently by another request of the same agent
        return Session.objects.get(user=user, external_id=reference)
