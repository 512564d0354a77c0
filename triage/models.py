"""Triage history: what was pasted and what Fixbase answered (for "what keeps failing")."""

from __future__ import annotations

from django.db import models


class TriageRecord(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=20)  # "web", "api", "cli"
    verdict = models.CharField(max_length=20)
    top_entry_id = models.PositiveBigIntegerField(null=True, blank=True)
    top_score = models.FloatField(null=True, blank=True)
    fingerprint = models.CharField(max_length=32, db_index=True)
    headline = models.CharField(max_length=300)

    class Meta:
        ordering = ["-created_at"]
