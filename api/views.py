"""The agent API (DESIGN.md §5). Each view: input serializer → service → output serializer."""

from __future__ import annotations

import json

from django.contrib.auth import get_user
from django.db import InterfaceError, OperationalError
from django.db.models import Count, Prefetch, Q
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view, authentication_classes, permission_classes, throttle_classes
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.access import (
    Caller,
    caller_of,
    check_projects,
    hidden,
    limited_write,
    memory_of,
    session_for,
    session_of,
    session_project,
    session_visible,
    team_memories,
    visible_entities,
    visible_memories,
)
from memory.conf import setting
from memory.models import EntityMention, FactChange, Kind, Memory, Scope, Session
from memory.services import curation, factchanges, history
from memory.services import entities as entity_service
from memory.services.context import context_build
from memory.services.errors import InvalidInput, NotFound
from memory.services.export import export_memory_md
from memory.services.feedback import feedback_record
from memory.services.health import health_report, public_report
from memory.services.search import memories_as_shown, memory_search
from memory.services.sessions import messages_append, session_end, session_start
from memory.services.store import memory_store, memory_store_batch

R, W, C = Scope.READ, Scope.WRITE, Scope.CURATE
ERRORS = {
    400: OpenApiResponse(s.ErrorSerializer, description="Invalid input: `fields` lists each problem."),
    401: OpenApiResponse(s.ErrorSerializer, description="No token, or a revoked, expired or unknown one."),
    403: OpenApiResponse(s.ErrorSerializer, description="The token lacks the scope this needs."),
    413: OpenApiResponse(s.ErrorSerializer, description="The body is over the size limit."),
    429: OpenApiResponse(s.ErrorSerializer, description="Too many requests for this token."),
}
AMBIGUOUS = OpenApiResponse(
    s.ErrorSerializer,
    description="CLARIFICATION_REQUIRED: a name matched several entities; pass a full slug.",
    examples=[
        OpenApiExample(
            "Ambiguous name",
            value={
                "error": {
                    "code": "CLARIFICATION_REQUIRED",
                    "message": "Ambiguous entity reference 'Mark'.",
                    "ambiguities": {"Mark": ["person:mark-robinson", "person:mark-smith"]},
                    "hint": "Pass the full slug, e.g. person:mark-robinson.",
                }
            },
        )
    ],
)
PAGE_PARAMETERS = [
    OpenApiParameter("cursor", str, description="From a previous page's next or previous link."),
    OpenApiParameter("page_size", int, description="Results per page; capped at the server's maximum."),
]
NOT_FOUND = OpenApiResponse(
    s.ErrorSerializer,
    description="No such memory (or not visible to you: another team's ids answer exactly like missing ones).",
)


def errors(*codes: int, **extra) -> dict:
    return {**{code: ERRORS[code] for code in codes}, **extra}


def resolved_mentions() -> Prefetch:
    """The resolved entity mentions of memories, as ``prefetched_mentions`` (MemorySerializer's entities)."""
    return Prefetch(
        "mentions",
        queryset=EntityMention.objects.filter(resolved=True).select_related("entity"),
        to_attr="prefetched_mentions",
    )


def with_entity_slugs(memories: list[Memory]) -> list[Memory]:
    """Give each memory its ``entity_slugs`` (MemorySerializer's entities) from one query of two
    columns: for a search's results, prefetching the mention and entity rows cost more than the
    rest of their serialization."""
    slugs = entity_service.entity_slugs_of([memory.pk for memory in memories])
    for memory in memories:
        memory.entity_slugs = slugs[memory.pk]
    return memories


def memories_with_entities(queryset):
    return queryset.select_related("author", "session").prefetch_related(resolved_mentions())


def caller(request: Request) -> Caller:
    """The request's caller (api.access), resolved once; permissions let only signed-in callers in."""
    return caller_of(request)


class MarkdownRenderer(BaseRenderer):
    media_type = "text/markdown"
    format = "md"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, str):
            return data.encode(self.charset)
        return json.dumps(data).encode(self.charset)  # errors keep their JSON shape


class MemoryCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size_query_param = "page_size"

    def __init__(self) -> None:
        self.page_size = setting("API_PAGE_SIZE")
        self.max_page_size = setting("API_MAX_PAGE_SIZE")

    def decode_cursor(self, request):
        try:
            return super().decode_cursor(request)
        except exceptions.NotFound:
            raise exceptions.ValidationError(
                {"cursor": ["This cursor is not valid; use next or previous."]}
            ) from None


class EntityCursorPagination(MemoryCursorPagination):
    ordering = ("slug",)


# --- health ------------------------------------------------------------------------------------

