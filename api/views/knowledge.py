"""Entities (list, resolve, merge), reflections and the MEMORY.md export."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
)
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.access import (
    hidden,
    team_memories,
    visible_entities,
    visible_memories,
)
from api.views.common import (
    AMBIGUOUS,
    NOT_FOUND,
    PAGE_PARAMETERS,
    C,
    EntityCursorPagination,
    MarkdownRenderer,
    MarkdownResponseMixin,
    MemoryCursorPagination,
    R,
    caller,
    errors,
    memories_with_entities,
)
from memory.models import Kind
from memory.services import entities as entity_service
from memory.services.errors import NotFound
from memory.services.export import export_memory_md


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
