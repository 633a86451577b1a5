"""A store request validated, redacted and screened (``prepare``): a :class:`PreparedMemory`
ready to embed and upsert, or an ``InvalidInput`` that names every field at fault."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory.conf import setting
from memory.models import (
    Category,
    Kind,
    MemoryType,
    Priority,
    Source,
    Status,
)
from memory.services import entities as entity_service
from memory.services.errors import ContentTooLarge, InvalidInput
from memory.services.injection import screen_fields
from memory.services.redaction import redact
from memory.services.upsert import (
    content_hash,
)

MAX_TAG_LENGTH = 64
MAX_SOURCE_CHUNK_CHARS = 8000
# Provenance: where an imported memory came from (a file and its hash), kept on the audit events.
MAX_PROVENANCE_PATH_CHARS = 500
PROVENANCE_ORIGIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # e.g. claude-code-auto-memory
PROVENANCE_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass
class PreparedMemory:
    """A validated, redacted store request, ready to embed and upsert."""

    content: str
    content_hash: str
    memory_type: str
    category: str
    priority: str
    tags: list[str]
    confidence: int
    source: str
    source_chunk: str
    kind: str
    is_negative: bool
    status: str
    entity_refs: list[str]
    valid_from: datetime | None
    created_at: datetime | None
    agent_name: str
    redactions: list[str]
    quarantine_reasons: list[str]
    status_reason: str = ""
    evidence: tuple[int, int] | None = None  # the session messages (seq range) it was extracted from
    provenance: dict[str, str] = field(default_factory=dict)  # an import's file: origin, path, sha256
    extra: dict[str, Any] = field(default_factory=dict)


def choice(errors: dict, name: str, value, choices, default: str) -> str:
    if value in (None, ""):
        return default
    if value not in choices.values:
        errors[name] = [f"'{value}' is not one of: {', '.join(choices.values)}."]
    return value


def prepare(
    *,
    content: str,
    memory_type: str | None = None,
    category: str | None = None,
    priority: str | None = None,
    entities: list[str] | None = None,
    tags: list[str] | None = None,
    confidence: int | None = None,
    source: str = Source.API,
    source_chunk: str = "",
    kind: str = Kind.OBSERVATION,
    is_negative: bool = False,
    status: str | None = None,
    valid_from: datetime | None = None,
    created_at: datetime | None = None,
    agent_name: str = "",
    evidence: tuple[int, int] | None = None,
    provenance: dict | None = None,
) -> PreparedMemory:
    """Validate one store request and make its text safe to keep. Raises InvalidInput.
    ``provenance`` (an import's file: ``origin``, ``path``, ``sha256``) is kept, redacted, on the
    memory's created or reinforced event, so each teammate's copy of a note stays traceable."""
    errors: dict[str, list[str]] = {}
    if not isinstance(content, str) or not content.strip():
        errors["content"] = ["Content must be non-empty text."]
        content = ""
    content = content.strip()
    if len(content) > setting("MAX_CONTENT_CHARS"):
        raise ContentTooLarge(
            {
                "content": [
                    f"Content is {len(content)} characters; the limit is {setting('MAX_CONTENT_CHARS')}."
                ]
            }
        )
    memory_type = choice(errors, "type", memory_type, MemoryType, setting("DEFAULT_TYPE"))
    category = choice(errors, "category", category, Category, setting("DEFAULT_CATEGORY"))
    priority = choice(errors, "priority", priority, Priority, setting("DEFAULT_PRIORITY"))
    source = choice(errors, "source", source, Source, Source.API)
    kind = choice(errors, "kind", kind, Kind, Kind.OBSERVATION)
    if status is not None:
        status = choice(errors, "status", status, Status, Status.ACTIVE)
    if confidence is None:
        confidence = setting("DEFAULT_CONFIDENCE")
    elif isinstance(confidence, bool) or not isinstance(confidence, int) or not 0 <= confidence <= 100:
        errors["confidence"] = ["Confidence must be an integer from 0 to 100."]
    tags = tags or []
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        errors["tags"] = ["Tags must be a list of strings."]
        tags = []
    tags = list(dict.fromkeys(tag.strip().lower() for tag in tags if tag.strip()))
    if len(tags) > setting("MAX_TAGS"):
        errors["tags"] = [f"At most {setting('MAX_TAGS')} tags."]
    elif any(len(tag) > MAX_TAG_LENGTH for tag in tags):
        errors["tags"] = [f"Tags are at most {MAX_TAG_LENGTH} characters."]
    if not isinstance(source_chunk, str) or len(source_chunk) > MAX_SOURCE_CHUNK_CHARS:
        errors["source_chunk"] = [f"The source chunk is text of at most {MAX_SOURCE_CHUNK_CHARS} characters."]
        source_chunk = ""
    entity_refs: list[str] = []
    try:
        entity_refs = entity_service.validate_references(entities or [])
    except InvalidInput as exc:
        errors.update(exc.fields)
    if len(agent_name) > 100:
        errors["agent_name"] = ["The agent name is at most 100 characters."]
    if evidence is not None and not (
        isinstance(evidence, tuple | list)
        and len(evidence) == 2
        and all(isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 for seq in evidence)
        and evidence[0] <= evidence[1]
    ):
        errors["evidence"] = ["The evidence is a (first, last) range of message numbers."]
    provenance = provenance or {}
    if not valid_provenance(provenance):
        errors["provenance"] = [
            "The provenance is {origin: a lowercase label, path: the file's path (at most "
            f"{MAX_PROVENANCE_PATH_CHARS} characters), sha256: its hash in hex}}, each optional."
        ]
        provenance = {}
    if errors:
        raise InvalidInput(errors)

    # Every text that is served is screened — the source chunk and tags reach agents too — and
    # before redaction, so an encoded payload cannot hide behind its redaction marker.
    reasons = screen_fields(content=content, source_chunk=source_chunk, tags=tags)
    content, redactions = redact(content)
    source_chunk, chunk_redactions = redact(source_chunk)
    tag_redactions = []
    for index, tag in enumerate(tags):
        tags[index], found = redact(tag)
        tag_redactions += found
    if provenance.get("path"):  # a file name may carry a secret too; the hash and label cannot
        provenance = {**provenance, "path": redact(provenance["path"])[0]}
    if reasons:
        status = Status.QUARANTINED
    elif status is None:
        review = source == Source.EXTRACTION and setting("REVIEW_EXTRACTED")
        status = Status.PENDING_REVIEW if review else Status.ACTIVE
    return PreparedMemory(
        content=content,
        content_hash=content_hash(content),
        memory_type=memory_type,
        category=category,
        priority=priority,
        tags=tags,
        confidence=confidence,
        source=source,
        source_chunk=source_chunk,
        kind=kind,
        is_negative=is_negative,
        status=status,
        entity_refs=entity_refs,
        valid_from=valid_from,
        created_at=created_at,
        agent_name=agent_name,
        redactions=redactions + chunk_redactions + tag_redactions,
        quarantine_reasons=reasons,
        status_reason=("Quarantined: " + "; ".join(reasons)) if reasons else "",
        evidence=tuple(evidence) if evidence is not None else None,
        provenance=provenance,
    )


def valid_provenance(provenance) -> bool:
    if not isinstance(provenance, dict) or not set(provenance) <= {"origin", "path", "sha256"}:
        return False
    origin, path, sha256 = (provenance.get(key, "") for key in ("origin", "path", "sha256"))
    if not all(isinstance(value, str) for value in (origin, path, sha256)):
        return False
    return (
        (not origin or PROVENANCE_ORIGIN.fullmatch(origin) is not None)
        and (not sha256 or PROVENANCE_SHA256.fullmatch(sha256) is not None)
        and len(path) <= MAX_PROVENANCE_PATH_CHARS
        and "\x00" not in path
    )