HealthSerializer = inline_serializer(
    "Health",
    fields={
        "status": serializers.ChoiceField(
            choices=["ok", "degraded", "error"],
            help_text='"degraded": the server answers, but a part of `make run` is restarting or was given up on.',
        ),
        "database": serializers.CharField(),
        "broker": serializers.CharField(),
        "embedder": serializers.CharField(),
        "version": serializers.CharField(),
        "tasks": inline_serializer(
            "TaskHealth",
            fields={
                "status": serializers.CharField(help_text='"ok" or "degraded" (see problems).'),
                "problems": serializers.ListField(child=serializers.CharField()),
                "extraction": serializers.DictField(
                    child=serializers.IntegerField(),
                    required=False,
                    help_text="Ended sessions by extraction status, and oldest_waiting_seconds.",
                ),
                "jobs": serializers.DictField(
                    required=False, help_text="The last reflect and decay runs: status, finished_at, late."
                ),
            },
        ),
        "supervisor": serializers.DictField(
            required=False,
            help_text="Under `make run`: status (ok, restarting, degraded, stopping) and restarts per part.",
        ),
    },
)


@extend_schema(
    auth=[], responses={200: HealthSerializer, 503: HealthSerializer}, tags=["health"], operation_id="health"
)
@api_view(["GET"])
@authentication_classes([])
@permission_classes([AllowAny])
@throttle_classes([])
def health(request: Request) -> Response:
    """Whether the database, the broker and the embedder are usable. No authentication: anonymous
    callers get states only; staff signed in to the dashboard get the details."""
    report = health_report()
    try:
        user = get_user(request._request)  # a dashboard session; no token is read here
    except (OperationalError, InterfaceError):  # the database is down: the report says so
        user = None
    shown = report if getattr(user, "is_staff", False) else public_report(report)
    if report["status"] == "error":
        retry = str(setting("DATABASE_RETRY_AFTER_SECONDS"))
        return Response(shown, status=503, headers={"Retry-After": retry})
    return Response(shown, status=200)


# --- observations ------------------------------------------------------------------------------


