"""The data model of DESIGN.md §3.

Models hold fields, constraints, small properties and the QuerySet methods services build on;
every write that carries a rule lives in ``memory.services``.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import ExpressionWrapper, F, Q
from django.db.models.functions import Length
from django.db.models.lookups import GreaterThan, LessThanOrEqual
from django.utils import timezone
from pgvector.django import CosineDistance, HnswIndex, VectorField


def _choices_check(field: str, choices: type[models.TextChoices], model: str) -> models.CheckConstraint:
    return models.CheckConstraint(
        condition=Q(**{f"{field}__in": choices.values}), name=f"{model}_{field}_valid"
    )


class TeamRole(models.TextChoices):
    """DESIGN.md §11: owners manage members, tokens and settings; curators review and edit; members
    read, write and give feedback; readers read."""

    OWNER = "owner"
    CURATOR = "curator"
    MEMBER = "member"
    READER = "reader"


TEAM_SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class Team(models.Model):
    """A wall: every team-owned row carries its team, and nothing of one team is visible to, compared
    with, or changed by another (DESIGN.md §11)."""

    slug = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(condition=Q(slug__regex=TEAM_SLUG_PATTERN), name="team_slug_format")
        ]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=TeamRole.choices, default=TeamRole.MEMBER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["team__slug", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["user", "team"], name="membership_unique_user_team"),
            _choices_check("role", TeamRole, "membership"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    @property
    def scopes(self) -> frozenset[str]:
        """What the role allows; a token of this membership never has more."""
        return ROLE_SCOPES[self.role]

    @property
    def can_curate(self) -> bool:
        return Scope.CURATE in self.scopes

    @property
    def can_write(self) -> bool:
        return Scope.WRITE in self.scopes

    @property
    def is_owner(self) -> bool:
        return self.role == TeamRole.OWNER


class TeamQuerySet(models.QuerySet):
    def for_team(self, team):
        """The one way into a team-owned table: this team's rows and no other's."""
        return self.filter(team=team)


def team_key():
    """The team column of a team-owned table. Composite indexes that start with it serve the lookups
    by team, so most tables need no index of their own on it."""
    return models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+", db_index=False)


class Kind(models.TextChoices):
    OBSERVATION = "observation"
    REFLECTION = "reflection"


class MemoryType(models.TextChoices):
    CORRECTION = "correction"
    DECISION = "decision"
    COMMITMENT = "commitment"
    INSIGHT = "insight"
    LEARNING = "learning"
    CONFIDENCE = "confidence"
    PATTERN_SEED = "pattern_seed"
    CROSS_AGENT = "cross_agent"
    WORKFLOW_NOTE = "workflow_note"
    GAP = "gap"


class Category(models.TextChoices):
    CONVENTION = "convention"
    GOTCHA = "gotcha"
    DEBUGGING = "debugging"
    ARCHITECTURE = "architecture"
    WORKFLOW = "workflow"


class Priority(models.TextChoices):
    CRITICAL = "critical"
    MODERATE = "moderate"
    EPHEMERAL = "ephemeral"


class Maturity(models.TextChoices):
    CANDIDATE = "candidate"
    ESTABLISHED = "established"
    PROVEN = "proven"
    DEPRECATED = "deprecated"


class Status(models.TextChoices):
    ACTIVE = "active"
    PENDING_REVIEW = "pending_review"
    QUARANTINED = "quarantined"
    REJECTED = "rejected"
    ARCHIVED = "archived"


# A live memory's statuses (when not superseded): one text lives once per scope among them.
LIVE_CONTENT_STATUSES = [Status.ACTIVE, Status.PENDING_REVIEW, Status.QUARANTINED]


class Source(models.TextChoices):
    MANUAL = "manual"
    API = "api"
    HOOK = "hook"
    EXTRACTION = "extraction"
    REFLECTION = "reflection"
    IMPORT = "import"


class MemoryQuerySet(TeamQuerySet):
    def observations(self) -> MemoryQuerySet:
        return self.filter(kind=Kind.OBSERVATION)

    def reflections(self) -> MemoryQuerySet:
        return self.filter(kind=Kind.REFLECTION)

    def active(self) -> MemoryQuerySet:
        return self.filter(status=Status.ACTIVE)

    def current(self, at=None) -> MemoryQuerySet:
        """Not superseded and inside the validity window."""
        at = at or timezone.now()
        return self.filter(superseded_by__isnull=True, valid_from__lte=at).filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=at)
        )

    def servable(self, at=None) -> MemoryQuerySet:
        """What agents may be shown: active, current and not deprecated."""
        return self.active().current(at).exclude(maturity=Maturity.DEPRECATED)

    def for_project(self, entity) -> MemoryQuerySet:
        """A project's memories plus the team-wide ones (those about no project at all); with
        ``entity`` None, the team-wide ones only."""
        about_a_project = Memory.objects.filter(mentions__entity__type=EntityType.PROJECT).values("pk")
        scope = ~Q(pk__in=about_a_project)
        if entity is not None:
            scope |= Q(mentions__entity=entity)
        return self.filter(scope).distinct()

    def in_projects(self, slugs) -> MemoryQuerySet:
        """Memories about one of the projects ``slugs`` (a token's project allow-list): nothing
        team-wide, nothing of another project. Call on a team's queryset; slugs are per team."""
        about = EntityMention.objects.filter(
            resolved=True, entity__slug__in=list(slugs), entity__type=EntityType.PROJECT
        ).values("memory_id")
        return self.filter(pk__in=about)

    def mentioning(self, entity_ids) -> MemoryQuerySet:
        """Memories that mention any of the entities. A semi-join on the mentions' entity index, not a
        join: no DISTINCT over whole rows, and the vector ordering can still use its index."""
        mentions = EntityMention.objects.filter(entity_id__in=list(entity_ids)).values("memory_id")
        return self.filter(pk__in=mentions)

    def locked_in_key_order(self) -> MemoryQuerySet:
        """These rows locked in primary-key order: the order every writer of several memories takes
        their locks in (a session end's ratings, reflection, a search's retrieval count), so two of
        them never wait for each other in a cycle. The lock is FOR NO KEY UPDATE, what an update of
        their columns takes anyway: it does not wait for rows being inserted that point at these
        (a Recall, a FeedbackEvent hold FOR KEY SHARE until they commit, in their own order), where
        FOR UPDATE deadlocked with them under load. Inside a transaction."""
        return self.select_for_update(no_key=True).order_by("pk")

    def nearest(self, vector, k: int, *, exact: bool = False) -> MemoryQuerySet:
        """The k nearest by cosine distance. The HNSW index serves this ordering and filters what
        it found afterwards; with ``exact`` every filtered row is compared, for selective filters
        that would otherwise leave few of the index's neighbours."""
        annotated = self.exclude(embedding__isnull=True).annotate(
            distance=CosineDistance("embedding", vector)
        )
        if exact:
            # An expression the index cannot serve: the planner scans the filtered rows instead.
            return annotated.order_by(
                ExpressionWrapper(F("distance") + 0.0, output_field=models.FloatField())
            )[:k]
        return annotated.order_by("distance")[:k]


class Memory(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    team = team_key()
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OBSERVATION)
    content = models.TextField()
    content_hash = models.CharField(max_length=64)
    scope_key = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="The project, person, feature… entities the memory is about, as one string: the same text "
        "may live once per scope (DESIGN.md §4.3).",
    )
    memory_type = models.CharField(max_length=16, choices=MemoryType.choices, default=MemoryType.INSIGHT)
    category = models.CharField(max_length=16, choices=Category.choices, default=Category.WORKFLOW)
    priority = models.CharField(max_length=16, choices=Priority.choices, default=Priority.MODERATE)
    is_negative = models.BooleanField(default=False, help_text="An anti-pattern: what to avoid.")
    embedding = VectorField(dimensions=384, null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    confidence = models.PositiveSmallIntegerField(default=70)
    feedback_score = models.FloatField(default=1.0)
    helpful_count = models.PositiveIntegerField(default=0)
    harmful_count = models.PositiveIntegerField(default=0)
    irrelevant_count = models.PositiveIntegerField(default=0)
    retrieval_count = models.PositiveIntegerField(default=0)
    reinforcement_count = models.PositiveIntegerField(default=0)
    last_retrieved_at = models.DateTimeField(null=True, blank=True)
    last_validated_at = models.DateTimeField(default=timezone.now)
    decay_factor = models.FloatField(default=1.0, help_text="Materialized by the decay job, for sorting.")
    is_stale = models.BooleanField(default=False)
    maturity = models.CharField(max_length=16, choices=Maturity.choices, default=Maturity.CANDIDATE)
    maturity_pinned = models.BooleanField(
        default=False, help_text="Set by a curator's promote or deprecate; feedback no longer moves it."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    status_reason = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.API)
    source_chunk = models.TextField(blank=True)
    evidence_seq_start = models.PositiveIntegerField(
        null=True, blank=True, help_text="The first message of the session this memory was extracted from."
    )
    evidence_seq_end = models.PositiveIntegerField(null=True, blank=True, help_text="The last such message.")
    session = models.ForeignKey(
        "memory.Session", null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    agent_name = models.CharField(max_length=100, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_until = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    inverted_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="inversions"
    )
    condensed_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="condensed_observations"
    )
    sources = models.ManyToManyField("self", symmetrical=False, blank=True, related_name="reflections")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "memories"
        indexes = [
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="memory_search_vector_gin"),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            models.Index(fields=["status", "maturity"], name="memory_status_maturity"),
            models.Index(fields=["content_hash"], name="memory_content_hash"),
            models.Index(fields=["team", "created_at"], name="memory_team_created"),
        ]
        constraints = [
            _choices_check("kind", Kind, "memory"),
            _choices_check("memory_type", MemoryType, "memory"),
            _choices_check("category", Category, "memory"),
            _choices_check("priority", Priority, "memory"),
            _choices_check("maturity", Maturity, "memory"),
            _choices_check("status", Status, "memory"),
            _choices_check("source", Source, "memory"),
            models.CheckConstraint(condition=Q(confidence__lte=100), name="memory_confidence_range"),
            models.CheckConstraint(
                condition=Q(feedback_score__gte=0.05) & Q(feedback_score__lte=5.0),
                name="memory_feedback_score_range",
            ),
            models.CheckConstraint(
                condition=Q(decay_factor__gte=0.0) & Q(decay_factor__lte=1.0),
                name="memory_decay_factor_range",
            ),
            models.CheckConstraint(
                condition=Q(GreaterThan(Length("content"), 0), LessThanOrEqual(Length("content"), 8000)),
                name="memory_content_length",
            ),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=models.F("valid_from")),
                name="memory_validity_window",
            ),
            # Two live memories of one scope never share content: concurrent stores of the same text meet here.
            models.UniqueConstraint(
                fields=["team", "kind", "content_hash", "scope_key"],
                condition=Q(superseded_by__isnull=True, status__in=LIVE_CONTENT_STATUSES),
                name="memory_unique_live_content",
            ),
        ]

    def __str__(self) -> str:
        return self.content[:80]

    @property
    def is_reflection(self) -> bool:
        return self.kind == Kind.REFLECTION


