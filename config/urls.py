from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from ingest.api import DocumentDetailApi, DocumentUploadApi
from triage.api import TriageApi

urlpatterns = [
    path("", include("triage.urls")),
    path("kb/", include("kb.urls")),
    path("upload/", include("ingest.urls")),
    path("api/v1/triage/", TriageApi.as_view(), name="api-triage"),
    path("api/v1/documents/", DocumentUploadApi.as_view(), name="api-documents"),
    path("api/v1/documents/<int:pk>/", DocumentDetailApi.as_view(), name="api-document"),
    path("admin/", admin.site.urls),
]
