"""``GET /api/v1/health``: states for anyone, the error text for staff signed in."""

from __future__ import annotations

from django.contrib.auth import get_user
from django.db import InterfaceError, OperationalError
from drf_spectacular.utils import (
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.decorators import api_view, authentication_classes, permission_classes, throttle_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from memory.conf import setting
from memory.services.health import health_report, public_report

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
