"""What a monitor needs to know: can Fixbase answer, and can it ingest."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection


def _database() -> dict[str, Any]:
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
        from kb.models import Entry

        return {"ok": True, "entries": Entry.objects.count()}
    except Exception as exc:  # any failure is the report, not a 500
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


def _index() -> dict[str, Any]:
    try:
        from kb.vector_index import get_index

        meta = get_index().meta()
        return {"ok": True, "vectors": meta.count if meta else 0, "model": meta.model_name if meta else None}
    except Exception as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


def _worker() -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "mode": "in-process (no broker configured)"}
    try:
        from config.celery import workers_answering

        workers = workers_answering()
        return {"ok": bool(workers), "mode": "celery", "workers": workers}
    except Exception as exc:
        return {"ok": False, "mode": "celery", "error": f"{type(exc).__name__}: {exc}"[:300]}


def _model() -> dict[str, Any]:
    from kb.embedding import _embedders

    kind = settings.FIXBASE_EMBEDDER
    loaded = kind in _embedders
    return {"ok": True, "name": "fake-hash-384" if kind == "fake" else "all-MiniLM-L6-v2", "loaded": loaded}


def health() -> dict[str, Any]:
    parts: dict[str, Any] = {"database": _database(), "index": _index(), "worker": _worker(), "model": _model()}
    parts["status"] = "ok" if all(p["ok"] for p in parts.values()) else "degraded"
    return parts
