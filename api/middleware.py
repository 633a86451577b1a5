"""Refuse oversized API bodies before anything reads them (the parser catches chunked ones)."""

from __future__ import annotations

from django.conf import settings

from api.exceptions import json_error

API_PREFIXES = ("/api/", "/mcp")


class BodySizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(API_PREFIXES):
            raw = request.META.get("CONTENT_LENGTH") or "0"
            try:
                length = int(raw)
            except ValueError:
                return json_error(request, "MALFORMED_REQUEST", "Content-Length is not a number.", 400)
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if length > limit:
                return json_error(
                    request, "PAYLOAD_TOO_LARGE", f"The request body is over the limit of {limit} bytes.", 413
                )
        return self.get_response(request)
