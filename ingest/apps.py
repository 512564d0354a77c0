from __future__ import annotations

from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"

    def ready(self) -> None:
        # A process that starts removes the partial uploads of dead ones (files only: no queries
        # here; stale documents are resumed by ingest.dispatch.resume_abandoned).
        from ingest.dispatch import remove_orphans

        remove_orphans()
