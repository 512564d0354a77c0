"""How the OpenAPI schema describes Fixbase's token authentication."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "config.api.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token fb_…` (a token from `manage.py apitoken` or the Tokens page).",
        }


class LegacyTokenScheme(ApiTokenScheme):
    target_class = "config.api.LegacyTokenAuthentication"
    name = "legacyTokenAuth"


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "fields": {"type": "object", "additionalProperties": True},
            },
        }
    },
}
ERRORS = {
    "400": "The request is invalid (the message says why; `fields` per field).",
    "401": "No token, or an invalid or revoked one.",
    "403": "The token lacks the scope, or the user the role.",
    "404": "No such object (or, on a list, no such page).",
    "405": "Method not allowed.",
    "406": "Not acceptable.",
    "413": "The body is over the size limit.",
    "415": "Unsupported media type.",
    "429": "Over the token's rate limit; see Retry-After.",
}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Every operation documents the one error shape for the errors any request can meet."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, ops in result.get("paths", {}).items():
        for op in ops.values():
            responses = op.setdefault("responses", {})
            for code, text in ERRORS.items():
                if code in responses and "content" in responses[code]:
                    continue
                responses[code] = {"description": responses.get(code, {}).get("description") or text, "content": ref}
            if path == "/api/v1/health/":
                responses["503"] = {
                    "description": "Degraded: see which part.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
    return result
