from __future__ import annotations

import shutil
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from kb.services import index_rebuild


class Command(BaseCommand):
    help = (
        "Recreate the FAISS index from the database (embedding entries that need it) and drop the saved "
        "ranking copy (after restoring a database, run this)."
    )

    def handle(self, *args: Any, **opts: Any) -> None:
        shutil.rmtree(settings.FIXBASE_RANKING_COPY_DIR, ignore_errors=True)  # the next process builds it anew
        meta = index_rebuild()
        self.stdout.write(f"index version {meta.version}: {meta.count} vectors ({meta.model_name})")
