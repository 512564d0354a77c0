"""Triage history: what was pasted and what Fixbase answered (for "what keeps failing")."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TriageRecord(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=20)  # "web", "api", "cli"
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # What a CI hook said of the failing job: job, url, commit, framework, cluster.
    context = models.JSONField(default=dict, blank=True)
    log = models.TextField(blank=True, help_text="The posted log, secrets redacted (API triages only).")
    top_k = models.PositiveSmallIntegerField(default=5)
    verdict = models.CharField(max_length=20)
    top_entry_id = models.PositiveBigIntegerField(null=True, blank=True)
    top_score = models.FloatField(null=True, blank=True)
    fingerprint = models.CharField(max_length=32, db_index=True)
    headline = models.CharField(max_length=300)
    # The entries this triage showed, best first: feedback is taken on these only. None on a row
    # recorded before the field existed (then only its top entry is known).
    entry_ids = models.JSONField(default=None, null=True, blank=True)

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


class ApiToken(models.Model):
    """A user's API token. Only a hash of the key is stored; the key is shown once, when made.

    Scopes: `triage` (post logs, give feedback, read) for CI hooks; `write` (also add, edit and
    merge entries, upload and delete documents) for curators, and only for editors' tokens."""

    SCOPES = ("triage", "write")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.CharField(max_length=40, default="triage")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes.split(",")
