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
