"""Storing and reading memories: ``/observations`` (one, a batch, a detail, an edit or a delete), and
the response shapes the MCP server shares."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.access import (
    Caller,
    check_projects,
    limited_write,
    memory_of,
    session_for,
    visible_memories,
)
from api.views.common import (
    AMBIGUOUS,
    NOT_FOUND,
    PAGE_PARAMETERS,
    C,
    MemoryCursorPagination,
    R,
    W,
    caller,
    errors,
    memories_with_entities,
    with_entity_slugs,
)
from memory.models import Memory, Session
from memory.services import curation
from memory.services import entities as entity_service
from memory.services.errors import InvalidInput
from memory.services.search import memories_as_shown
from memory.services.store import memory_store, memory_store_batch


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
