"""Sessions: start, detail, messages (idempotent by ``seq``) and end."""

from __future__ import annotations

from django.db.models import Count
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
)
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.access import (
    Caller,
    session_of,
    session_project,
    session_visible,
    team_memories,
)
from api.views.common import NOT_FOUND, R, W, caller, errors
from memory.conf import setting
from memory.models import Session
from memory.services.errors import NotFound
from memory.services.sessions import messages_append, session_end, session_start


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
