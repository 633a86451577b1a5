"""A JSON parser that refuses bodies over the limit, whatever their transfer encoding."""

from __future__ import annotations

import io

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than the server accepts."
    default_code = "PAYLOAD_TOO_LARGE"


class LimitedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        data = stream.read(limit + 1) if stream is not None else b""
        if len(data) > limit:
            raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
        try:
            return super().parse(io.BytesIO(data), media_type, parser_context)
        except RecursionError:
            raise ParseError("The JSON is nested too deeply.") from None
