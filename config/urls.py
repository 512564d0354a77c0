from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path

from ingest.api import DocumentDetailApi, DocumentUploadApi
from triage.api import TriageApi

# The API authenticates with its own tokens (DRF); the login-page redirect is for browsers.
urlpatterns = [
    path("", include("triage.urls")),
    path("kb/", include("kb.urls")),
    path("upload/", include("ingest.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/triage/", login_not_required(TriageApi.as_view()), name="api-triage"),
    path("api/v1/documents/", login_not_required(DocumentUploadApi.as_view()), name="api-documents"),
    path("api/v1/documents/<int:pk>/", login_not_required(DocumentDetailApi.as_view()), name="api-document"),
    path("admin/", admin.site.urls),
]