class ObservationManager(models.Manager.from_queryset(MemoryQuerySet)):
    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().filter(kind=Kind.OBSERVATION)


class ReflectionManager(models.Manager.from_queryset(MemoryQuerySet)):
    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().filter(kind=Kind.REFLECTION)


class Observation(Memory):
    objects = ObservationManager()

    class Meta:
        proxy = True

    def save(self, *args, **kwargs) -> None:
        self.kind = Kind.OBSERVATION
        super().save(*args, **kwargs)


class Reflection(Memory):
    objects = ReflectionManager()

    class Meta:
        proxy = True

    def save(self, *args, **kwargs) -> None:
        self.kind = Kind.REFLECTION
        super().save(*args, **kwargs)


class TokenVectors(models.Model):
    """A memory's token vectors for search's late-interaction stage (memory/services/search/late.py),
    8-bit, with a hash of the text and format they were computed from: a row whose hash is not the
    memory's current one is stale and computed again. Derived data: never exported or restored."""

    memory = models.OneToOneField(Memory, primary_key=True, on_delete=models.CASCADE, related_name="+")
    team = team_key()
    source_hash = models.CharField(max_length=64)
    vectors = models.BinaryField()

    objects = TeamQuerySet.as_manager()

    def __str__(self) -> str:
        return f"token vectors of {self.memory_id}"


