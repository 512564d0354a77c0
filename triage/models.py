"""Triage history: what was pasted and what Fixbase answered (for "what keeps failing")."""

from __future__ import annotations

from django.conf import settings
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


class Feedback(models.Model):
    """A user's word on a match: did this entry fix this failure? One per user, entry and
    failure (fingerprint), so one person cannot outvote the team by clicking twice."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    entry = models.ForeignKey("kb.Entry", on_delete=models.CASCADE, related_name="feedback")
    fingerprint = models.CharField(max_length=32, db_index=True)
    helpful = models.BooleanField()
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "entry", "fingerprint"], name="feedback_once")]
