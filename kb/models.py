"""The knowledge: entries (problem → remedy), where each was seen, and their embeddings."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class LiveEntryManager(models.Manager["Entry"]):
    """Entries that are not merged into another: what the wiki lists and triage ranks."""

    def get_queryset(self) -> models.QuerySet[Entry]:
        return super().get_queryset().filter(merged_into__isnull=True)


class Entry(models.Model):
    title = models.CharField(max_length=300)
    problem_excerpt = models.TextField(help_text="The log lines of the problem as first seen.")
    exc_type = models.CharField(max_length=200, blank=True)
    message = models.TextField(blank=True, help_text="Root error message with volatile parts masked.")
    raw_message = models.TextField(blank=True)
    frames = models.JSONField(default=list, blank=True, help_text="module:function, innermost first.")
    context = models.JSONField(default=list, blank=True, help_text="Secondary errors, masked.")
    kind = models.CharField(max_length=40, blank=True)
    pattern = models.CharField(max_length=60, blank=True)
    framework = models.CharField(max_length=60, blank=True)
    fingerprint = models.CharField(max_length=32, db_index=True)
    signature_text = models.TextField(help_text="The compact text that was embedded.")
    remedy_markdown = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Where the knowledge came from: the team's own documents and edits, or the starter pack.
    origin = models.CharField(max_length=10, default="team", db_index=True)
    pack_id = models.CharField(max_length=100, null=True, blank=True, unique=True)
    pack_version = models.PositiveIntegerField(default=0)
    pack_hash = models.CharField(max_length=40, blank=True, help_text="Title and remedy as the pack last wrote them.")
    references = models.JSONField(default=list, blank=True)
    pack_meta = models.JSONField(default=dict, blank=True, help_text="frameworks, versions, category, checked.")
    # A merged entry is kept (hidden) so the merge can be undone.
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    objects = LiveEntryManager()
    all_objects = models.Manager()

    class Meta:
        base_manager_name = "all_objects"
        ordering = ["-updated_at"]
        verbose_name_plural = "entries"
        # The ranking copy asks "was any entry changed since?" on every write, and the wiki lists
        # entries by last change.
        indexes = [models.Index(fields=["updated_at"], name="entry_updated_at")]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("kb:entry", args=[self.pk])

    @property
    def from_pack(self) -> bool:
        return self.origin == "pack"

    @property
    def needs_fix(self) -> bool:
        return not self.remedy_markdown.strip()


class Occurrence(models.Model):
    """One sighting of an entry's problem in an ingested document (its provenance)."""

    entry = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="occurrences")
    # The ingest app owns documents; kb keeps only their id and name so it imports nothing of it.
    document_id = models.PositiveBigIntegerField(null=True, blank=True, db_index=True)
    filename = models.CharField(max_length=500)
    line_start = models.PositiveIntegerField()
    line_end = models.PositiveIntegerField()
    problem_start = models.PositiveIntegerField()
    problem_end = models.PositiveIntegerField()
    remedy_markdown = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["document_id", "line_start"], name="occurrence_unique_span"),
        ]


class Embedding(models.Model):
    entry = models.OneToOneField(Entry, on_delete=models.CASCADE, primary_key=True, related_name="embedding")
    model_name = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    vector = models.BinaryField()
    text_sha1 = models.CharField(max_length=40)


class KbState(models.Model):
    """A single row whose version goes up on every write, so caches know when to reload."""

    version = models.PositiveBigIntegerField(default=0)
    # The stamp of the scanner that last read every entry (`entries_reread`): the same stamp again
    # means there is nothing to read again.
    reading = models.CharField(max_length=40, blank=True)

    @classmethod
    def bump(cls) -> None:
        """One more version; inside a transaction it also locks the row until commit, which
        serialises concurrent ingests."""
        updated = cls.objects.filter(pk=1).update(version=models.F("version") + 1)
        if not updated:
            cls.objects.get_or_create(pk=1, defaults={"version": 1})


class Merge(models.Model):
    """One merge of `source` into `target`, with what is needed to undo it."""

    target = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="merges_in")
    source = models.ForeignKey(Entry, on_delete=models.CASCADE, related_name="merges_out")
    occurrence_ids = models.JSONField(default=list)
    target_remedy_before = models.TextField(blank=True)
    target_remedy_after = models.TextField(blank=True)
    merged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    merged_at = models.DateTimeField(auto_now_add=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-merged_at"]
