"""The deterministic extractor: the session's outcome, then the transcript's lessons
(``memory/services/lessons.py`` decides what a lesson is and how it reads)."""

from __future__ import annotations

import re

from memory.conf import setting
from memory.models import (
    MemoryType,
    Role,
    Session,
)
from memory.services import entities as entity_service
from memory.services import lessons
from memory.services.extraction.candidates import (
    Candidate,
    category_for,
    clip,
    compiled,
    confidence_for,
    cue_table,
    evidence_count,
    hits,
    one_per_lesson,
    preference,
    priority_for,
    project_name,
    quoted,
    session_entity_slugs,
    source_chunk_for,
    touches_config,
)


def outcome_candidate(session: Session) -> tuple[str, int] | None:
    """§4.8 "from the outcome": the type the outcome implies and its evidence count, if any."""
    text = " ".join(part for part in (session.summary, session.evaluation) if part)
    outcome_cues = {name: compiled(p) for name, p in setting("EXTRACTION_OUTCOME_CUES").items()}
    if session.error_count > 0 and session.success:
        memory_type = MemoryType.CORRECTION
    elif touches_config(session.files_touched):
        memory_type = MemoryType.DECISION
    else:
        memory_type = next((name for name, cues in outcome_cues.items() if hits(text, cues)), None)
    if memory_type is None:
        return None
    return memory_type, evidence_count(text, cue_table()) + evidence_count(text, outcome_cues)


def transcript_lessons(messages: list[tuple[int, str, str]], project: str) -> list[tuple[str, str, int, int]]:
    """The lessons of a transcript as (note, type, index of the first message, index of the last),
    in order (memory/services/lessons.py decides what a lesson is and how it reads). A sentence that
    depends on the one before is read with it; a fragment ("don't just cache it forever") with the
    one after; a sentence that only completes the previous turn's lesson ("Exactly, otherwise…")
    joins it. An assistant's finding counts when stated outright or confirmed by the next turn."""
    found: list[tuple[str, str, int, int]] = []
    opening = next((i for i, (_, role, _) in enumerate(messages) if role == Role.USER), None)
    for index, (_, role, content) in enumerate(messages):
        if role not in (Role.USER, Role.ASSISTANT):
            continue
        reply = next((text for _, r, text in messages[index + 1 :] if r in (Role.USER, Role.ASSISTANT)), "")
        confirmed = (
            role == Role.ASSISTANT and _next_role(messages, index) == Role.USER and lessons.confirms(reply)
        )
        sentences = readable_sentences(content)
        carried = ""
        previous_kept = -2  # the position of the last sentence of this turn kept as a lesson
        for position, sentence in enumerate(sentences):
            if lessons.is_question(sentence):
                carried = ""
                continue
            text = f"{carried} {sentence}".strip() if carried else sentence
            carried = ""
            if lessons.is_fragment(sentence) and position + 1 < len(sentences):
                carried = text
                continue
            if lessons.depends_on_previous(sentence):
                if position > 0:
                    text = f"{sentences[position - 1]} {text}"
                else:
                    if found and found[-1][3] >= index - 2:
                        note, kind, first, _ = found.pop()
                        addition = lessons.strip_filler(sentence)
                        found.append((lessons.rewrite(_joined(note, addition), project), kind, first, index))
                    continue
            if position > 0 and found and found[-1][2] == index and _continues(found[-1][0], sentence):
                # "Don't format money with float division. Use Decimal…": the rule and its remedy.
                note, kind, first, _ = found.pop()
                found.append((lessons.rewrite(_joined(note, sentence), project), kind, first, index))
                continue
            kind = lessons.classify(text, role, confirmed=confirmed)
            if kind is not None and index == opening and lessons.is_task_at_hand(text, kind):
                kind = None
            if kind is None:
                if (
                    role == Role.USER
                    and found
                    and found[-1][2] == index
                    and previous_kept == position - 1
                    and lessons.supports(sentence, role)
                ):
                    # "Don't hand edit those. Hand edits drifted last time": the reason after the rule.
                    earlier, earlier_kind, first, _ = found.pop()
                    addition = lessons.strip_filler(sentence)
                    found.append(
                        (lessons.rewrite(_joined(earlier, addition), project), earlier_kind, first, index)
                    )
                    previous_kept = position
                continue
            if (
                role == Role.USER
                and position > 0
                and previous_kept != position - 1
                and text == sentence
                and not lessons.depends_on_previous(sentence)
                and lessons.supports(sentences[position - 1], role, before=text)
            ):
                # "Use --vault-password-file. --ask-vault-pass breaks the CI job": the rule and its reason.
                text = _joined(sentences[position - 1], text)
            note = lessons.rewrite(text, project)
            if found and found[-1][2] == index and note.startswith(found[-1][0].rstrip(".")):
                found.pop()  # the same lesson, now with the sentence it depended on
            elif found and found[-1][2] == index and previous_kept == position - 1:
                # "In marlin you never change analysis in place. The app only ever queries the alias":
                # consecutive lesson sentences of one turn are one lesson told in two sentences.
                earlier, earlier_kind, first, _ = found.pop()
                note = lessons.rewrite(_joined(earlier, note), project)
                kind = min((earlier_kind, kind), key=preference)
            found.append((note, kind, index, index))
            previous_kept = position
    return found


