"""One error shape for the whole API: ``{"error": {"code", "message", ...}}``.

Domain errors carry their own code; DRF's errors are mapped here; anything unexpected is logged
and answered as a JSON 500 without internals (and is a bug to fix).
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from api.parsers import PayloadTooLarge
from memory.services.errors import AmbiguousEntity, InvalidInput, InvalidTransition, MemoryLaneError, NotFound

logger = logging.getLogger(__name__)


DOMAIN_STATUS = {
    AmbiguousEntity: status.HTTP_409_CONFLICT,
    InvalidInput: status.HTTP_400_BAD_REQUEST,
    InvalidTransition: status.HTTP_409_CONFLICT,
    NotFound: status.HTTP_404_NOT_FOUND,
}

DRF_CODES = {
    exceptions.ValidationError: "VALIDATION_ERROR",
    exceptions.ParseError: "MALFORMED_REQUEST",
    exceptions.NotAuthenticated: "NOT_AUTHENTICATED",
    exceptions.AuthenticationFailed: "AUTHENTICATION_FAILED",
    exceptions.PermissionDenied: "PERMISSION_DENIED",
    exceptions.NotFound: "NOT_FOUND",
    exceptions.MethodNotAllowed: "METHOD_NOT_ALLOWED",
    exceptions.NotAcceptable: "NOT_ACCEPTABLE",
    exceptions.UnsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE",
    exceptions.Throttled: "THROTTLED",
    PayloadTooLarge: "PAYLOAD_TOO_LARGE",
}


def error_body(code: str, message: str, **details) -> dict:
    return {"error": {"code": code, "message": message, **details}}


def _field_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail → {"field.sub[0]": ["message", ...]}."""
    if isinstance(detail, dict):
        fields: dict[str, list[str]] = {}
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(key, int):  # a list's errors by position: items[0], tags[2]
                name = f"{prefix}[{key}]"
            if key == "non_field_errors":
                name = prefix or "non_field_errors"
            fields.update(_field_errors(value, name))
        return fields
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return {prefix or "non_field_errors": [str(item) for item in detail]}
        fields = {}
        for index, item in enumerate(detail):
            if item:
                fields.update(_field_errors(item, f"{prefix}[{index}]"))
        return fields
    return {prefix or "non_field_errors": [str(detail)]}


def _message(exc: exceptions.APIException) -> str:
    detail = exc.detail
    if isinstance(detail, str):
        return str(detail)
    if isinstance(detail, dict) and isinstance(detail.get("detail"), str):
        return str(detail["detail"])
    return "Invalid input."


def exception_handler(exc, context) -> Response:
    if isinstance(exc, OperationalError | InterfaceError):
        # The database is unreachable (or went away mid-request): a 503 to retry, not a bug's 500.
        from memorylane.middleware import MESSAGE, retry_after

        logger.warning("database error in %s: %s", context.get("view"), exc)
        seconds = retry_after()
        return Response(
            error_body("SERVICE_UNAVAILABLE", MESSAGE, retry_after_seconds=seconds),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(seconds)},
        )
    if isinstance(exc, MemoryLaneError):
        code = DOMAIN_STATUS.get(type(exc)) or next(
            (value for cls, value in DOMAIN_STATUS.items() if isinstance(exc, cls)),
            status.HTTP_400_BAD_REQUEST,
        )
        return Response({"error": exc.as_dict()}, status=code)
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, SuspiciousOperation):
        exc = exceptions.ParseError(str(exc) or "The request was malformed.")

    response = drf_exception_handler(exc, context)
    if response is None:
        logger.exception("Unhandled error in %s", context.get("view"), exc_info=exc)
        return Response(
            error_body("INTERNAL_ERROR", "Something went wrong on our side; the request changed nothing."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    code = next((value for cls, value in DRF_CODES.items() if isinstance(exc, cls)), "ERROR")
    if isinstance(exc, exceptions.ValidationError):
        fields = _field_errors(exc.detail)
        summary = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items())
        response.data = error_body(code, f"Invalid input — {summary}", fields=fields)
    else:
        details = {}
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            details["retry_after_seconds"] = int(exc.wait)
        response.data = error_body(code, _message(exc), **details)
    return response


def json_error(request, code: str, message: str, status_code: int) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)


@csrf_exempt  # unsafe methods to unknown paths deserve a 404, not a CSRF failure
def not_found(request, exception=None, *args, **kwargs) -> JsonResponse:
    """Unknown paths under /api/ answer in the API's error shape, not an HTML page."""
    return json_error(request, "NOT_FOUND", f"No API endpoint at {request.path}.", 404)
