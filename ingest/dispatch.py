"""Run an ingest off the request: a Celery worker when one is configured, else a background
thread of this process (the embedded default), so an upload never waits for its ingest."""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection

logger = logging.getLogger("fixbase.ingest")

# One ingest at a time per process: several would only fight over the cores and the SQLite lock.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixbase-ingest")
ORPHAN_IDLE_SECONDS = 1800  # a partial upload file not written for this long belongs to no request
ORPHAN_NAME_RE = re.compile(r"^\.upload-(?P<host>.+)-(?P<pid>\d+)-")


def ingest_later(document_id: int) -> None:
    from ingest.tasks import ingest_document

    if settings.CELERY_TASK_ALWAYS_EAGER and settings.FIXBASE_INGEST_IN_THREAD:
        _executor.submit(_run_here, document_id)
    else:
        ingest_document.delay(document_id)


WORKER_CHECK_SECONDS = 15.0  # how old the last ping's answer may be before another is sent
_worker_seen: tuple[float, bool] = (float("-inf"), True)  # (when, did any worker answer)
_pinging = threading.Lock()


def no_worker_running() -> bool:
    """With Celery, True when no worker answered the last ping (so a queued document waits for one
    to start); False on the embedded default, where this process runs every ingest itself. Never
    waits: a stale answer is refreshed by a background ping (one at a time; a broker that is down
    can take seconds to say so), and until the first answer comes, workers are assumed to run."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return False
    checked_at, answering = _worker_seen
    if time.monotonic() - checked_at > WORKER_CHECK_SECONDS and _pinging.acquire(blocking=False):
        threading.Thread(target=_ping_workers, name="fixbase-worker-ping", daemon=True).start()
    return not answering


def _ping_workers() -> None:
    global _worker_seen
    answering = False
    try:
        from config.celery import workers_answering

        answering = workers_answering(timeout=1.0) > 0
    except Exception:  # a broker that is down has no worker either
        logger.warning("could not ping the ingest workers", exc_info=True)
    finally:
        _worker_seen = (time.monotonic(), answering)
        _pinging.release()


def _run_here(document_id: int) -> None:
    from ingest.tasks import ingest_document

    try:
        ingest_document.apply(args=[document_id])
    except Exception:  # the task has marked the document failed; keep the thread alive
        logger.exception("ingest of document %s failed", document_id)
    finally:
        connection.close()


def resume_abandoned() -> list[int]:
    """Documents a killed process left `processing` or `queued`, and partial upload files.

    With Celery, a starting worker does this (ingest.tasks.requeue_stale_documents). On the
    embedded default nothing else would, so pages that show documents call it: a stale
    document is queued again here and its ingest starts in this process."""
    remove_orphans()
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return []
    from ingest.services import documents_requeue_stale

    ids = documents_requeue_stale(socket.gethostname() + ":", timedelta(seconds=settings.FIXBASE_STALE_SECONDS))
    for document_id in ids:
        logger.warning("resuming document %s left unfinished by a stopped process", document_id)
        ingest_later(document_id)
    return ids


def remove_orphans() -> None:
    """Partial upload files nobody will finish: ours (named `.upload-HOST-PID-…`) whose process is
    gone, and any left idle for ORPHAN_IDLE_SECONDS (an upload in progress keeps writing)."""
    from ingest.services import process_alive

    host = socket.gethostname()
    cutoff = time.time() - ORPHAN_IDLE_SECONDS
    for folder, pattern in (
        (Path(settings.MEDIA_ROOT) / "documents", ".upload-*"),
        (Path(settings.FILE_UPLOAD_TEMP_DIR), "*"),
    ):
        if not folder.is_dir():
            continue
        for path in folder.glob(pattern):
            owner = ORPHAN_NAME_RE.match(path.name)
            dead = owner is not None and owner["host"] == host and not process_alive(f"{host}:{owner['pid']}")
            try:
                if path.is_file() and (dead or path.stat().st_mtime < cutoff):
                    path.unlink()
                    logger.info("removed orphan upload file %s", path)
            except OSError:
                continue
