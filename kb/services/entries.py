"""Problems from documents stored as entries: grouped with the entries they repeat, or new."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import transaction

from kb.embedding import get_embedder
from kb.models import Embedding, Entry, KbState, Occurrence
from kb.services.vectors import embedding_new, entries_embed, index_add
from kb.signature import Signature, compact_text, signature_from_text

EXCERPT_LIMIT = 20_000


@dataclass(frozen=True)
class NewEntry:
    """A problem→fix pair to store, with where it came from."""

    title: str
    problem_text: str
    remedy_markdown: str
    filename: str
    document_id: int | None
    line_start: int
    line_end: int
    problem_start: int
    problem_end: int


@dataclass(frozen=True)
class Prepared:
    item: NewEntry
    sig: Signature
    text: str  # the compact signature text that is embedded


@dataclass(frozen=True)
class IngestOutcome:
    created: tuple[int, ...]  # new entry pks
    grouped: tuple[int, ...]  # existing entry pks that gained an occurrence
    embedded: int
    folded: int = 0  # problems that repeat an entry (stored before, or made from an earlier problem of the batch)


def entries_prepare(items: list[NewEntry]) -> list[Prepared]:
    """Signatures and embedding texts of new problems (pure computation, no writes)."""
    out = []
    for item in items:
        sig, _ = signature_from_text(item.problem_text)
        out.append(Prepared(item=item, sig=sig, text=compact_text(sig)))
    return out


def groups_with(sig: Signature, remedy: str, entry: Entry) -> bool:
    """Is this problem (with this remedy) another occurrence of the entry: the same fingerprint
    (exception and masked message) and, when both have frames, a shared frame near the raise. A
    problem told in words only repeats an entry only when its words and its fix are the entry's,
    whitespace aside (a notes heading with no log, in a revised copy of the notes): masking would
    merge "set it to 8" with "set it to 16", and two chats' "still the same error" are two
    problems."""
    if not sig.message or sig.fingerprint != entry.fingerprint:
        return False
    if sig.kind == "text":
        return _words(sig.raw_message) == _words(entry.raw_message) and _words(remedy) == _words(entry.remedy_markdown)
    return not sig.frames or not entry.frames or bool(set(sig.frames[:3]) & set(entry.frames[:3]))


def _words(text: str) -> str:
    return " ".join(text.split())


BATCH = 500


def _existing_spans(items: list[NewEntry]) -> set[tuple[int, int]]:
    """(document id, line_start) of the items' spans that are already stored."""
    doc_ids = {i.document_id for i in items if i.document_id is not None}
    if not doc_ids:
        return set()
    rows = Occurrence.objects.filter(document_id__in=doc_ids).values_list("document_id", "line_start")
    return {(int(doc), int(line)) for doc, line in rows if doc is not None}


def _entries_by_fingerprint(prepared: list[Prepared]) -> dict[tuple[str, str, str], list[Entry]]:
    """Existing entries that share a fingerprint with one of the new problems (read in batches)."""
    fps = sorted({p.sig.fingerprint for p in prepared if p.sig.message})
    out: dict[tuple[str, str, str], list[Entry]] = {}
    for k in range(0, len(fps), BATCH):
        for e in Entry.objects.filter(fingerprint__in=fps[k : k + BATCH]).exclude(origin="pack").order_by("pk"):
            out.setdefault((e.fingerprint, e.exc_type, e.pattern), []).append(e)
    return out


def entries_ingest(items: list[NewEntry]) -> IngestOutcome:
    """Store problems as entries (or as occurrences of entries they repeat), all or nothing.

    1. Skip spans already stored from the same document (re-running an ingest changes nothing).
    2. Compute signatures and embeddings before opening the transaction.
    3. In one transaction, under a lock on the kb version row: group each problem with a
       matching entry (stored, or new in this batch) or make it a new entry; write the new
       entries, their embeddings and every occurrence in bulk; bump the kb version.
    4. Add the new vectors to the FAISS index (a cache the database can rebuild).
    """
    stored = _existing_spans(items)
    fresh = [i for i in items if i.document_id is None or (i.document_id, i.line_start) not in stored]
    prepared = entries_prepare(fresh)
    embedder = get_embedder()
    vectors = embedder.encode([p.text for p in prepared]) if prepared else np.zeros((0, embedder.dim), np.float32)
    with transaction.atomic():
        KbState.bump()  # also takes the row lock that serialises concurrent ingests
        stored = _existing_spans(fresh)  # again, under the lock: another worker may have won
        known = _entries_by_fingerprint(prepared)
        new_entries: list[tuple[Entry, np.ndarray]] = []
        placed: list[tuple[NewEntry, Entry]] = []
        grouped: list[int] = []
        remedied: dict[int, Entry] = {}
        for p, vec in zip(prepared, vectors, strict=True):
            item = p.item
            if item.document_id is not None and (item.document_id, item.line_start) in stored:
                continue
            key = (p.sig.fingerprint, p.sig.exc_type[:200], p.sig.pattern)
            entry = next((e for e in known.get(key, ()) if groups_with(p.sig, item.remedy_markdown, e)), None)
            if entry is None:
                entry = _entry_new(p)
                new_entries.append((entry, vec))
                known.setdefault(key, []).append(entry)
            else:
                if entry.pk is not None:
                    grouped.append(entry.pk)
                if not entry.remedy_markdown.strip() and item.remedy_markdown.strip():
                    entry.remedy_markdown = item.remedy_markdown
                    if entry.pk is not None:
                        remedied[entry.pk] = entry
            placed.append((item, entry))
        Entry.objects.bulk_create([e for e, _ in new_entries], batch_size=BATCH)
        for entry in remedied.values():
            entry.save(update_fields=["remedy_markdown", "updated_at"])
        Embedding.objects.bulk_create([embedding_new(e, v) for e, v in new_entries], batch_size=BATCH)
        Occurrence.objects.bulk_create([_occurrence_new(e, i) for i, e in placed], batch_size=BATCH)
        if not placed:
            transaction.set_rollback(True)  # nothing changed: leave the version as it was
    created = [e for e, _ in new_entries]
    if created:
        # Written even if an outer transaction later rolls back: the index is a cache, and a
        # vector whose entry does not exist is ignored by triage (and dropped by rebuild_index).
        index_add([e.pk for e in created], np.vstack([v for _, v in new_entries]))
    return IngestOutcome(
        tuple(e.pk for e in created), tuple(dict.fromkeys(grouped)), len(created), folded=len(placed) - len(created)
    )


