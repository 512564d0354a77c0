from __future__ import annotations

from django.urls import path

from ingest import views

app_name = "ingest"
urlpatterns = [
    path("", views.upload_view, name="upload"),
    path("<int:pk>/", views.document_view, name="document"),
    path("<int:pk>/lines/", views.document_lines_view, name="lines"),
    path("<int:pk>/original/", views.document_original_view, name="original"),
]