class EntityType(models.TextChoices):
    PERSON = "person"
    PROJECT = "project"
    BUSINESS = "business"
    FEATURE = "feature"
    AGENT = "agent"
    OTHER = "other"


ENTITY_SLUG_PATTERN = r"^(person|project|business|feature|agent|other):[a-z0-9]+(-[a-z0-9]+)*$"


class EntityQuerySet(TeamQuerySet):
    def canonical(self) -> EntityQuerySet:
        return self.filter(merged_into__isnull=True)


class Entity(models.Model):
    team = team_key()
    slug = models.CharField(max_length=200)
    type = models.CharField(max_length=16, choices=EntityType.choices)
    name = models.CharField(max_length=200)
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_entities"
    )
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = EntityQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]
        verbose_name_plural = "entities"
        # The team's newest entity (entities.newest_entity_id, read by every search) from the index alone.
        indexes = [models.Index(fields=["team", "id"], name="entity_team_id")]
        constraints = [
            models.UniqueConstraint(fields=["team", "slug"], name="entity_unique_team_slug"),
            _choices_check("type", EntityType, "entity"),
            models.CheckConstraint(condition=Q(slug__regex=ENTITY_SLUG_PATTERN), name="entity_slug_format"),
            models.CheckConstraint(
                condition=Q(slug__startswith=models.F("type")), name="entity_slug_matches_type"
            ),
            models.CheckConstraint(
                condition=~Q(merged_into=models.F("id")), name="entity_not_merged_into_itself"
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class EntityMention(models.Model):
    team = team_key()
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="mentions")
    # Indexed with the memory (Meta.indexes), not alone.
    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="mentions", db_index=False
    )
    raw = models.CharField(max_length=200)
    resolved = models.BooleanField(default=False)
    candidates = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "entity"], condition=Q(entity__isnull=False), name="mention_unique_entity"
            ),
            models.CheckConstraint(
                condition=Q(resolved=False) | Q(entity__isnull=False), name="mention_resolved_has_entity"
            ),
        ]
        # An entity's memories read from the index alone: a search filtered to an entity hashes them
        # without visiting the mentions' rows (search._word_index_plans).
        indexes = [
            models.Index(fields=["entity", "memory"], name="mention_entity_memory"),
            models.Index(fields=["team", "resolved"], name="mention_team_resolved"),
        ]

    def __str__(self) -> str:
        return f"{self.raw} → {self.entity_id or '?'}"


