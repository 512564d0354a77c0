"""Reads of the knowledge base, shaped for triage and the wiki pages."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from kb.models import Entry, KbState, Occurrence


@dataclass(frozen=True)
class SourceRef:
    """Where an entry was seen: the file and lines, and the fix given there (a triage match shows it)."""

    filename: str
    line_start: int
    line_end: int
    document_id: int | None
    remedy_markdown: str = ""


@dataclass(frozen=True)
class EntryRecord:
    """What ranking needs to know of an entry, without the ORM."""

    id: int
    title: str
    exc_type: str
    message: str
    raw_message: str
    frames: tuple[str, ...]
    context: tuple[str, ...]
    framework: str
    fingerprint: str
    kind: str
    pattern: str
    problem_excerpt: str
    remedy_markdown: str
    sources: tuple[SourceRef, ...]
    updated_at: datetime | None = None  # when the entry last changed (its tokens are cached by it)
    origin: str = "team"  # "team" or "pack" (the starter pack)
    references: tuple[str, ...] = ()


def kb_version() -> int:
    row = KbState.objects.filter(pk=1).values_list("version", flat=True).first()
    return int(row or 0)


_RECORD_FIELDS: tuple[str, ...] = (
    "pk",
    "title",
    "exc_type",
    "message",
    "raw_message",
    "frames",
    "context",
    "framework",
    "fingerprint",
    "kind",
    "pattern",
    "remedy_markdown",
    "updated_at",
    "origin",
    "references",
)


def _record(row: tuple[Any, ...], fields: tuple[str, ...], sources: tuple[SourceRef, ...] = ()) -> EntryRecord:
    e = dict(zip(fields, row, strict=True))
    return EntryRecord(
        id=e["pk"],
        title=e["title"],
        exc_type=e["exc_type"],
        message=e["message"],
        raw_message=e["raw_message"],
        frames=tuple(e["frames"]),
        context=tuple(e["context"]),
        framework=e["framework"],
        fingerprint=e["fingerprint"],
        kind=e["kind"],
        pattern=e["pattern"],
        problem_excerpt=e.get("problem_excerpt", ""),
        remedy_markdown=e["remedy_markdown"],
        sources=sources,
        updated_at=e["updated_at"],
        origin=e["origin"],
        references=tuple(e["references"] or ()),
    )


def entry_records(
    after_pk: int | None = None, pks: Iterable[int] | None = None, with_problem: bool = True
) -> list[EntryRecord]:
    """Every entry as ranking sees it; or those with a pk above `after_pk`; or those in `pks`.
    `with_problem=False` leaves out the problem text (the largest field) when it is not needed."""
    entries = Entry.objects.order_by("pk")
    occurrences = Occurrence.objects.order_by("pk")
    if after_pk is not None:
        entries, occurrences = entries.filter(pk__gt=after_pk), occurrences.filter(entry_id__gt=after_pk)
    if pks is not None:
        wanted = list(pks)
        entries, occurrences = entries.filter(pk__in=wanted), occurrences.filter(entry_id__in=wanted)
    sources: dict[int, list[SourceRef]] = {}
    for occ in occurrences.values("entry_id", "filename", "line_start", "line_end", "document_id", "remedy_markdown"):
        sources.setdefault(occ["entry_id"], []).append(
            SourceRef(occ["filename"], occ["line_start"], occ["line_end"], occ["document_id"], occ["remedy_markdown"])
        )
    fields = (*_RECORD_FIELDS, "problem_excerpt") if with_problem else _RECORD_FIELDS
    return [_record(row, fields, tuple(sources.get(row[0], ()))) for row in entries.values_list(*fields)]


def entry_records_stream(
    after_pk: int | None = None, pks: Collection[int] | None = None, chunk_size: int = 2000
) -> Iterator[EntryRecord]:
    """Every entry (or those with a pk above `after_pk`, or those of `pks` that are live) in pk
    order, read `chunk_size` rows at a time and without their sources: what building the ranking
    copy needs, never all rows at once."""
    entries = Entry.objects.order_by("pk")
    if after_pk is not None:
        entries = entries.filter(pk__gt=after_pk)
    if pks is not None:
        entries = entries.filter(pk__in=list(pks))
    fields = (*_RECORD_FIELDS, "problem_excerpt")
    for row in entries.values_list(*fields).iterator(chunk_size=chunk_size):
        yield _record(row, fields)


def entry_list(query: str = "", framework: str = "", needs_fix: bool | None = None, kind: str = "") -> QuerySet[Entry]:
    qs = Entry.objects.annotate(n_occurrences=Count("occurrences"))
    for word in query.split()[:10]:  # every word, each in the title, the error or the remedy
        qs = qs.filter(Q(title__icontains=word) | Q(remedy_markdown__icontains=word) | Q(message__icontains=word))
    if framework:
        qs = qs.filter(framework=framework)
    if kind:
        qs = qs.filter(kind=kind)
    if needs_fix is True:
        qs = qs.filter(remedy_markdown="")
    return qs.order_by("-n_occurrences", "-updated_at")


def entries_of_document(document_id: int) -> QuerySet[Entry]:
    """Entries with an occurrence in a document (new ones and ones it was grouped into)."""
    return Entry.objects.filter(occurrences__document_id=document_id).distinct().order_by("pk")
