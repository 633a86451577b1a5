"""Domain errors. Each has a ``code``; the API maps them to ``{"error": {"code", "message", ...}}``."""

from __future__ import annotations


class MemoryLaneError(Exception):
    code = "ERROR"

    def __init__(self, message: str, **details) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **self.details}


class InvalidInput(MemoryLaneError):
    """One or more fields are invalid; ``fields`` maps each to its messages."""

    code = "VALIDATION_ERROR"

    def __init__(self, fields: dict[str, list[str] | str]) -> None:
        fields = {
            name: [errors] if isinstance(errors, str) else list(errors) for name, errors in fields.items()
        }
        summary = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in fields.items())
        super().__init__(f"Invalid input — {summary}", fields=fields)
        self.fields = fields


class ContentTooLarge(InvalidInput):
    code = "CONTENT_TOO_LARGE"


class AmbiguousEntity(MemoryLaneError):
    """A bare name matched several entities; ``ambiguities`` maps each name to its candidate slugs."""

    code = "CLARIFICATION_REQUIRED"

    def __init__(self, ambiguities: dict[str, list[str]]) -> None:
        names = ", ".join(f"'{name}'" for name in ambiguities)
        super().__init__(
            f"Ambiguous entity reference {names}: several entities match.",
            ambiguities=ambiguities,
            hint="Pass the full slug, e.g. " + next(iter(ambiguities.values()))[0] + ".",
        )
        self.ambiguities = ambiguities


class NotFound(MemoryLaneError):
    code = "NOT_FOUND"


class InvalidTransition(MemoryLaneError):
    """A curator action that the memory's state does not allow (e.g. promoting a deprecated one)."""

    code = "INVALID_TRANSITION"