class Agent(models.TextChoices):
    CLAUDE_CODE = "claude-code"
    OPENCODE = "opencode"
    CURSOR = "cursor"
    OTHER = "other"


class ImplicitLabel(models.TextChoices):
    HELPFUL = "helpful"
    NEUTRAL = "neutral"
    HARMFUL = "harmful"


class ExtractionStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Session(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    team = team_key()
    external_id = models.CharField(max_length=200)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_sessions"
    )
    agent = models.CharField(max_length=32, choices=Agent.choices, default=Agent.OTHER)
    project = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveBigIntegerField(null=True, blank=True)
    error_count = models.PositiveIntegerField(default=0)
    retry_count = models.PositiveIntegerField(default=0)
    success = models.BooleanField(null=True, blank=True)
    files_touched = ArrayField(models.TextField(), default=list, blank=True)
    summary = models.TextField(blank=True)
    evaluation = models.TextField(blank=True)
    strategy = models.TextField(blank=True)
    implicit_score = models.FloatField(null=True, blank=True)
    implicit_label = models.CharField(max_length=16, choices=ImplicitLabel.choices, blank=True)
    extraction_status = models.CharField(
        max_length=16, choices=ExtractionStatus.choices, default=ExtractionStatus.PENDING
    )
    extraction_error = models.TextField(blank=True)
    extraction_attempts = models.PositiveSmallIntegerField(default=0)
    extraction_claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a worker last claimed the extraction (its lease starts)."
    )
    extraction_claimed_by = models.CharField(max_length=300, blank=True, help_text="host:pid of the claimer.")
    extraction_lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Running: the claim holds until then unless its worker renews it (a lapsed lease is taken "
        "over by any worker); pending: when its queued task is due (the sweep queues it again after that).",
    )
    extraction_report = models.JSONField(default=dict, blank=True)
    extracted_through_seq = models.IntegerField(
        null=True,
        blank=True,
        help_text="The last message an extraction covered; a resumed session extracts what follows.",
    )
    ended_through_seq = models.IntegerField(
        null=True,
        blank=True,
        help_text="The last message when the session last ended: a later end with more is a resume.",
    )
    context_reset_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the agent's history was last reset (a compaction, a clear, a new process): what "
        "the session was shown before no longer counts as shown.",
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["team", "started_at"], name="session_team_started")]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "user", "external_id"], name="session_unique_external_id"
            ),
            _choices_check("agent", Agent, "session"),
            _choices_check("extraction_status", ExtractionStatus, "session"),
            models.CheckConstraint(
                condition=Q(implicit_label="") | Q(implicit_label__in=ImplicitLabel.values),
                name="session_implicit_label_valid",
            ),
            models.CheckConstraint(
                condition=Q(implicit_score__isnull=True)
                | (Q(implicit_score__gte=0) & Q(implicit_score__lte=1)),
                name="session_implicit_score_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.agent} session {self.external_id}"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class SessionMessage(models.Model):
    team = team_key()
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["session", "seq"]
        indexes = [models.Index(fields=["team"], name="message_team")]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="message_unique_seq"),
            _choices_check("role", Role, "message"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.role}"


