"""Uploaded documents and their ingest status."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


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
    entries_grouped = models.PositiveIntegerField(default=0, help_text="Problems added to an existing entry.")
    secrets_redacted = models.PositiveIntegerField(default=0)
    undecodable_bytes = models.PositiveBigIntegerField(
        default=0, help_text="Bytes the detected encoding could not decode; the original is kept beside the text."
    )
    bytes_scanned = models.PositiveBigIntegerField(default=0)
    claimed_by = models.CharField(max_length=200, blank=True, help_text="Worker processing it.")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

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