def entries_create_separate(items: list[NewEntry]) -> list[Entry]:
    """One new entry per item, never grouped with another (the starter pack's entries stay
    apart from each other and from the team's)."""
    prepared = entries_prepare(items)
    embedder = get_embedder()
    vectors = embedder.encode([p.text for p in prepared]) if prepared else np.zeros((0, embedder.dim), np.float32)
    with transaction.atomic():
        KbState.bump()
        entries = [_entry_new(p) for p in prepared]
        Entry.objects.bulk_create(entries, batch_size=BATCH)
        Embedding.objects.bulk_create(
            [embedding_new(e, v) for e, v in zip(entries, vectors, strict=True)], batch_size=BATCH
        )
        Occurrence.objects.bulk_create(
            [_occurrence_new(e, p.item) for e, p in zip(entries, prepared, strict=True)], batch_size=BATCH
        )
    if entries:
        index_add([e.pk for e in entries], vectors)
    return entries


# What an entry's stored reading is made of: all computed from its problem text by the scanner.
DERIVED_FIELDS = (
    "exc_type",
    "message",
    "raw_message",
    "frames",
    "context",
    "kind",
    "pattern",
    "framework",
    "fingerprint",
    "signature_text",
)


@dataclass(frozen=True)
class Reread:
    checked: int
    changed: tuple[int, ...]  # pks of the entries whose reading changed
    embedded: int


def entries_reread(stamp: str = "", only_if_changed: bool = False, batch: int = 500) -> Reread | None:
    """Read every entry's problem text again with the current scanner (after an upgrade that reads
    logs better) and store what changed: type, message, frames, fingerprint, the embedded text. The
    problem text, title, remedy and history stay as they are; a changed entry is embedded again.

    `stamp` names the scanner's version; with `only_if_changed`, nothing is read (None) when every
    entry was last read under the same stamp, as on every start of an unchanged install."""
    if only_if_changed and stamp and KbState.objects.filter(pk=1, reading=stamp).exists():
        return None
    changed: list[int] = []
    checked = 0
    pks = list(Entry.all_objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), batch):
        changed_before = len(changed)
        with transaction.atomic():
            for entry in Entry.all_objects.filter(pk__in=pks[start : start + batch]).select_for_update():
                if len(entry.problem_excerpt) >= EXCERPT_LIMIT:
                    continue  # stored cut short: its reading came from the whole text, which is gone
                checked += 1
                fresh = _reading_of(entry, entry.problem_excerpt)
                fields = [f for f in DERIVED_FIELDS if getattr(entry, f) != getattr(fresh, f)]
                if fields:
                    for f in fields:
                        setattr(entry, f, getattr(fresh, f))
                    entry.save(update_fields=[*fields, "updated_at"])
                    changed.append(entry.pk)
            if len(changed) > changed_before:
                KbState.bump()
    embedded = entries_embed(changed) if changed else 0
    if stamp and not KbState.objects.filter(pk=1).update(reading=stamp):
        KbState.objects.get_or_create(pk=1, defaults={"reading": stamp})
    return Reread(checked=checked, changed=tuple(changed), embedded=embedded)


def entry_problem_replace(entry: Entry, log: str) -> None:
    """A new problem text for an entry (the pack changed its report): new signature and vector."""
    fresh = _reading_of(entry, log)
    for field in ("problem_excerpt", *DERIVED_FIELDS):
        setattr(entry, field, getattr(fresh, field))
    entry.save()
    entries_embed([entry.pk])


def _reading_of(entry: Entry, problem_text: str) -> Entry:
    """An unsaved entry holding what this version reads from `problem_text` (for `entry`)."""
    return _entry_new(
        entries_prepare([NewEntry(entry.title, problem_text, entry.remedy_markdown, "", None, 1, 1, 1, 1)])[0]
    )


def _entry_new(p: Prepared) -> Entry:
    sig, item = p.sig, p.item
    return Entry(
        title=item.title[:300],
        problem_excerpt=item.problem_text[:EXCERPT_LIMIT],
        exc_type=sig.exc_type[:200],
        message=sig.message,
        raw_message=sig.raw_message,
        frames=list(sig.frames),
        context=list(sig.context),
        kind=sig.kind,
        pattern=sig.pattern,
        framework=sig.framework,
        fingerprint=sig.fingerprint,
        signature_text=p.text,
        remedy_markdown=item.remedy_markdown,
    )


def _occurrence_new(entry: Entry, item: NewEntry) -> Occurrence:
    return Occurrence(
        entry=entry,
        document_id=item.document_id,
        filename=item.filename[:500],
        line_start=item.line_start,
        line_end=item.line_end,
        problem_start=item.problem_start,
        problem_end=item.problem_end,
        remedy_markdown=item.remedy_markdown,
    )
