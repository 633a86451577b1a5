"""Search, the session-start context and feedback (and the response shapes the MCP server shares)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.access import (
    Caller,
    hidden,
    session_for,
    team_memories,
    visible_entities,
)
from api.views.common import (
    AMBIGUOUS,
    NOT_FOUND,
    MarkdownRenderer,
    MarkdownResponseMixin,
    R,
    W,
    caller,
    errors,
    memories_with_entities,
    with_entity_slugs,
)
from memory.models import Memory, Session
from memory.services.context import context_build
from memory.services.errors import NotFound
from memory.services.feedback import feedback_record
from memory.services.search import memory_search


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
