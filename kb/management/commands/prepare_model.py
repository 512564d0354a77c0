from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kb.embedding import MiniLMEmbedder


class Command(BaseCommand):
    help = "Export the embedding model to ONNX once (FIXBASE_MODEL_CACHE), so no process has to on first use."

    def handle(self, *args: Any, **opts: Any) -> None:
        self.stdout.write(f"model ready: {MiniLMEmbedder().path}")
