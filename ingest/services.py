"""Ingest documents: store the upload, parse it, write entries to the knowledge base."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.db import transaction

from ingest.models import Document
from ingest.parsers import ParseError, decode_document, parse_document
from kb.services import NewEntry, entries_create, entries_embed

logger = logging.getLogger("fixbase.ingest")


class IngestError(ValueError):
    """Bad input from a user: shown to them, nothing stored."""


@dataclass(frozen=True)
class Submitted:
    document: Document
    created: bool  # False when the same content was already uploaded


def document_submit(filename: str, data: bytes, requested_format: str = "") -> Submitted:
    """Validate and store an upload. Identical content is recognised by its hash.

    Validation happens before anything is written: an empty or binary file raises
    IngestError and leaves no document behind.
    """
    from django.conf import settings

    if len(data) > settings.FIXBASE_MAX_UPLOAD_BYTES:
        raise IngestError(f"The file is {len(data)} bytes; the limit is {settings.FIXBASE_MAX_UPLOAD_BYTES}.")
    try:
        decode_document(data)
    except ParseError as exc:
        raise IngestError(str(exc)) from exc
    if requested_format:
        from ingest.parsers import FORMATS

        if requested_format not in FORMATS:
            raise IngestError(f"Unknown format {requested_format!r}; expected one of {', '.join(FORMATS)}.")
    digest = hashlib.sha256(data).hexdigest()
    existing = Document.objects.filter(content_hash=digest).first()
    if existing is not None:
        return Submitted(existing, created=False)
    safe_name = filename.replace("\\", "/").rsplit("/", 1)[-1][:200] or "upload.txt"
    with transaction.atomic():
        doc = Document(filename=safe_name, content_hash=digest, size=len(data), requested_format=requested_format)
        doc.file.save(f"{digest[:16]}-{safe_name}", ContentFile(data), save=False)
        doc.save()
    return Submitted(doc, created=True)


def document_process(document_id: int) -> Document:
    """Parse a stored document and write its entries. Safe to run again on the same document.

    1. Mark it processing. 2. Decode and parse it. 3. Create entries and occurrences in one
    transaction (a span already stored is skipped). 4. Embed them and update the index.
    5. Mark it done, or failed with the error.
    """
    doc = Document.objects.get(pk=document_id)
    if doc.status == Document.Status.DONE:
        return doc
    Document.objects.filter(pk=doc.pk).update(status=Document.Status.PROCESSING, error="")
    try:
        with doc.file.open("rb") as fh:
            text = decode_document(fh.read())
        fmt, candidates = parse_document(text, doc.requested_format)
        created = entries_create(
            [
                NewEntry(
                    title=c.title,
                    problem_text=c.problem_text,
                    remedy_markdown=c.remedy_markdown,
                    filename=doc.filename,
                    document_id=doc.pk,
                    line_start=c.line_start,
                    line_end=c.line_end,
                    problem_start=c.problem_start,
                    problem_end=c.problem_end,
                )
                for c in candidates
            ]
        )
        embedded = entries_embed([e.pk for e in created]) if created else 0
    except ParseError as exc:
        Document.objects.filter(pk=doc.pk).update(status=Document.Status.FAILED, error=str(exc))
        doc.refresh_from_db()
        return doc
    Document.objects.filter(pk=doc.pk).update(
        status=Document.Status.DONE,
        format=fmt,
        entries_parsed=len(candidates),
        entries_created=len(created),
        entries_embedded=embedded,
    )
    doc.refresh_from_db()
    logger.info("ingested %s: %d candidates, %d new entries", doc.filename, len(candidates), len(created))
    return doc


def document_mark_failed(document_id: int, error: str) -> None:
    Document.objects.filter(pk=document_id).exclude(status=Document.Status.DONE).update(
        status=Document.Status.FAILED, error=error[:2000]
    )
