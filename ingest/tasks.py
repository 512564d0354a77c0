"""Celery tasks: they take ids and call one service."""

from __future__ import annotations

import logging
import socket

from celery import shared_task
from celery.signals import worker_ready

from ingest.services import document_mark_failed, document_process, documents_requeue_stale

logger = logging.getLogger("fixbase.ingest")


@shared_task(bind=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=3, acks_late=True)
def ingest_document(self, document_id: int) -> str:  # type: ignore[no-untyped-def]
    try:
        return document_process(document_id).status
    except Exception as exc:
        if isinstance(exc, OSError) and self.request.retries < self.max_retries:
            raise
        document_mark_failed(document_id, f"{type(exc).__name__}: {exc}")
        raise


@worker_ready.connect
def requeue_stale_documents(sender: object = None, **kwargs: object) -> None:
    """A worker that starts picks up documents a dead worker left half-done or never started."""
    from datetime import timedelta

    from django.conf import settings

    hostname = str(getattr(sender, "hostname", "") or "")
    ids = documents_requeue_stale(socket.gethostname() + ":", timedelta(seconds=settings.FIXBASE_STALE_SECONDS))
    for document_id in ids:
        ingest_document.delay(document_id)
    if ids:
        logger.warning("%s requeued stale documents %s", hostname, ids)
