from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kb.services import index_rebuild


class Command(BaseCommand):
    help = "Recreate the FAISS index from the database (embedding entries that need it)."

    def handle(self, *args: Any, **opts: Any) -> None:
        meta = index_rebuild()
        self.stdout.write(f"index version {meta.version}: {meta.count} vectors ({meta.model_name})")
