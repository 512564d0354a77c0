"""What every API view shares: token authentication with scopes, per-token rate limits,
pagination. (DRF imports these while it loads its views, so nothing here imports DRF's views;
the error shape is in config.api_errors.)"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, TokenAuthentication, get_authorization_header
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


class ApiTokenAuthentication(BaseAuthentication):
    """`Authorization: Token fb_…` (or `Bearer fb_…`) with a Fixbase token; request.auth is it."""

    keywords = (b"token", b"bearer")

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        from triage.tokens import KEY_PREFIX, token_find

        parts = get_authorization_header(request).split()
        if len(parts) != 2 or parts[0].lower() not in self.keywords:
            return None
        key = parts[1].decode(errors="replace")
        if not key.startswith(KEY_PREFIX):
            return None  # perhaps a legacy DRF token: the next authenticator decides
        token = token_find(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return "Token"


class LegacyTokenAuthentication(TokenAuthentication):
    """Tokens made by earlier versions (DRF's one per user): scopes as the user's role allows."""


def scopes_of(request: Request) -> set[str]:
    from kb.permissions import can_edit
    from triage.models import ApiToken

    if isinstance(request.auth, ApiToken):
        return set(request.auth.scopes.split(","))
    if request.user and request.user.is_authenticated:  # a browser session or a legacy token
        return {"triage", "write"} if can_edit(request.user) else {"triage"}
    return set()


class HasScope(BasePermission):
    """The view's `required_scope` (per method: `required_scopes = {"POST": "write"}`); writing
    also needs an editor."""

    def has_permission(self, request: Request, view: Any) -> bool:
        from kb.permissions import can_edit

        if not request.user or not request.user.is_authenticated:
            return False
        needed = getattr(view, "required_scopes", {}).get(request.method, "triage")
        if needed not in scopes_of(request):
            self.message = f"This token lacks the {needed!r} scope."
            return False
        if needed == "write" and not can_edit(request.user):
            self.message = "Only editors can change the knowledge base."
            return False
        return True


class TokenRateThrottle(SimpleRateThrottle):
    """Requests per token (per user for sessions and legacy tokens); over the rate: 429 with
    Retry-After."""

    scope = "token"

    def get_rate(self) -> str:
        return str(settings.FIXBASE_API_RATE)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        from triage.models import ApiToken

        if isinstance(request.auth, ApiToken):
            ident = f"t{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"u{request.user.pk}"
        else:
            ident = self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


def without_nul(value: Any) -> Any:
    """The value with NUL characters removed from every string in it (PostgreSQL cannot store them;
    a log that printed one loses nothing that matters)."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_nul(v) for v in value]
    return value


class NulFreeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return without_nul(super().parse(stream, media_type, parser_context))


class Pages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
