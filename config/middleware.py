"""Request guards that must run before a view: size limits and who may see what."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from config.access import public_read  # noqa: F401 - the marker this middleware reads
from triage.request_limits import body_too_large, too_large_message

# Form posts whose whole body is a paste: refused with the paste page's own message when too big.
PASTE_URLS = frozenset({"triage:paste", "triage:new_entry"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class NulQueryMiddleware:
    """A NUL character in the URL is refused with a 400: no page or API takes one, and databases
    (PostgreSQL) cannot store or compare text that holds one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.META.get("QUERY_STRING", "")
        if "%00" in query or "\x00" in query or "\x00" in request.path:
            message = "The URL holds a NUL character."
            if request.path.startswith("/api/"):
                return JsonResponse({"error": {"code": "bad_request", "message": message}}, status=400)
            return HttpResponse(message, status=400, content_type="text/plain")
        return self.get_response(request)


class BodySizeLimitMiddleware:
    """Answer an oversize paste with a friendly 413 before CSRF checking reads the body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and body_too_large(request):
            try:
                name = resolve(request.path_info).view_name
            except Resolver404:
                name = ""
            if name in PASTE_URLS:
                template = "triage/_results.html" if request.headers.get("HX-Request") else "triage/paste.html"
                return render(request, template, {"error": too_large_message()}, status=413)
        return self.get_response(request)


class FixbaseLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Django's login-required default, with the public-triage switch."""

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
    ) -> HttpResponseBase | None:
        if settings.FIXBASE_PUBLIC_TRIAGE and getattr(view_func, "public_read", False):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
