"""What the upsert decided, for curators: changed facts and proposals, reinforcements (and their
split), a memory's history and the restore of an earlier version."""

from __future__ import annotations

from drf_spectacular.utils import (
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
    hidden,
    limited_write,
    memory_of,
    team_memories,
    visible_memories,
)
from api.views.common import (
    NOT_FOUND,
    PAGE_PARAMETERS,
    C,
    MemoryCursorPagination,
    R,
    caller,
    errors,
    memories_with_entities,
)
from api.views.observations import store_result
from memory.models import FactChange, Memory
from memory.services import factchanges, history
from memory.services.errors import NotFound

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