def _joined(first: str, second: str) -> str:
    """Two sentences of one lesson as one note: "Don't X. Use Y." → "Don't X; use Y"."""
    return f"{first.rstrip('.')}; {second[0].lower()}{second[1:]}"


def _continues(previous_note: str, sentence: str) -> bool:
    """An instruction that completes the negative rule before it ("Don't X. Use Y.")."""
    negative = re.search(
        r"\b(?:don'?t|do not|never|not|nothing|no one|nobody|avoid)\b", previous_note, re.IGNORECASE
    )
    return bool(negative and lessons.IMPERATIVE_START.match(lessons.strip_filler(sentence)))


def _next_role(messages: list[tuple[int, str, str]], index: int) -> str | None:
    return next((role for _, role, _ in messages[index + 1 :] if role in (Role.USER, Role.ASSISTANT)), None)


def readable_sentences(text: str) -> list[str]:
    """The sentences of a message that are prose, not code, paths, logs or fences."""
    return [sentence for sentence in lessons.split_sentences(text) if _usable(sentence)]


def _usable(sentence: str) -> bool:
    low, high = setting("EXTRACTION_SENTENCE_CHARS")
    if not low <= len(sentence) <= high or "```" in sentence:
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in sentence)
    return letters >= 0.6 * len(sentence)  # not code, paths or logs


def rule_candidates(session: Session, messages: list[tuple[int, str, str]]) -> list[Candidate]:
    """The deterministic extractor: the outcome, then the transcript's lessons."""
    cues = cue_table()
    slugs = session_entity_slugs(session)
    pool = list(entity_service.Entity.objects.for_team(session.team_id).canonical())
    project = project_name(session)
    candidates: list[Candidate] = []

    def add(content: str, memory_type: str, evidence: int, chunk: str, span: tuple[int, int] | None) -> None:
        detected = entity_service.detect_in_text(content, pool).entities
        candidates.append(
            Candidate(
                content=content,
                memory_type=memory_type,
                category=category_for(memory_type, content),
                priority=priority_for(content),
                confidence=confidence_for(memory_type, evidence=evidence, duration_ms=session.duration_ms),
                source_chunk=chunk,
                entities=list(dict.fromkeys([*slugs, *(e.slug for e in detected)]))[
                    : setting("MAX_ENTITIES")
                ],
                seq=messages[span[0]][0] if span else None,
                seq_end=messages[span[1]][0] if span else None,
            )
        )

    outcome_text = " ".join(part for part in (session.summary, session.evaluation) if part).strip()
    if len(outcome_text) >= setting("EXTRACTION_SENTENCE_CHARS")[0] and (found := outcome_candidate(session)):
        memory_type, evidence = found
        chunk = "\n".join(
            [
                quoted(
                    "outcome",
                    f"success={session.success}, errors={session.error_count}, "
                    f"retries={session.retry_count}, files={', '.join(session.files_touched[:10])}",
                ),
                quoted("summary", session.summary),
                quoted("evaluation", session.evaluation),
            ]
        )
        add(
            lessons.rewrite(clip(outcome_text, setting("MAX_CONTENT_CHARS")), project),
            memory_type,
            evidence,
            clip(chunk, setting("EXTRACTION_SOURCE_CHUNK_CHARS")),
            None,
        )
    after = session.extracted_through_seq  # a resumed session: only what came after the last run
    for note, memory_type, first, last in transcript_lessons(messages, project):
        if after is not None and messages[last][0] <= after:
            continue
        note = lessons.names_subject(note, project)
        add(
            note,
            memory_type,
            evidence_count(note, cues),
            source_chunk_for(messages, first, last),
            (first, last),
        )
    return one_per_lesson(candidates)
