"""Serializers translate and shape; the rules live in memory.services (STYLE.md)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.models import (
    Agent,
    Category,
    Entity,
    EntityType,
    FactChangeKind,
    FeedbackEvent,
    Maturity,
    Memory,
    MemoryType,
    Priority,
    Role,
    Session,
    Signal,
    Source,
    Status,
)
from memory.services.store import MAX_PROVENANCE_PATH_CHARS, PROVENANCE_ORIGIN, PROVENANCE_SHA256

ML = settings.MEMORY_LANE

# The sources a token may claim for what it stores; manual, extraction and reflection are the
# server's own (the dashboard, the memory catcher, the reflection job).
AGENT_SOURCES = [Source.API, Source.HOOK, Source.IMPORT]


def _text(max_length: int, **kwargs) -> serializers.CharField:
    return serializers.CharField(max_length=max_length, **kwargs)


def unknown_field_errors(given, known, ignored=()) -> dict[str, list[str]]:
    """Each given name that is not a known field, with the known one it was probably meant to be
    ("entites → entities?")."""
    errors = {}
    for name in given:
        if name in known or name in ignored:
            continue
        match = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
        hint = f" Did you mean '{match[0]}'? ({name} → {match[0]}?)" if match else ""
        errors[str(name)] = [
            f"Unknown field; it is not stored or used.{hint} Known fields: {', '.join(known)}."
        ]
    return errors


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses fields it does not know (DESIGN.md §8), so a typo such as
    "entites" is a 400 naming it, never a memory stored without its entities. ``ignored_fields``
    are parameters another layer reads (pagination)."""

    ignored_fields: tuple[str, ...] = ()

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            errors = unknown_field_errors(data.keys(), list(self.fields), self.ignored_fields)
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. VALIDATION_ERROR.")
    message = serializers.CharField(help_text="What went wrong, for a person.")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Validation errors per field (400).",
    )
    ambiguities = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="CLARIFICATION_REQUIRED (409): each ambiguous name with its candidate slugs.",
    )
    hint = serializers.CharField(required=False)
    retry_after_seconds = serializers.IntegerField(required=False, help_text="429: when to try again.")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


class EvidenceSerializer(serializers.Serializer):
    session_id = serializers.CharField(help_text="The agent's session id.")
    seq_start = serializers.IntegerField()
    seq_end = serializers.IntegerField()
    messages = serializers.CharField(help_text="Where to read those messages.")


class MessageOutSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    role = serializers.CharField()
    content = serializers.CharField()
    created_at = serializers.DateTimeField()


class MessagesFilterSerializer(StrictSerializer):
    ignored_fields = ("page_size",)

    # "from" is a Python keyword: declared through the class namespace, where DRF collects fields.
    locals()["from"] = serializers.IntegerField(
        min_value=0, required=False, help_text="The first seq (inclusive)."
    )
    to = serializers.IntegerField(min_value=0, required=False, help_text="The last seq (inclusive).")


