"""What every view of the agent API shares: the error responses of the schema, the callers' access,
entity slugs on memories, the markdown renderer and responses, and the cursor pagination."""

from __future__ import annotations

import json

from django.db.models import Prefetch
from django.http import HttpResponse
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
)
from rest_framework import exceptions
from rest_framework.pagination import CursorPagination
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api import serializers as s
from api.access import (
    Caller,
    caller_of,
)
from memory.conf import setting
from memory.models import EntityMention, Memory, Scope
from memory.services import entities as entity_service

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
