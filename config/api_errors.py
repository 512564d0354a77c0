"""One error shape for the whole API: {"error": {"code", "message", "fields"?}}."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    411: "length_required",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def _first_message(value: Any, where: str = "") -> str:
    """The first error text in DRF's nested error structure, with the field it is about."""
    if isinstance(value, dict):
        for key, inner in value.items():
            label = where if key == "non_field_errors" else f"{where}.{key}" if where else str(key)
            found = _first_message(inner, label)
            if found:
                return found
        return ""
    if isinstance(value, list):
        return next((m for m in (_first_message(v, where) for v in value) if m), "")
    text = str(value)
    return f"{where}: {text}" if where else text


def error_response(status_code: int, message: str, fields: dict[str, Any] | None = None) -> Response:
    body: dict[str, Any] = {"code": CODES.get(status_code, "error"), "message": message}
    if fields:
        body["fields"] = fields
    return Response({"error": body}, status=status_code)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every API error as {"error": {"code", "message", "fields"?}}."""
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    fields = None
    if isinstance(exc, exceptions.ValidationError) and isinstance(data, dict):
        fields = data
        message = _first_message(data) or "The request is invalid."
    elif isinstance(data, dict) and "detail" in data:
        message = str(data["detail"])
    else:
        message = str(data)
    out = error_response(response.status_code, message, fields)
    for header in ("Retry-After", "WWW-Authenticate", "Allow"):
        if header in response:
            out[header] = response[header]
    return out


class TooLarge(exceptions.APIException):
    """A body that is over the limit once read (a gzip upload that expands past it)."""

    status_code = 413
    default_detail = "Too large."
    default_code = "too_large"
