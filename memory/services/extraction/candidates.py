"""What an extractor hands the store (a :class:`Candidate`), and the rules both extractors share:
the cue tables that type a lesson and count its evidence, its confidence, category and priority,
its source chunk, the session's entities, and one candidate per lesson."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory.conf import setting
from memory.models import (
    Category,
    Kind,
    Priority,
    Session,
    Source,
)
from memory.services import entities as entity_service
from memory.services import lessons


@dataclass
class Candidate:
    content: str
    memory_type: str
    category: str
    priority: str
    confidence: int
    source_chunk: str
    entities: list[str] = field(default_factory=list)
    seq: int | None = None  # the first message it came from; None for the outcome
    seq_end: int | None = None  # the last one (a lesson may span a turn and its answer)

    def as_store_fields(self) -> dict:
        return {
            "content": self.content,
            "memory_type": self.memory_type,
            "category": self.category,
            "priority": self.priority,
            "confidence": self.confidence,
            "entities": self.entities,
            "source": Source.EXTRACTION,
            "source_chunk": self.source_chunk,
            "kind": Kind.OBSERVATION,
            "evidence": (self.seq, self.seq_end if self.seq_end is not None else self.seq)
            if self.seq is not None
            else None,
        }


def compiled(names: list[str]) -> list[re.Pattern]:
    return [re.compile(pattern, re.IGNORECASE) for pattern in names]


def hits(text: str, patterns: list[re.Pattern]) -> int:
    return sum(1 for pattern in patterns if pattern.search(text))


def cue_table() -> dict[str, list[re.Pattern]]:
    return {name: compiled(patterns) for name, patterns in setting("EXTRACTION_CUES").items()}


def evidence_count(text: str, table: dict[str, list[re.Pattern]]) -> int:
    return sum(hits(text, patterns) for patterns in table.values())


def confidence_for(memory_type: str, *, evidence: int, duration_ms: int | None) -> int:
    """§4.8: 70 + the type's bonus (+15 for recovering from errors) + 10 for a session under 30 s
    + 15 for more than two evidence phrases, clamped to 0–100."""
    score = setting("EXTRACTION_BASE_CONFIDENCE") + setting("EXTRACTION_TYPE_BONUS").get(memory_type, 0)
    if duration_ms is not None and duration_ms < setting("EXTRACTION_FAST_SECONDS") * 1000:
        score += setting("EXTRACTION_FAST_BONUS")
    if evidence > setting("EXTRACTION_EVIDENCE_PHRASES"):
        score += setting("EXTRACTION_EVIDENCE_BONUS")
    return max(0, min(100, score))


def category_for(memory_type: str, text: str) -> str:
    if hits(text, compiled(setting("EXTRACTION_DEBUGGING_CUES"))) and memory_type in (
        "correction",
        "insight",
    ):
        return Category.DEBUGGING
    return setting("EXTRACTION_TYPE_CATEGORY").get(memory_type, Category.WORKFLOW)


def priority_for(text: str) -> str:
    """Critical needs a real reason and a rule (lessons.is_critical), not "never" in "never mind"."""
    return Priority.CRITICAL if lessons.is_critical(text) else Priority.MODERATE


def touches_config(files: list[str]) -> bool:
    patterns = compiled(setting("EXTRACTION_CONFIG_FILES"))
    return any(pattern.search(path.replace("\\", "/")) for path in files for pattern in patterns)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(role: str, text: str) -> str:
    """One turn of a transcript as a source chunk quotes it: who spoke, in parentheses on a line of
    its own, then what they wrote from the start of the next line. The screen reads a source chunk
    as it is served, so the server's own label must not read as words of the transcript: "assistant:
    Run the migration…" reads as an order addressed to an agent by name, and "user: Assistant, push
    to main…" hides the turn's own address from the rules that look at the start of a line."""
    return f"({role})\n{text}"


def source_chunk_for(messages: list[tuple[int, str, str]], first: int, last: int | None = None) -> str:
    """The messages a lesson came from (``first`` to ``last``), with the one before for context,
    each :func:`quoted`."""
    limit = setting("EXTRACTION_SOURCE_CHUNK_CHARS")
    last = first if last is None else last
    span = "\n".join(
        quoted(role, clip(content, limit * 2 // 3)) for _, role, content in messages[first : last + 1]
    )
    span = clip(span, limit)
    if first == 0:
        return span
    _, previous_role, previous = messages[first - 1]
    room = limit - len(span) - len(quoted(previous_role, "")) - 1
    if room < 40:
        return span
    return clip(f"{quoted(previous_role, clip(previous, room))}\n{span}", limit)


def session_entity_slugs(session: Session) -> list[str]:
    slugs = [session.project.slug] if session.project_id else []
    slugs += entity_service.entities_from_paths(session.files_touched)
    return list(dict.fromkeys(slugs))


def project_name(session: Session) -> str:
    return session.project.slug.split(":", 1)[1] if session.project_id else ""


def preference(memory_type: str) -> int:
    """The rank of a lesson's type when two candidates are one lesson (lower is kept)."""
    return PREFERRED_TYPES.index(memory_type) if memory_type in PREFERRED_TYPES else len(PREFERRED_TYPES)


PREFERRED_TYPES = ("correction", "commitment", "decision", "gap", "insight")


def one_per_lesson(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per lesson, at most EXTRACTION_MAX_CANDIDATES, in transcript order. Two
    candidates are one lesson when most of the shorter one's content words are in the other (the
    assistant's root cause and the user's rule about it); the rule is kept over the finding, then
    the fuller text."""

    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if len(w) > 2} - lessons.STOP_WORDS

    def rank(candidate: Candidate) -> tuple:
        return (preference(candidate.memory_type), -len(candidate.content), -candidate.confidence)

    kept: list[Candidate] = []
    for candidate in sorted(candidates, key=rank):
        mine = words(candidate.content)
        same = next(
            (
                other
                for other in kept
                if mine
                and (theirs := words(other.content))
                and len(mine & theirs) / min(len(mine), len(theirs))
                >= setting("EXTRACTION_SAME_LESSON_OVERLAP")
            ),
            None,
        )
        if same is None:
            kept.append(candidate)
    kept = kept[: setting("EXTRACTION_MAX_CANDIDATES")]
    order = {id(c): i for i, c in enumerate(candidates)}
    return sorted(kept, key=lambda c: order[id(c)])
