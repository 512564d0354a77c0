"""Uploaded documents and their ingest status."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone


class DocumentQuerySet(models.QuerySet["Document"]):
    """A document's status changes, each one conditional UPDATE over the documents selected."""

    def claim(self, worker: str) -> int:
        """Processing by `worker`, with a heartbeat; a document already done is left alone."""
        return self.exclude(status=Document.Status.DONE).update(
            status=Document.Status.PROCESSING, error="", claimed_by=worker, heartbeat_at=timezone.now()
        )

    def mark_failed(self, error: str) -> int:
        return self.exclude(status=Document.Status.DONE).update(
            status=Document.Status.FAILED, error=error[:2000], claimed_by=""
        )

    def mark_done(self, **counts: Any) -> int:
        return self.update(status=Document.Status.DONE, claimed_by="", **counts)

    def requeue(self) -> int:
        return self.update(status=Document.Status.QUEUED, error="", claimed_by="")

    def heartbeat(self, bytes_scanned: int) -> int:
        return self.update(bytes_scanned=bytes_scanned, heartbeat_at=timezone.now())

    def processing(self) -> DocumentQuerySet:
        return self.filter(status=Document.Status.PROCESSING)

    def stale(self, before: datetime) -> DocumentQuerySet:
        """Processing, with no heartbeat since `before`: its worker is likely dead."""
        return self.processing().filter(heartbeat_at__lt=before)

    def waiting(self, before: datetime) -> DocumentQuerySet:
        """Queued and untouched since `before`: its task was likely lost."""
        return self.filter(status=Document.Status.QUEUED, updated_at__lt=before)


class Document(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        PROCESSING = "processing"
        DONE = "done"
        FAILED = "failed"

    filename = models.CharField(max_length=500)
    content_hash = models.CharField(max_length=64, unique=True)
    size = models.PositiveBigIntegerField()
    file = models.FileField(upload_to="documents/")
    format = models.CharField(max_length=40, blank=True, help_text="Detected or chosen on upload.")
    requested_format = models.CharField(max_length=40, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    entries_parsed = models.PositiveIntegerField(default=0)
    entries_created = models.PositiveIntegerField(default=0)
    entries_embedded = models.PositiveIntegerField(default=0)
    entries_grouped = models.PositiveIntegerField(
        default=0,
        help_text="Problems that repeat an entry: one stored before, or one an earlier problem of the document made.",
    )
    secrets_redacted = models.PositiveIntegerField(default=0)
    undecodable_bytes = models.PositiveBigIntegerField(
        default=0, help_text="Bytes the detected encoding could not decode; the original is kept beside the text."
    )
    bytes_scanned = models.PositiveBigIntegerField(default=0)
    reading = models.CharField(
        max_length=40, blank=True, help_text="Which version of the parsers read it (ingest.reading.parser_reading)."
    )
    claimed_by = models.CharField(max_length=200, blank=True, help_text="Worker processing it.")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.filename

    @property
    def original_path(self) -> str:
        """The upload's own bytes (secrets redacted), kept when decoding it lost something."""
        return f"{self.file.path}.orig"

    def get_absolute_url(self) -> str:
        return reverse("ingest:document", args=[self.pk])
