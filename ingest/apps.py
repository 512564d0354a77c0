from __future__ import annotations

from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
