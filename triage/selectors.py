"""Reads of triage's own records: what the team said about a failure, and what keeps failing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from kb.models import Entry
from triage.models import Feedback, TriageRecord


def feedback_votes(fingerprint: str) -> dict[int, int]:
    """Net votes per entry for this failure: users who said it fixed it minus users who said it
    did not. One vote per user, entry and failure (a unique constraint), so one person cannot
    move the ranking more than one step."""
    rows = (
        Feedback.objects.filter(fingerprint=fingerprint)
        .values("entry_id")
        .annotate(up=Count("user", filter=Q(helpful=True)), down=Count("user", filter=Q(helpful=False)))
    )
    return {r["entry_id"]: r["up"] - r["down"] for r in rows if r["up"] != r["down"]}


def trends(days: int = 30) -> dict[str, object]:
    """The most matched entries and the latest unmatched failures over the last `days` days."""
    since = timezone.now() - timedelta(days=max(1, min(days, 3650)))
    recent = TriageRecord.objects.filter(created_at__gte=since)
    counts = list(
        recent.filter(verdict="match")
        .values("top_entry_id")
        .annotate(n=Count("id"))
        .order_by("-n", "top_entry_id")[:20]
    )
    titles = dict(Entry.objects.filter(pk__in=[c["top_entry_id"] for c in counts]).values_list("pk", "title"))
    unmatched: list[dict[str, Any]] = [
        dict(row)
        for row in recent.exclude(verdict="match")
        .values("fingerprint", "headline")
        .annotate(n=Count("id"))
        .order_by("-n")[:20]
    ]
    known = {
        fp: (pk, not remedy.strip())
        for fp, pk, remedy in Entry.objects.filter(fingerprint__in=[u["fingerprint"] for u in unmatched]).values_list(
            "fingerprint", "pk", "remedy_markdown"
        )
    }
    for u in unmatched:
        u["entry_id"], u["needs_fix"] = known.get(u["fingerprint"], (None, False))
    # Which jobs hit each known issue (CI hooks send their job name): the latest few.
    jobs: dict[int, list[str]] = {}
    for entry_id, context in (
        recent.filter(verdict="match", top_entry_id__in=list(titles))
        .order_by("-created_at")
        .values_list("top_entry_id", "context")[:2000]
    ):
        job = str((context or {}).get("job", ""))
        seen = jobs.setdefault(int(entry_id or 0), [])
        if job and job not in seen and len(seen) < 5:
            seen.append(job)
    return {
        "days": days,
        "total": recent.count(),
        "matched": [
            {
                "entry_id": c["top_entry_id"],
                "title": titles[c["top_entry_id"]],
                "n": c["n"],
                "jobs": jobs.get(c["top_entry_id"], []),
            }
            for c in counts
            if c["top_entry_id"] in titles
        ],
        "unmatched": unmatched,
    }


def triage_record_get(pk: int) -> TriageRecord | None:
    """One recorded triage, or None."""
    return TriageRecord.objects.filter(pk=pk).first()