class Recall(models.Model):
    team = team_key()
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="recalls")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="recalls")
    rank = models.PositiveSmallIntegerField()
    score = models.FloatField()
    surfaced_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["session", "rank"]
        indexes = [models.Index(fields=["team"], name="recall_team")]
        constraints = [models.UniqueConstraint(fields=["session", "memory"], name="recall_unique_memory")]

    def __str__(self) -> str:
        return f"#{self.rank} {self.memory_id} in {self.session_id}"


class Signal(models.TextChoices):
    HELPFUL = "helpful"
    HARMFUL = "harmful"
    IRRELEVANT = "irrelevant"


class FeedbackSource(models.TextChoices):
    EXPLICIT = "explicit"
    IMPLICIT = "implicit"


class FeedbackEvent(models.Model):
    team = team_key()
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="feedback_events")
    signal = models.CharField(max_length=16, choices=Signal.choices)
    value = models.FloatField(default=1.0)
    source = models.CharField(max_length=16, choices=FeedbackSource.choices, default=FeedbackSource.EXPLICIT)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="feedback"
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["memory", "created_at"], name="feedback_memory_created"),
            models.Index(fields=["team", "created_at"], name="feedback_team_created"),
        ]
        constraints = [
            _choices_check("signal", Signal, "feedback"),
            _choices_check("source", FeedbackSource, "feedback"),
            models.CheckConstraint(condition=Q(value__gte=0) & Q(value__lte=1), name="feedback_value_range"),
        ]

    def __str__(self) -> str:
        return f"{self.signal} ({self.source}) on {self.memory_id}"


class Action(models.TextChoices):
    CREATED = "created"
    UPDATED = "updated"
    SUPERSEDED = "superseded"
    REINFORCED = "reinforced"
    MERGED = "merged"
    PROMOTED = "promoted"
    DEPRECATED = "deprecated"
    RESET = "reset"
    INVERTED = "inverted"
    QUARANTINED = "quarantined"
    APPROVED = "approved"
    REJECTED = "rejected"
    DELETED = "deleted"
    FEEDBACK = "feedback"
    MATURITY = "maturity"
    CONDENSED = "condensed"
    EXPORTED = "exported"
    SPLIT = "split"
    REVIEWED = "reviewed"
    PROPOSED = "proposed"
    RESTORED = "restored"


class MemoryEvent(models.Model):
    """Append-only audit log: who did what to which memory."""

    team = team_key()
    memory = models.ForeignKey(Memory, null=True, on_delete=models.SET_NULL, related_name="events")
    memory_ref = models.UUIDField(help_text="The memory's id, kept after the memory is deleted.")
    action = models.CharField(max_length=16, choices=Action.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    diff = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["team", "created_at"], name="memory_event_team_created")]
        constraints = [_choices_check("action", Action, "memory_event")]

    def __str__(self) -> str:
        return f"{self.action} {self.memory_ref}"


class FactChangeStatus(models.TextChoices):
    OPEN = "open"
    CONFIRMED = "confirmed"
    UNDONE = "undone"
    BOTH_TRUE = "both_true"


class FactChangeKind(models.TextChoices):
    """A *changed* fact took effect at once (its old memory was a candidate) and waits for a
    curator's look; a *proposal* would change settled knowledge and takes effect only when a curator
    confirms it or enough distinct people propose it (DESIGN.md §4.3)."""

    CHANGED = "changed"
    PROPOSAL = "proposal"


class FactChange(models.Model):
    """A changed fact (DESIGN.md §4.3): a new memory superseded a close one whose content-bearing
    tokens differ ("Node 18" → "Node 20"), or — a *proposal* — would supersede a settled one and
    waits, pending review, while the old one stays served. A curator confirms it, undoes it or keeps
    both; a proposal also takes effect when ``PROPOSAL_CONFIRMATIONS`` distinct people propose it."""

    team = team_key()
    kind = models.CharField(max_length=16, choices=FactChangeKind.choices, default=FactChangeKind.CHANGED)
    old = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="changed_into")
    new = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="changed_from")
    reason = models.CharField(max_length=1000)
    changes = models.JSONField(default=list, blank=True)
    cosine = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=FactChangeStatus.choices, default=FactChangeStatus.OPEN)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            _choices_check("status", FactChangeStatus, "factchange"),
            _choices_check("kind", FactChangeKind, "factchange"),
            models.UniqueConstraint(fields=["old", "new"], name="factchange_unique_pair"),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"], name="factchange_status_created"),
            models.Index(fields=["team", "status"], name="factchange_team_status"),
        ]

    def __str__(self) -> str:
        return f"{self.old_id} → {self.new_id} ({self.status})"

    @property
    def is_proposal(self) -> bool:
        return self.kind == FactChangeKind.PROPOSAL


