from __future__ import annotations

from django.urls import path

from kb import views

app_name = "kb"
urlpatterns = [
    path("", views.entry_list_view, name="entries"),
    path("entries/<int:pk>/", views.entry_detail_view, name="entry"),
    path("entries/<int:pk>/edit/", views.entry_edit_view, name="entry_edit"),
    path("entries/<int:pk>/history/", views.entry_history_view, name="entry_history"),
    path("entries/<int:pk>/revert/<int:version_id>/", views.entry_revert_view, name="entry_revert"),
    path("entries/<int:pk>/merge/", views.entry_merge_view, name="entry_merge"),
    path("merges/<int:merge_id>/undo/", views.merge_undo_view, name="merge_undo"),
]
