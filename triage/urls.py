from __future__ import annotations

from django.urls import path

from triage import views

app_name = "triage"
urlpatterns = [
    path("", views.paste_view, name="paste"),
    path("triage/new-entry/", views.new_entry_view, name="new_entry"),
    path("trends/", views.trends_view, name="trends"),
    path("triage/feedback/", views.feedback_view, name="feedback"),
    path("tokens/", views.tokens_view, name="tokens"),
]