class Scope(models.TextChoices):
    READ = "read"
    WRITE = "write"
    CURATE = "curate"


ROLE_SCOPES: dict[str, frozenset[str]] = {
    TeamRole.OWNER: frozenset({Scope.READ, Scope.WRITE, Scope.CURATE}),
    TeamRole.CURATOR: frozenset({Scope.READ, Scope.WRITE, Scope.CURATE}),
    TeamRole.MEMBER: frozenset({Scope.READ, Scope.WRITE}),
    TeamRole.READER: frozenset({Scope.READ}),
}


class ApiToken(models.Model):
    """A bearer token of one membership: its team is the membership's, its scopes never exceed the
    role, and ``projects``, when set, is the only part of the team it sees and writes. Only its
    SHA-256 is stored; the token itself is shown once, at creation."""

    # Removing a member deletes their tokens of that team with the membership: refused at once.
    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="tokens")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=16), default=list)
    projects = ArrayField(
        models.CharField(max_length=200),
        default=list,
        blank=True,
        help_text="Project entity slugs this token is limited to; empty: the whole team.",
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(scopes__contained_by=Scope.values), name="apitoken_scopes_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @property
    def team(self) -> Team:
        return self.membership.team

    @property
    def effective_scopes(self) -> frozenset[str]:
        """The token's scopes within what its member's role allows today: a demotion narrows every
        token of that membership at once."""
        return frozenset(self.scopes) & self.membership.scopes

    def has_scope(self, scope: str) -> bool:
        return scope in self.effective_scopes

    def is_usable(self, at: datetime | None = None) -> bool:
        """Whether the token lets its user in: not revoked, not expired (at ``at``, default now),
        and the user's account active."""
        at = at or timezone.now()
        return (
            self.revoked_at is None
            and self.user.is_active
            and (self.expires_at is None or self.expires_at > at)
        )


class TaskName(models.TextChoices):
    """Periodic jobs with runs to follow. Extraction is tracked on each session instead."""

    REFLECT = "reflect"
    DECAY = "decay"


class TaskRunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class TaskRunQuerySet(models.QuerySet):
    def latest_per_task(self) -> dict[str, TaskRun]:
        return {run.task: run for run in self.order_by("task", "-queued_at").distinct("task")}


class TaskRun(models.Model):
    """One run of a background job: what the dashboard shows as progress and health reports on. A
    run triggered from a team's dashboard carries the team; the scheduled run over every team (one
    team after another, never comparing two) carries none."""

    team = models.ForeignKey(Team, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    task = models.CharField(max_length=16, choices=TaskName.choices)
    status = models.CharField(max_length=16, choices=TaskRunStatus.choices, default=TaskRunStatus.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    triggered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    queued_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = TaskRunQuerySet.as_manager()

    class Meta:
        ordering = ["-queued_at"]
        constraints = [
            _choices_check("task", TaskName, "taskrun"),
            _choices_check("status", TaskRunStatus, "taskrun"),
        ]

    def __str__(self) -> str:
        return f"{self.task} {self.status} ({self.queued_at:%Y-%m-%d %H:%M})"

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == TaskRunStatus.DONE else 0
        return min(100, round(100 * self.progress_done / self.progress_total))


class DeniedAccess(models.Model):
    """An attempt to reach a row that is not the caller's: another team's id (or one that does not
    exist, which answers the same). Written for the caller's team, so its owners see who probed."""

    team = team_key()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    token_prefix = models.CharField(max_length=16, blank=True)
    surface = models.CharField(max_length=16, help_text="api, mcp, dashboard, command")
    kind = models.CharField(max_length=32, help_text="memory, session, entity, changed fact, …")
    reference = models.CharField(max_length=300)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TeamQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["team", "created_at"], name="denied_team_created")]

    def __str__(self) -> str:
        return f"{self.surface} {self.kind} {self.reference}"
