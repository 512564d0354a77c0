"""Celery tasks: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from ingest.services import document_mark_failed, document_process


@shared_task(bind=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=3, acks_late=True)
def ingest_document(self, document_id: int) -> str:  # type: ignore[no-untyped-def]
    try:
        return document_process(document_id).status
    except Exception as exc:
        if isinstance(exc, OSError) and self.request.retries < self.max_retries:
            raise
        document_mark_failed(document_id, f"{type(exc).__name__}: {exc}")
        raise
