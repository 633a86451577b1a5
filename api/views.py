from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from memory.services.health import health_report

HealthSerializer = inline_serializer(
    "Health",
    fields={
        "status": serializers.ChoiceField(choices=["ok", "error"]),
        "database": serializers.CharField(),
        "broker": serializers.CharField(),
        "embedder": serializers.CharField(),
        "version": serializers.CharField(),
    },
)


@extend_schema(auth=[], responses={200: HealthSerializer, 503: HealthSerializer}, tags=["health"])
@api_view(["GET"])
@authentication_classes([])
@permission_classes([AllowAny])
def health(request: Request) -> Response:
    """Whether the database, the broker and the embedder are usable. No authentication."""
    report = health_report()
    return Response(report, status=200 if report["status"] == "ok" else 503)
