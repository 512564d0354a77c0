"""Start Django for a benchmark script in a throwaway data directory (SQLite + FAISS files)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the pure modules (triage.ranking, kb.*) import before Django starts


def setup_throwaway(embedder: str = "minilm") -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="fixbase-bench-"))
    os.environ["FIXBASE_DATA_DIR"] = str(tmp)
    os.environ["FIXBASE_EMBEDDER"] = embedder
    os.environ["FIXBASE_LOG_LEVEL"] = "WARNING"
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return tmp