class MemorySerializer(serializers.ModelSerializer):
    type = serializers.CharField(source="memory_type")
    entities = serializers.SerializerMethodField()
    author = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    session_id = serializers.UUIDField(read_only=True, allow_null=True)
    superseded_by = serializers.UUIDField(source="superseded_by_id", read_only=True, allow_null=True)
    inverted_from = serializers.UUIDField(source="inverted_from_id", read_only=True, allow_null=True)
    condensed_into = serializers.UUIDField(source="condensed_into_id", read_only=True, allow_null=True)
    evidence = serializers.SerializerMethodField(
        help_text="For an extracted memory: the session and the messages (seq range) it came from."
    )

    class Meta:
        model = Memory
        fields = [
            "id",
            "kind",
            "content",
            "type",
            "category",
            "priority",
            "is_negative",
            "tags",
            "entities",
            "confidence",
            "feedback_score",
            "helpful_count",
            "harmful_count",
            "irrelevant_count",
            "retrieval_count",
            "maturity",
            "status",
            "source",
            "source_chunk",
            "agent_name",
            "author",
            "session_id",
            "valid_from",
            "valid_until",
            "superseded_by",
            "inverted_from",
            "condensed_into",
            "evidence",
            "last_validated_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    # Output only: the fields depend on nothing but the class (no context, no instance, nothing
    # validated), so they are built and bound once per class and shared. Building them for every
    # response cost a third of serializing a search's ten results.
    @property
    def fields(self):
        cls = type(self)
        built = cls.__dict__.get("_built_fields")
        if built is None:
            # DRF's own construction (a cached property on each instance), run once on a prototype.
            built = serializers.ModelSerializer.fields.func(cls())
            cls._built_fields = built
        return built

    @extend_schema_field(EvidenceSerializer(allow_null=True))
    def get_evidence(self, memory: Memory) -> dict | None:
        if memory.session_id is None or memory.evidence_seq_start is None:
            return None
        external = memory.session.external_id
        return {
            "session_id": external,
            "seq_start": memory.evidence_seq_start,
            "seq_end": memory.evidence_seq_end,
            "messages": f"/api/v1/sessions/{external}/messages?from={memory.evidence_seq_start}&to={memory.evidence_seq_end}",
        }

    def get_entities(self, memory: Memory) -> list[str]:
        slugs = getattr(memory, "entity_slugs", None)  # api.views.common.with_entity_slugs
        if slugs is not None:
            return slugs
        mentions = getattr(memory, "prefetched_mentions", None)
        if mentions is None:
            mentions = memory.mentions.filter(resolved=True).select_related("entity")
        return sorted({m.entity.slug for m in mentions if m.resolved and m.entity_id})


def paginated(serializer_class, name: str):
    """The cursor-paginated envelope of a list, for the schema."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "next": serializers.URLField(allow_null=True, help_text="The next page, or null."),
            "previous": serializers.URLField(allow_null=True, help_text="The previous page, or null."),
            "results": serializer_class(many=True),
        },
    )


class ProvenanceSerializer(StrictSerializer):
    origin = serializers.RegexField(
        rf"\A{PROVENANCE_ORIGIN.pattern}\Z",
        required=False,
        help_text="What kind of file, e.g. claude-code-auto-memory, claude-md, claude-rules.",
    )
    path = _text(
        MAX_PROVENANCE_PATH_CHARS,
        required=False,
        help_text="The file, relative to the folder it was read from.",
    )
    sha256 = serializers.RegexField(
        rf"\A{PROVENANCE_SHA256.pattern}\Z", required=False, help_text="The file's SHA-256, in hex."
    )


class ObservationInSerializer(StrictSerializer):
    content = serializers.CharField(
        trim_whitespace=False,
        allow_blank=True,
        help_text=f"What to remember; 1–{ML['MAX_CONTENT_CHARS']} characters. Secrets are redacted.",
    )
    type = serializers.ChoiceField(choices=MemoryType.choices, required=False, help_text="Taxonomy type.")
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    entities = serializers.ListField(
        child=_text(200),
        required=False,
        max_length=ML["MAX_ENTITIES"],
        help_text="Slugs (type:kebab-name) or names of known entities.",
    )
    tags = serializers.ListField(child=_text(64), required=False, max_length=ML["MAX_TAGS"])
    confidence = serializers.IntegerField(min_value=0, max_value=100, required=False)
    source_chunk = _text(8000, required=False, allow_blank=True, trim_whitespace=False)
    session_id = _text(200, required=False, help_text="Our session id or the agent's own session id.")
    valid_from = serializers.DateTimeField(required=False)
    agent_name = _text(100, required=False, allow_blank=True)
    source = serializers.ChoiceField(
        choices=AGENT_SOURCES,
        required=False,
        help_text="Where the agent got it: api (default), hook, or import (read from files, e.g. "
        "`memlane harvest`).",
    )
    provenance = ProvenanceSerializer(
        required=False, help_text="For an import: the file it came from. Kept on the memory's history."
    )


class BatchInSerializer(StrictSerializer):
    items = ObservationInSerializer(many=True, max_length=ML["MAX_BATCH"], min_length=1)


class DecisionChangeSerializer(serializers.Serializer):
    kind = serializers.CharField(
        help_text="number, version, port, date, time, path, identifier, name, term, negation or order."
    )
    old = serializers.ListField(child=serializers.CharField())
    new = serializers.ListField(child=serializers.CharField())


OPERATIONS = ["ADD", "UPDATE", "PROPOSED", "NOOP"]


class DecisionSerializer(serializers.Serializer):
    operation = serializers.ChoiceField(choices=OPERATIONS)
    compared_with = serializers.UUIDField(
        allow_null=True, help_text="The memory the new one was judged against."
    )
    cosine = serializers.FloatField(allow_null=True)
    jaccard = serializers.FloatField(allow_null=True)
    reason = serializers.CharField(help_text='In words, e.g. "version changed: 18 → 20".')
    changed_fact = serializers.BooleanField(
        help_text="An UPDATE or PROPOSED whose fact changed: queued for review."
    )
    changes = DecisionChangeSerializer(many=True)


class StoreResultSerializer(serializers.Serializer):
    operation = serializers.ChoiceField(
        choices=OPERATIONS,
        help_text="ADD (new), UPDATE (a changed fact superseded a candidate), PROPOSED (a change of "
        "settled knowledge by a non-curator: stored pending review, the old memory stays served) or "
        "NOOP (the same fact: reinforced).",
    )
    memory = MemorySerializer()
    superseded = serializers.UUIDField(source="superseded.pk", allow_null=True, default=None)
    proposal_for = serializers.UUIDField(
        source="proposal_for.pk",
        allow_null=True,
        default=None,
        help_text="PROPOSED: the settled memory the proposal would change.",
    )
    decision = DecisionSerializer(
        help_text="Why: the operation, the memory compared with, cosine, Jaccard, reason."
    )


class BatchResultSerializer(serializers.Serializer):
    results = StoreResultSerializer(many=True)


class MemoryPatchSerializer(StrictSerializer):
    content = serializers.CharField(required=False, trim_whitespace=False, allow_blank=True)
    type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    tags = serializers.ListField(child=_text(64), required=False, max_length=ML["MAX_TAGS"])
    entities = serializers.ListField(child=_text(200), required=False, max_length=ML["MAX_ENTITIES"])
    valid_until = serializers.DateTimeField(required=False, allow_null=True)
    status = serializers.ChoiceField(
        choices=[Status.ACTIVE, Status.REJECTED],
        required=False,
        help_text="active approves a pending or quarantined memory; rejected rejects it.",
    )
    maturity = serializers.ChoiceField(
        choices=[Maturity.PROVEN, Maturity.DEPRECATED, "reset"],
        required=False,
        help_text="proven promotes; deprecated (with reason) retires; reset follows feedback again.",
    )
    reason = _text(1000, required=False, allow_blank=True)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Send at least one field to change.")
        if attrs.get("maturity") == Maturity.DEPRECATED and not (attrs.get("reason") or "").strip():
            raise serializers.ValidationError({"reason": ["Say why the memory is deprecated."]})
        return attrs


class ObservationFilterSerializer(StrictSerializer):
    ignored_fields = ("cursor", "page_size")

    type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    maturity = serializers.ChoiceField(choices=Maturity.choices, required=False)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    entity = _text(200, required=False)
    kind = serializers.ChoiceField(choices=["observation", "reflection"], required=False)


class SearchInSerializer(StrictSerializer):
    q = _text(2000, help_text="The question or task, in natural language.")
    entities = serializers.ListField(
        child=_text(200),
        required=False,
        max_length=ML["MAX_ENTITIES"],
        help_text="Strict filter: slugs or names (GET: comma-separated). An ambiguous name answers 409.",
    )
    type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    category = serializers.ChoiceField(choices=Category.choices, required=False)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=ML["SEARCH_MAX_LIMIT"], required=False)
    session_id = _text(200, required=False, help_text="Record what this session was shown.")


class SearchHitSerializer(serializers.Serializer):
    memory = MemorySerializer()
    score = serializers.FloatField()
    explain = serializers.DictField(help_text="Every factor of the score: ranks, similarity, weights.")


class SearchOutSerializer(serializers.Serializer):
    query = serializers.CharField()
    results = SearchHitSerializer(many=True)
    entities = serializers.ListField(child=serializers.CharField(), help_text="The strict filter, resolved.")
    detected_entities = serializers.ListField(child=serializers.CharField())
    unknown_entities = serializers.ListField(child=serializers.CharField())
    intent_types = serializers.ListField(child=serializers.CharField())


class ContextInSerializer(StrictSerializer):
    session_id = _text(200, required=False)
    project = _text(200, required=False, help_text="A project slug or name.")
    q = _text(2000, required=False, allow_blank=True, help_text="The task at hand.")
    budget_tokens = serializers.IntegerField(min_value=50, max_value=20000, required=False)
    format = serializers.ChoiceField(choices=["markdown", "json"], required=False, default="markdown")
    fresh = serializers.BooleanField(
        required=False,
        default=False,
        help_text="The agent's history was just reset (compaction, clear, new process): send the whole context.",
    )


class ContextItemSerializer(serializers.Serializer):
    section = serializers.ChoiceField(choices=["critical", "anti_pattern", "relevant"])
    memory = MemorySerializer()


class ContextOutSerializer(serializers.Serializer):
    markdown = serializers.CharField()
    items = ContextItemSerializer(many=True)
    budget_tokens = serializers.IntegerField()
    used_tokens = serializers.IntegerField()


class FeedbackInSerializer(StrictSerializer):
    memory_id = serializers.UUIDField()
    signal = serializers.ChoiceField(choices=Signal.choices)
    note = _text(2000, required=False, allow_blank=True)
    session_id = _text(200, required=False)


class FeedbackEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = FeedbackEvent
        fields = ["id", "signal", "value", "source", "note", "created_at"]


class FeedbackOutSerializer(serializers.Serializer):
    event = FeedbackEventSerializer()
    memory = MemorySerializer()
    inverted = MemorySerializer(allow_null=True, help_text="The anti-pattern this feedback created, if any.")


class EntitySerializer(serializers.ModelSerializer):
    mentions = serializers.IntegerField(source="mention_count", read_only=True, default=0)
    merged_into = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = Entity
        fields = ["slug", "type", "name", "aliases", "description", "merged_into", "mentions", "created_at"]


PaginatedMemoryList = paginated(MemorySerializer, "PaginatedMemoryList")
PaginatedEntityList = paginated(EntitySerializer, "PaginatedEntityList")


class EntityFilterSerializer(StrictSerializer):
    ignored_fields = ("cursor", "page_size")

    q = _text(200, required=False, allow_blank=True)
    type = serializers.ChoiceField(choices=EntityType.choices, required=False)


class EntityResolveInSerializer(StrictSerializer):
    names = serializers.ListField(child=_text(200), min_length=1, max_length=ML["MAX_ENTITIES"])


class EntityResolveOutSerializer(serializers.Serializer):
    resolved = serializers.DictField(child=serializers.CharField(), help_text="name → slug")
    ambiguities = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    unknown = serializers.ListField(child=serializers.CharField())


class EntityMergeInSerializer(StrictSerializer):
    source = _text(200, help_text="The entity that goes away (slug).")
    target = _text(200, help_text="The entity that stays (slug).")


class ReflectionSerializer(MemorySerializer):
    sources = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "sources"]
        read_only_fields = fields


PaginatedReflectionList = paginated(ReflectionSerializer, "PaginatedReflectionList")


class ExportInSerializer(StrictSerializer):
    project = _text(200, required=False)


class SessionInSerializer(StrictSerializer):
    session_id = _text(
        200, help_text="The agent's own session id (idempotent: the same id gives the same session)."
    )
    agent = serializers.ChoiceField(choices=Agent.choices, required=False, default=Agent.OTHER)
    project = _text(200, required=False, help_text="A project slug or name.")
    metadata = serializers.DictField(required=False)


class MessageInSerializer(StrictSerializer):
    seq = serializers.IntegerField(min_value=0, max_value=2**31 - 1, help_text="Position in the transcript.")
    role = serializers.ChoiceField(choices=Role.choices)
    content = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=ML["MAX_MESSAGE_CHARS"]
    )
    created_at = serializers.DateTimeField(required=False)


class MessagesInSerializer(StrictSerializer):
    messages = MessageInSerializer(many=True, max_length=ML["MAX_MESSAGES_PER_REQUEST"])


class MessagesOutSerializer(serializers.Serializer):
    stored = serializers.IntegerField()
    already_stored = serializers.IntegerField(help_text="Messages whose seq was stored before: unchanged.")


class SessionEndInSerializer(StrictSerializer):
    success = serializers.BooleanField(required=False, allow_null=True, default=None)
    duration_ms = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
    error_count = serializers.IntegerField(min_value=0, required=False, default=0)
    retry_count = serializers.IntegerField(min_value=0, required=False, default=0)
    files_touched = serializers.ListField(child=_text(1000), required=False, max_length=500, default=list)
    summary = _text(8000, required=False, allow_blank=True, default="")
    evaluation = _text(8000, required=False, allow_blank=True, default="")
    strategy = _text(8000, required=False, allow_blank=True, default="")


class SessionSerializer(serializers.ModelSerializer):
    session_id = serializers.CharField(source="external_id")
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    messages = serializers.IntegerField(source="message_count", read_only=True, default=0)
    recalled = serializers.IntegerField(source="recall_count", read_only=True, default=0)
    implicit_label = serializers.CharField(
        read_only=True, help_text="helpful, neutral or harmful; empty until the session ends."
    )
    memories = serializers.SerializerMethodField(help_text="Ids of the memories stored from this session.")

    class Meta:
        model = Session
        fields = [
            "id",
            "session_id",
            "agent",
            "project",
            "started_at",
            "ended_at",
            "duration_ms",
            "error_count",
            "retry_count",
            "success",
            "files_touched",
            "implicit_score",
            "implicit_label",
            "extraction_status",
            "extraction_error",
            "extraction_attempts",
            "messages",
            "recalled",
            "memories",
            "created_at",
        ]
        read_only_fields = fields

    def get_memories(self, session: Session) -> list[str]:
        ids = getattr(session, "memory_ids", None)  # api.views.sessions.session_detail: those the caller sees
        if ids is None:
            ids = session.memories.values_list("pk", flat=True)
        return [str(pk) for pk in ids]


class FactChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(
        choices=FactChangeKind.choices,
        help_text="changed: the new memory superseded the old one at once; proposal: it would change "
        "settled knowledge and waits (pending review) while the old one stays served.",
    )
    old = MemorySerializer(help_text="The memory that was superseded (or, for a proposal, would be).")
    new = MemorySerializer(help_text="The memory that superseded it (or is proposed to).")
    reason = serializers.CharField(help_text='What changed, e.g. "version changed: 18 → 20".')
    changes = DecisionChangeSerializer(many=True)
    cosine = serializers.FloatField(allow_null=True)
    status = serializers.ChoiceField(choices=["open", "confirmed", "undone", "both_true"])
    resolved_by = serializers.CharField(source="resolved_by.username", default=None, allow_null=True)
    resolved_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


PaginatedFactChangeList = paginated(FactChangeSerializer, "PaginatedFactChangeList")


class FactChangeFilterSerializer(StrictSerializer):
    ignored_fields = ("cursor", "page_size")

    status = serializers.ChoiceField(
        choices=["open", "confirmed", "undone", "both_true"], required=False, default="open"
    )


class FactChangeActionInSerializer(StrictSerializer):
    action = serializers.ChoiceField(
        choices=["confirm", "undo", "both_true"],
        help_text="confirm keeps the new memory; undo restores the old one and rejects the new; "
        "both_true restores the old one beside the new.",
    )


class ReinforcementSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Pass it to /split to store this text as its own memory.")
    text = serializers.CharField(source="diff.text", default="")
    author = serializers.CharField(source="diff.author", default=None, allow_null=True)
    agent_name = serializers.CharField(source="diff.agent_name", default="")
    session = serializers.CharField(source="diff.session", default=None, allow_null=True)
    source = serializers.CharField(source="diff.source", default="")
    decision = serializers.DictField(source="diff.decision", default=None, allow_null=True)
    provenance = serializers.DictField(
        source="diff.provenance",
        default=None,
        allow_null=True,
        help_text="An import's file: origin, path, sha256.",
    )
    split_into = serializers.CharField(allow_null=True, default=None)
    created_at = serializers.DateTimeField()


class SplitInSerializer(StrictSerializer):
    reinforcement = serializers.IntegerField(min_value=1, help_text="The reinforcement's id.")


class HistoryVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField(source="number", help_text="From 1, oldest first.")
    text = serializers.CharField(
        allow_null=True, help_text="null: the text of a memory you may not see (withheld)."
    )
    memory = serializers.UUIDField(help_text="The memory that had this text: this one or one it replaced.")
    at = serializers.DateTimeField(help_text="When it got this text.")
    current = serializers.BooleanField(help_text="The memory's text now (the last version).")


class HistoryEntrySerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField(
        help_text="created, quarantined, edited, superseded, supersedes, reinforced, proposed, feedback, "
        "approved, rejected, reviewed, promoted, deprecated, maturity, reset, merged, split, "
        "restored, inverted, condensed."
    )
    actor = serializers.CharField(allow_null=True, help_text="Who did it; null for an agent or a job.")
    summary = serializers.CharField(help_text="What happened, in words.")
    memory = serializers.UUIDField(
        allow_null=True,
        help_text="The other memory it concerns: a successor, predecessor, proposal or merge partner.",
    )
    details = serializers.DictField(
        help_text="What matters for its kind: text, sender, agent_name, session (reinforced); old_text, "
        "new_text, fields (edited); text, status (proposed, supersedes); signal, source, value, note "
        "(feedback); version (restored); provenance (created, reinforced: an import's file); reason."
    )


class HistorySerializer(serializers.Serializer):
    memory = serializers.UUIDField(source="memory.pk")
    versions = HistoryVersionSerializer(many=True, help_text="Oldest first; restore one by its number.")
    events = HistoryEntrySerializer(many=True, help_text="The timeline, oldest first.")


class RestoreInSerializer(StrictSerializer):
    version = serializers.IntegerField(min_value=1, help_text="The version's number, from /history.")
