from __future__ import annotations

from csp.decorators import csp_update
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.http import FileResponse, HttpRequest
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

import config.schema  # noqa: F401 - registers the token scheme with drf-spectacular
from ingest.api import DocumentDetailApi, DocumentUploadApi
from kb.api import EntryDetailApi, EntryListApi, EntryMergeApi
from triage.api import FeedbackApi, HealthApi, TriageApi, TriageRecordApi

CLIENT = settings.BASE_DIR / "clients" / "fixbase_ci.py"


def api(view):  # type: ignore[no-untyped-def]
    """The API authenticates with its own tokens (DRF); the login-page redirect is for browsers."""
    return login_not_required(view.as_view())


api_v1 = [
    path("triage/", api(TriageApi), name="api-triage"),
    path("triage/<int:pk>/", api(TriageRecordApi), name="api-triage-record"),
    path("triage/<int:pk>/feedback/", api(FeedbackApi), name="api-feedback"),
    path("entries/", api(EntryListApi), name="api-entries"),
    path("entries/<int:pk>/", api(EntryDetailApi), name="api-entry"),
    path("entries/<int:pk>/merge/", api(EntryMergeApi), name="api-entry-merge"),
    path("documents/", api(DocumentUploadApi), name="api-documents"),
    path("documents/<int:pk>/", api(DocumentDetailApi), name="api-document"),
    path("health/", api(HealthApi), name="api-health"),
    path("schema/", login_not_required(SpectacularAPIView.as_view()), name="api-schema"),
    # Swagger UI sets inline styles: allowed on this page only.
    path(
        "docs/",
        login_not_required(
            csp_update({"style-src": ["'unsafe-inline'"]})(SpectacularSwaggerSplitView.as_view(url_name="api-schema"))
        ),
        name="api-docs",
    ),
]


@login_not_required
def client_script(request: HttpRequest) -> FileResponse:
    """The CI client, for pipelines to fetch from the server they talk to (see clients/examples)."""
    return FileResponse(open(CLIENT, "rb"), content_type="text/x-python", filename="fixbase_ci.py")


urlpatterns = [
    path("client/fixbase_ci.py", client_script, name="client-script"),
    path("", include("triage.urls")),
    path("kb/", include("kb.urls")),
    path("upload/", include("ingest.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include(api_v1)),
    path("admin/", admin.site.urls),
]

handler404 = "config.views.not_found"
handler500 = "config.views.server_error"
