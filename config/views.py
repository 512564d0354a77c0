"""Error pages: JSON in the API's error shape under /api/, the site's own pages elsewhere."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def _api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return JsonResponse({"error": {"code": "not_found", "message": "No such API URL or object."}}, status=404)
    return render(request, "404.html", {}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    if _api(request):
        return JsonResponse(
            {"error": {"code": "server_error", "message": "Fixbase failed; the error is logged."}}, status=500
        )
    return HttpResponse("<h1>Server error</h1><p>Fixbase failed; the error is logged.</p>", status=500)