class ObservationListView(APIView):
    required_scopes = {"GET": R, "POST": W}

    @extend_schema(
        tags=["memories"],
        parameters=[
            s.ObservationFilterSerializer,
            *PAGE_PARAMETERS,
        ],
        responses={200: s.PaginatedMemoryList, **errors(400, 401, 403, 429)},
        summary="List memories",
        operation_id="observations_list",
        description="Newest first, with cursor pagination. Non-curators see active memories only.",
    )
    def get(self, request: Request) -> Response:
        filters = s.ObservationFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        who = caller(request)
        queryset = visible_memories(who)
        for param, field in (
            ("type", "memory_type"),
            ("category", "category"),
            ("priority", "priority"),
            ("maturity", "maturity"),
            ("status", "status"),
            ("kind", "kind"),
        ):
            if param in data:
                queryset = queryset.filter(**{field: data[param]})
        if "entity" in data:
            resolution = entity_service.resolve_references(
                [data["entity"]], team=who.team, create=False
            ).raise_if_ambiguous()
            if not resolution.entities:
                queryset = queryset.none()
            else:
                queryset = queryset.mentioning(entity.pk for entity in resolution.entities)
        paginator = MemoryCursorPagination()
        page = paginator.paginate_queryset(memories_with_entities(queryset), request, view=self)
        return paginator.get_paginated_response(s.MemorySerializer(page, many=True).data)

    @extend_schema(
        tags=["memories"],
        request=s.ObservationInSerializer,
        responses={
            201: OpenApiResponse(
                s.StoreResultSerializer, description="ADD or UPDATE (supersedes a near-duplicate)."
            ),
            200: OpenApiResponse(
                s.StoreResultSerializer, description="NOOP: the same memory exists; reinforced."
            ),
            409: AMBIGUOUS,
            **errors(400, 401, 403, 413, 429),
        },
        summary="Store a memory",
        operation_id="observations_create",
        examples=[
            OpenApiExample(
                "A correction",
                request_only=True,
                value={
                    "content": "Never call stripe.Charge.create directly; use payments/gateway.py.",
                    "type": "correction",
                    "category": "gotcha",
                    "priority": "critical",
                    "entities": ["project:billing-api", "feature:payments"],
                    "tags": ["stripe"],
                },
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = s.ObservationInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        who = caller(request)
        data = serializer.validated_data
        result = store_one(who, data, session=session_for(who, data.get("session_id")))
        code = status.HTTP_200_OK if result.operation == "NOOP" else status.HTTP_201_CREATED
        return Response(store_result(result), status=code)


def store_one(who: Caller, data: dict, *, session: Session | None, agent_name: str | None = None):
    """Store one memory as ``who`` (POST /observations and the MCP store tool). A project-limited
    token's store is undone and refused unless it is about its projects only."""
    fields = store_fields(data)
    if agent_name is not None:
        fields["agent_name"] = agent_name
    with limited_write(who):
        result = memory_store(
            team=who.team, author=who.user, session=session, curator=who.can_curate, **fields
        )
        check_projects(who, [result.memory.pk], ["entities"])
    return result


def store_fields(data: dict) -> dict:
    return {
        "content": data["content"],
        "memory_type": data.get("type"),
        "category": data.get("category"),
        "priority": data.get("priority"),
        "entities": data.get("entities") or [],
        "tags": data.get("tags") or [],
        "confidence": data.get("confidence"),
        "source_chunk": data.get("source_chunk", ""),
        "valid_from": data.get("valid_from"),
        "agent_name": data.get("agent_name", ""),
        "source": data.get("source") or "api",
        "provenance": data.get("provenance"),
    }


def store_result(result) -> dict:
    return store_results([result])[0]


def store_results(results: list) -> list[dict]:
    """The bodies of stores (POST /observations and its batch, the MCP remember tool): each memory as
    stored, read again with its author, session and entities in two statements for the whole list
    (through the ORM, two queries per memory cost a tenth of a store's Python time;
    bench/HISTORY.md, stop 29)."""
    stored = memories_as_shown([result.memory.pk for result in results])
    memories = with_entity_slugs([stored[result.memory.pk] for result in results])
    serialized = s.MemorySerializer(memories, many=True).data
    return [
        {
            "operation": result.operation,
            "memory": memory,
            "superseded": str(result.superseded.pk) if result.superseded else None,
            "proposal_for": str(result.proposal_for.pk) if result.proposal_for else None,
            "decision": result.decision.as_dict() if result.decision else None,
        }
        for result, memory in zip(results, serialized, strict=True)
    ]


def search_result(outcome, who: Caller) -> dict:
    """The body of GET /search (and of the MCP find tool)."""
    # The search loaded the results' rows already (without vectors); one serializer (its fields built
    # once) serializes them all.
    memories = with_entity_slugs([hit.memory for hit in outcome.results])
    serialized = s.MemorySerializer(memories, many=True).data
    entities, detected, unknown = outcome.entities, outcome.detected_entities, outcome.unknown_entities
    if who.projects:
        # A project-limited token is not told which of the team's other entities exist: one it named
        # is unknown to it, one its words named is not reported.
        seen = set(
            visible_entities(who)
            .filter(pk__in=[e.pk for e in [*entities, *detected]])
            .values_list("pk", flat=True)
        )
        unknown = [*unknown, *(e.slug for e in entities if e.pk not in seen)]
        entities = [e for e in entities if e.pk in seen]
        detected = [e for e in detected if e.pk in seen]
    return {
        "query": outcome.query,
        "results": [
            {"memory": memory, "score": hit.score, "explain": hit.explain}
            for memory, hit in zip(serialized, outcome.results, strict=True)
        ],
        "entities": [e.slug for e in entities],
        "detected_entities": [e.slug for e in detected],
        "unknown_entities": unknown,
        "intent_types": outcome.intent_types,
    }


def context_result(result) -> dict:
    """The body of GET /context?format=json (and of the MCP context tool)."""
    memories = with_entity_slugs([item.memory for item in result.items])
    serialized = s.MemorySerializer(memories, many=True).data
    return {
        "markdown": result.markdown,
        "items": [
            {"section": item.section, "memory": memory}
            for item, memory in zip(result.items, serialized, strict=True)
        ],
        "budget_tokens": result.budget_tokens,
        "used_tokens": result.used_tokens,
    }


def feedback_result(result, memory: Memory) -> dict:
    """The body of POST /feedback (and of the MCP feedback tool)."""
    memory = memories_with_entities(Memory.objects.for_team(memory.team_id).filter(pk=memory.pk)).get()
    return {
        "event": s.FeedbackEventSerializer(result.event).data,
        "memory": s.MemorySerializer(memory).data,
        "inverted": s.MemorySerializer(result.inverted).data if result.inverted else None,
    }


class ObservationBatchView(APIView):
    required_scopes = {"POST": W}

    @extend_schema(
        tags=["memories"],
        request=s.BatchInSerializer,
        responses={
            201: s.BatchResultSerializer,
            200: s.BatchResultSerializer,
            409: AMBIGUOUS,
            **errors(400, 401, 403, 413, 429),
        },
        summary="Store up to 100 memories",
        operation_id="observations_batch_create",
        description="All or nothing: one invalid or ambiguous item stores none. One result per item, in order.",
    )
    def post(self, request: Request) -> Response:
        serializer = s.BatchInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        items = serializer.validated_data["items"]
        sessions = {item.get("session_id") for item in items} - {None}
        if len(sessions) > 1:
            raise InvalidInput({"items": ["A batch belongs to one session at most."]})
        who = caller(request)
        session = session_for(who, next(iter(sessions), None))
        with limited_write(who):
            results = memory_store_batch(
                [store_fields(item) for item in items],
                team=who.team,
                author=who.user,
                session=session,
                curator=who.can_curate,
            )
            check_projects(
                who,
                [result.memory.pk for result in results],
                [f"items[{index}].entities" for index in range(len(results))],
            )
        added = any(result.operation != "NOOP" for result in results)
        return Response(
            {"results": store_results(results)},
            status=status.HTTP_201_CREATED if added else status.HTTP_200_OK,
        )


class ObservationDetailView(APIView):
    required_scopes = {"GET": R, "PATCH": C, "DELETE": C}

    def get_memory(self, request: Request, memory_id) -> Memory:
        who = caller(request)
        return memory_of(who, memories_with_entities(visible_memories(who)), memory_id)

    @extend_schema(
        tags=["memories"],
        responses={200: s.MemorySerializer, 404: NOT_FOUND, **errors(401, 403, 429)},
        summary="Get a memory",
        operation_id="observations_retrieve",
    )
    def get(self, request: Request, memory_id) -> Response:
        return Response(s.MemorySerializer(self.get_memory(request, memory_id)).data)

    @extend_schema(
        tags=["memories"],
        request=s.MemoryPatchSerializer,
        responses={
            200: s.MemorySerializer,
            404: NOT_FOUND,
            409: AMBIGUOUS,
            **errors(400, 401, 403, 413, 429),
        },
        summary="Edit, approve, reject, promote or deprecate a memory (curators)",
        operation_id="observations_partial_update",
    )
    def patch(self, request: Request, memory_id) -> Response:
        memory = self.get_memory(request, memory_id)
        serializer = s.MemoryPatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if "type" in data:
            data["memory_type"] = data.pop("type")
        who = caller(request)
        with limited_write(who):
            memory = curation.memory_curate(memory=memory, actor=request.user, **data)
            check_projects(who, [memory.pk], ["entities"])
        return Response(s.MemorySerializer(self.get_memory(request, memory.pk)).data)

    @extend_schema(
        tags=["memories"],
        responses={204: None, 404: NOT_FOUND, **errors(401, 403, 429)},
        summary="Delete a memory (curators)",
        operation_id="observations_destroy",
    )
    def delete(self, request: Request, memory_id) -> Response:
        curation.memory_delete(memory=self.get_memory(request, memory_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- search, context, feedback -----------------------------------------------------------------


class SearchView(APIView):
    required_scopes = {"GET": R, "POST": R}

    def run(self, request: Request, data) -> Response:
        serializer = s.SearchInSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        params = serializer.validated_data
        who = caller(request)
        outcome = memory_search(
            team=who.team,
            allowed_projects=who.allowed_projects,
            query=params["q"],
            entities=params.get("entities"),
            memory_type=params.get("type"),
            category=params.get("category"),
            priority=params.get("priority"),
            limit=params.get("limit"),
            session=session_for(who, params.get("session_id")),
        )
        return Response(search_result(outcome, who))

    @extend_schema(
        tags=["search"],
        parameters=[
            OpenApiParameter("q", str, required=True, description="The question, in natural language."),
            OpenApiParameter("entities", str, description="Comma-separated slugs or names (strict filter)."),
            OpenApiParameter("type", str, enum=[c for c, _ in s.MemoryType.choices]),
            OpenApiParameter("category", str, enum=[c for c, _ in s.Category.choices]),
            OpenApiParameter("priority", str, enum=[c for c, _ in s.Priority.choices]),
            OpenApiParameter("limit", int, description="1–50, default 10."),
            OpenApiParameter("session_id", str, description="Record what this session was shown."),
        ],
        responses={200: s.SearchOutSerializer, 409: AMBIGUOUS, **errors(400, 401, 403, 429)},
        summary="Search memories",
        operation_id="search",
    )
    def get(self, request: Request) -> Response:
        data = request.query_params.dict()
        if "entities" in data:
            data["entities"] = [part.strip() for part in data["entities"].split(",") if part.strip()]
        return self.run(request, data)

    @extend_schema(
        tags=["search"],
        request=s.SearchInSerializer,
        responses={200: s.SearchOutSerializer, 409: AMBIGUOUS, **errors(400, 401, 403, 413, 429)},
        summary="Search memories (JSON body)",
        operation_id="search_post",
        examples=[
            OpenApiExample(
                "A mistake question",
                request_only=True,
                value={
                    "q": "what mistake did we make with the stripe webhooks?",
                    "limit": 5,
                    "entities": ["project:billing-api"],
                },
            )
        ],
    )
    def post(self, request: Request) -> Response:
        return self.run(request, request.data)


class MarkdownResponseMixin:
    """A view that answers markdown text on success and keeps the JSON error shape otherwise."""

    def markdown_response(self, text: str, filename: str | None = None) -> HttpResponse:
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
        if filename:
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        if isinstance(response, Response):  # JSON answers and errors, whatever Accept said
            request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class ContextView(MarkdownResponseMixin, APIView):
    required_scopes = {"GET": R}
    renderer_classes = [JSONRenderer, MarkdownRenderer]

    @extend_schema(
        tags=["context"],
        parameters=[s.ContextInSerializer],
        responses={
            (200, "application/json"): s.ContextOutSerializer,
            (200, "text/markdown"): OpenApiTypes.STR,
            409: AMBIGUOUS,
            **errors(400, 401, 403, 429),
        },
        summary="Session-start context",
        operation_id="context",
        description="Critical memories, anti-patterns and the best matches for the task, within a token budget, "
        "leaving out what the session was already shown since its history was last reset. `fresh=true` "
        "says it just was (after a compaction or a clear, or a session continued in a new process): the whole "
        "context comes again. `format=markdown` (default) answers text/markdown.",
    )
    def get(self, request: Request) -> Response:
        serializer = s.ContextInSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        params = serializer.validated_data
        who = caller(request)
        result = context_build(
            team=who.team,
            allowed_projects=who.allowed_projects,
            session=session_for(who, params.get("session_id")),
            project=params.get("project"),
            query=params.get("q"),
            budget_tokens=params.get("budget_tokens"),
            fresh=params.get("fresh", False),
        )
        if params["format"] == "markdown":
            return self.markdown_response(result.markdown)
        return Response(context_result(result))


class FeedbackView(APIView):
    required_scopes = {"POST": W}

    @extend_schema(
        tags=["feedback"],
        request=s.FeedbackInSerializer,
        responses={201: s.FeedbackOutSerializer, 404: NOT_FOUND, **errors(400, 401, 403, 413, 429)},
        summary="Rate a memory helpful, harmful or irrelevant",
        operation_id="feedback_create",
        examples=[
            OpenApiExample(
                "Helpful",
                request_only=True,
                value={
                    "memory_id": "6f1c2a9e-0a8b-4c5e-9d3f-2b7a1e4c8d90",
                    "signal": "helpful",
                    "note": "Saved me an hour",
                },
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = s.FeedbackInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        who, data = caller(request), serializer.validated_data
        result, memory = feedback_give(who, data, session=session_for(who, data.get("session_id")))
        return Response(feedback_result(result, memory), status=status.HTTP_201_CREATED)


def feedback_give(who: Caller, data: dict, *, session: Session | None) -> tuple:
    """Rate a servable memory the caller sees (POST /feedback and the MCP feedback tool)."""
    with hidden(who, "memory", data["memory_id"]):
        memory = team_memories(who).servable().filter(pk=data["memory_id"]).first()
        if memory is None:
            raise NotFound(f"No memory {data['memory_id']} that can be rated.")
    result = feedback_record(
        memory=memory,
        signal=data["signal"],
        user=who.user,
        note=data.get("note", ""),
        session=session,
    )
    return result, memory


# --- what the upsert decided: changed facts and reinforcements (curators) -------------------------

CONFLICT = OpenApiResponse(
    s.ErrorSerializer, description="INVALID_TRANSITION: resolved already, or history moved on."
)


class FactChangeCursorPagination(MemoryCursorPagination):
    ordering = ("-created_at", "-id")


def fact_change_data(change) -> dict:
    both = Memory.objects.for_team(change.team_id).filter(pk__in=[change.old_id, change.new_id])
    memories = {m.pk: m for m in memories_with_entities(both)}
    return s.FactChangeSerializer(
        {
            "id": change.pk,
            "kind": change.kind,
            "old": memories[change.old_id],
            "new": memories[change.new_id],
            "reason": change.reason,
            "changes": change.changes,
            "cosine": change.cosine,
            "status": change.status,
            "resolved_by": change.resolved_by,
            "resolved_at": change.resolved_at,
            "created_at": change.created_at,
        }
    ).data


class FactChangeListView(APIView):
    required_scopes = {"GET": C}

    @extend_schema(
        tags=["review"],
        parameters=[s.FactChangeFilterSerializer, *PAGE_PARAMETERS],
        responses={200: s.PaginatedFactChangeList, **errors(400, 401, 403, 429)},
        summary="Changed facts (curators)",
        operation_id="changed_facts_list",
        description='UPDATEs whose content-bearing tokens changed ("Node 18" → "Node 20"), open ones '
        "by default: both memories side by side, the reason and the tokens that differ.",
    )
    def get(self, request: Request) -> Response:
        filters = s.FactChangeFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        queryset = fact_changes(caller(request)).filter(status=filters.validated_data["status"])
        paginator = FactChangeCursorPagination()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response([fact_change_data(change) for change in page])


def fact_changes(who: Caller):
    """The caller's team's changed facts; a project-limited token's, those whose new memory it sees."""
    queryset = FactChange.objects.for_team(who.team).select_related("resolved_by")
    if who.projects:
        queryset = queryset.filter(new_id__in=team_memories(who).values("pk"))
    return queryset


def fact_change_of(who: Caller, change_id: int) -> FactChange:
    with hidden(who, "changed fact", change_id):
        change = factchanges.fact_change_get(change_id, team=who.team)
        if who.projects and not team_memories(who).filter(pk=change.new_id).exists():
            raise NotFound(f"No changed fact {change_id}.")
    return change


class FactChangeDetailView(APIView):
    required_scopes = {"GET": C, "POST": C}

    @extend_schema(
        tags=["review"],
        responses={200: s.FactChangeSerializer, 404: NOT_FOUND, **errors(401, 403, 429)},
        summary="A changed fact (curators)",
        operation_id="changed_facts_retrieve",
    )
    def get(self, request: Request, change_id: int) -> Response:
        return Response(fact_change_data(fact_change_of(caller(request), change_id)))

    @extend_schema(
        tags=["review"],
        request=s.FactChangeActionInSerializer,
        responses={
            200: s.FactChangeSerializer,
            404: NOT_FOUND,
            409: CONFLICT,
            **errors(400, 401, 403, 413, 429),
        },
        summary="Confirm, undo or keep both (curators)",
        operation_id="changed_facts_resolve",
    )
    def post(self, request: Request, change_id: int) -> Response:
        serializer = s.FactChangeActionInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        change = factchanges.fact_change_resolve(
            change=fact_change_of(caller(request), change_id),
            action=serializer.validated_data["action"],
            actor=request.user,
        )
        return Response(fact_change_data(change))


class ReinforcementListView(APIView):
    required_scopes = {"GET": R}

    @extend_schema(
        tags=["memories"],
        responses={200: s.ReinforcementSerializer(many=True), 404: NOT_FOUND, **errors(401, 403, 429)},
        summary="The stores a memory absorbed (NOOPs), each with its text",
        operation_id="observations_reinforcements",
    )
    def get(self, request: Request, memory_id) -> Response:
        who = caller(request)
        memory = memory_of(who, visible_memories(who), memory_id)
        return Response(s.ReinforcementSerializer(factchanges.reinforcements(memory), many=True).data)


class SplitView(APIView):
    required_scopes = {"POST": C}

    @extend_schema(
        tags=["memories"],
        request=s.SplitInSerializer,
        responses={
            201: s.StoreResultSerializer,
            404: NOT_FOUND,
            409: CONFLICT,
            **errors(400, 401, 403, 413, 429),
        },
        summary="Split a reinforcement out into its own memory (curators)",
        operation_id="observations_split",
    )
    def post(self, request: Request, memory_id) -> Response:
        serializer = s.SplitInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        who = caller(request)
        memory = memory_of(who, team_memories(who), memory_id)
        event_id = serializer.validated_data["reinforcement"]
        with hidden(who, "reinforcement", event_id), limited_write(who):
            result = factchanges.reinforcement_split(memory=memory, event_id=event_id, actor=request.user)
            check_projects(who, [result.memory.pk], ["reinforcement"])
        return Response(store_result(result), status=status.HTTP_201_CREATED)


class HistoryView(APIView):
    required_scopes = {"GET": R}

    @extend_schema(
        tags=["memories"],
        responses={200: s.HistorySerializer, 404: NOT_FOUND, **errors(401, 403, 429)},
        summary="A memory's history: the versions of its text and its timeline",
        operation_id="observations_history",
        description="Versions run across the supersession chain (the texts of the memories it replaced, "
        "then its own edits; the last is current). The timeline, oldest first, holds edits, "
        "supersessions, reinforcements (with the incoming text and sender), proposals, feedback and "
        "reviews. The text of another memory you may not see is withheld.",
    )
    def get(self, request: Request, memory_id) -> Response:
        who = caller(request)
        visible = visible_memories(who)
        memory = memory_of(who, visible, memory_id)
        data = {
            "memory": memory,
            "versions": history.memory_versions(memory, readable=visible),
            "events": history.memory_history(memory, readable=visible),
        }
        return Response(s.HistorySerializer(data).data)


class RestoreView(APIView):
    required_scopes = {"POST": C}

    @extend_schema(
        tags=["memories"],
        request=s.RestoreInSerializer,
        responses={
            200: s.MemorySerializer,
            404: NOT_FOUND,
            409: OpenApiResponse(
                s.ErrorSerializer,
                description="INVALID_TRANSITION: that version is the current text, or another live "
                "memory has it.",
            ),
            **errors(400, 401, 403, 413, 429),
        },
        summary="Restore an earlier version of a memory's text (curators)",
        operation_id="observations_history_restore",
        description="An edit like any other (redacted, re-embedded, audited), plus a `restored` entry "
        "on the timeline.",
    )
    def post(self, request: Request, memory_id) -> Response:
        who = caller(request)
        memory = memory_of(who, visible_memories(who), memory_id)
        serializer = s.RestoreInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        history.memory_restore_version(
            memory=memory, version=serializer.validated_data["version"], actor=request.user
        )
        memory = memory_of(who, memories_with_entities(visible_memories(who)), memory_id)
        return Response(s.MemorySerializer(memory).data)


# --- entities, reflections, export -------------------------------------------------------------


class EntityListView(APIView):
    required_scopes = {"GET": R}

    @extend_schema(
        tags=["entities"],
        parameters=[
            s.EntityFilterSerializer,
            *PAGE_PARAMETERS,
        ],
        responses={200: s.PaginatedEntityList, **errors(400, 401, 403, 429)},
        summary="List entities with their mention counts",
        operation_id="entities_list",
    )
    def get(self, request: Request) -> Response:
        filters = s.EntityFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        who = caller(request)
        counted = Q(mentions__resolved=True)
        if who.projects:  # only the mentions of memories the token sees
            counted &= Q(mentions__memory__in=team_memories(who).values("pk"))
        queryset = visible_entities(who).annotate(mention_count=Count("mentions", filter=counted))
        if query := filters.validated_data.get("q", "").strip():
            queryset = queryset.filter(Q(slug__icontains=query) | Q(name__icontains=query))
        if entity_type := filters.validated_data.get("type"):
            queryset = queryset.filter(type=entity_type)
        paginator = EntityCursorPagination()
        page = paginator.paginate_queryset(queryset.select_related("merged_into"), request, view=self)
        return paginator.get_paginated_response(s.EntitySerializer(page, many=True).data)


class EntityResolveView(APIView):
    required_scopes = {"POST": R}

    @extend_schema(
        tags=["entities"],
        request=s.EntityResolveInSerializer,
        responses={200: s.EntityResolveOutSerializer, **errors(400, 401, 403, 413, 429)},
        summary="Resolve names to slugs",
        operation_id="entities_resolve",
        examples=[OpenApiExample("Names", request_only=True, value={"names": ["Mark", "billing-api"]})],
    )
    def post(self, request: Request) -> Response:
        serializer = s.EntityResolveInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        who = caller(request)
        pool = list(visible_entities(who))
        seen = {entity.pk for entity in pool}
        resolved, ambiguities, unknown = {}, {}, []
        for name in dict.fromkeys(serializer.validated_data["names"]):
            resolution = entity_service.resolve_references([name], team=who.team, create=False, pool=pool)
            found = [entity for entity in resolution.entities if entity.pk in seen]
            if found:
                resolved[name] = found[0].slug
            elif resolution.entities:  # a slug of the team the token may not see: unknown to it
                unknown.append(name)
            ambiguities.update(resolution.ambiguities)
            unknown += resolution.unknown
        return Response({"resolved": resolved, "ambiguities": ambiguities, "unknown": unknown})


class EntityMergeView(APIView):
    required_scopes = {"POST": C}

    @extend_schema(
        tags=["entities"],
        request=s.EntityMergeInSerializer,
        responses={200: s.EntitySerializer, 404: NOT_FOUND, **errors(400, 401, 403, 413, 429)},
        summary="Merge one entity into another (curators)",
        operation_id="entities_merge",
    )
    def post(self, request: Request) -> Response:
        serializer = s.EntityMergeInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        who = caller(request)
        found = {}
        for role in ("source", "target"):
            reference = serializer.validated_data[role]
            slug = entity_service.normalize_slug(reference)
            with hidden(who, "entity", reference):
                found[role] = visible_entities(who).filter(slug=slug).first() if slug else None
                if found[role] is None:
                    raise NotFound(f"No entity {reference!r}; pass a slug.")
        with hidden(who, "entity", f"{found['source'].slug} → {found['target'].slug}"):
            target = entity_service.entity_merge(source=found["source"], target=found["target"])
        target = visible_entities(who).annotate(mention_count=Count("mentions")).get(pk=target.pk)
        return Response(s.EntitySerializer(target).data)


class ReflectionListView(APIView):
    required_scopes = {"GET": R}

    @extend_schema(
        tags=["memories"],
        parameters=PAGE_PARAMETERS,
        responses={200: s.PaginatedReflectionList, **errors(400, 401, 403, 429)},
        summary="List reflections with their source observations",
        operation_id="reflections_list",
    )
    def get(self, request: Request) -> Response:
        who = caller(request)
        queryset = memories_with_entities(
            visible_memories(who).filter(kind=Kind.REFLECTION)
        ).prefetch_related(Prefetch("sources", queryset=team_memories(who)))
        paginator = MemoryCursorPagination()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(s.ReflectionSerializer(page, many=True).data)


class ExportView(MarkdownResponseMixin, APIView):
    required_scopes = {"GET": R}
    renderer_classes = [MarkdownRenderer, JSONRenderer]

    @extend_schema(
        tags=["export"],
        parameters=[s.ExportInSerializer],
        responses={(200, "text/markdown"): OpenApiTypes.STR, 409: AMBIGUOUS, **errors(400, 401, 403, 429)},
        summary="Download MEMORY.md",
        operation_id="export",
    )
    def get(self, request: Request) -> Response:
        serializer = s.ExportInSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        who = caller(request)
        result = export_memory_md(
            team=who.team,
            project=serializer.validated_data.get("project"),
            allowed_projects=who.allowed_projects,
        )
        return self.markdown_response(result.markdown, filename=result.filename)


# --- sessions ----------------------------------------------------------------------------------


def session_detail(who: Caller, session_pk) -> dict:
    session = (
        Session.objects.for_team(who.team)
        .annotate(
            message_count=Count("messages", distinct=True), recall_count=Count("recalls", distinct=True)
        )
        .select_related("project")
        .get(pk=session_pk)
    )
    # The memories stored from it that the caller sees (a project-limited token: its projects').
    session.memory_ids = list(team_memories(who).filter(session_id=session.pk).values_list("pk", flat=True))
    return s.SessionSerializer(session).data


class SessionCreateView(APIView):
    required_scopes = {"POST": W}

    @extend_schema(
        tags=["sessions"],
        request=s.SessionInSerializer,
        responses={201: s.SessionSerializer, 200: s.SessionSerializer, **errors(400, 401, 403, 413, 429)},
        summary="Register an agent session",
        operation_id="sessions_create",
        examples=[
            OpenApiExample(
                "Claude Code",
                request_only=True,
                value={"session_id": "8f0c1e2a-claude", "agent": "claude-code", "project": "billing-api"},
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = s.SessionInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        who = caller(request)
        session, created = session_start(
            team=who.team,
            user=who.user,
            external_id=data["session_id"],
            agent=data["agent"],
            project=session_project(who, data.get("project")),
            metadata=data.get("metadata"),
        )
        if not session_visible(who, session):  # the user's session of another project, registered before
            who.denied("session", data["session_id"])
            raise NotFound(f"No session {data['session_id']!r}.")
        return Response(
            session_detail(who, session.pk), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class SessionOwnedMixin:
    def get_session(self, request: Request, session_id: str) -> Session:
        return session_of(caller(request), session_id)


class SessionDetailView(SessionOwnedMixin, APIView):
    required_scopes = {"GET": R}

    @extend_schema(
        tags=["sessions"],
        responses={200: s.SessionSerializer, 404: NOT_FOUND, **errors(400, 401, 403, 429)},
        summary="A session's outcome, extraction status and extracted memories",
        operation_id="sessions_retrieve",
    )
    def get(self, request: Request, session_id: str) -> Response:
        return Response(session_detail(caller(request), self.get_session(request, session_id).pk))


class SessionMessagesView(SessionOwnedMixin, APIView):
    required_scopes = {"GET": R, "POST": W}

    @extend_schema(
        tags=["sessions"],
        parameters=[s.MessagesFilterSerializer],
        responses={200: s.MessageOutSerializer(many=True), 404: NOT_FOUND, **errors(400, 401, 403, 429)},
        summary="Read transcript messages (the evidence an extracted memory links to)",
        operation_id="sessions_messages_list",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = self.get_session(request, session_id)
        filters = s.MessagesFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        messages = session.messages.order_by("seq")
        if "from" in filters.validated_data:
            messages = messages.filter(seq__gte=filters.validated_data["from"])
        if "to" in filters.validated_data:
            messages = messages.filter(seq__lte=filters.validated_data["to"])
        limit = setting("MAX_MESSAGES_PER_REQUEST")
        return Response(s.MessageOutSerializer(messages[:limit], many=True).data)

    @extend_schema(
        tags=["sessions"],
        request=s.MessagesInSerializer,
        responses={200: s.MessagesOutSerializer, 404: NOT_FOUND, **errors(400, 401, 403, 413, 429)},
        summary="Append transcript messages (idempotent by seq)",
        operation_id="sessions_messages_create",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session = self.get_session(request, session_id)
        serializer = s.MessagesInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = messages_append(session=session, messages=serializer.validated_data["messages"])
        return Response({"stored": result.stored, "already_stored": result.already_stored})


class SessionEndView(SessionOwnedMixin, APIView):
    required_scopes = {"POST": W}

    @extend_schema(
        tags=["sessions"],
        request=s.SessionEndInSerializer,
        responses={202: s.SessionSerializer, 404: NOT_FOUND, **errors(400, 401, 403, 413, 429)},
        summary="End a session with its outcome",
        operation_id="sessions_end",
        description="Scores the outcome (implicit_score, implicit_label) and gives every memory the "
        "session was shown an implicit helpful or harmful event. Ending twice changes nothing.",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session = self.get_session(request, session_id)
        serializer = s.SessionEndInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        session, _ = session_end(session=session, **serializer.validated_data)
        return Response(session_detail(caller(request), session.pk), status=status.HTTP_202_ACCEPTED)
