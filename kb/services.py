"""Writes to the knowledge base. Every other app writes kb only through these functions."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import reversion
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from reversion.models import Version

from kb.embedding import get_embedder
from kb.models import Embedding, Entry, KbState, Merge, Occurrence
from kb.redact import redact
from kb.signature import Signature, compact_text, signature_from_text
from kb.vector_index import IndexMeta, get_index

logger = logging.getLogger("fixbase.kb")

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


def kb_version_bump() -> None:
    updated = KbState.objects.filter(pk=1).update(version=F("version") + 1)
    if not updated:
        KbState.objects.get_or_create(pk=1, defaults={"version": 1})


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


def entries_prepare(items: list[NewEntry]) -> list[Prepared]:
    """Signatures and embedding texts of new problems (pure computation, no writes)."""
    out = []
    for item in items:
        sig, _ = signature_from_text(item.problem_text)
        out.append(Prepared(item=item, sig=sig, text=compact_text(sig)))
    return out


def groups_with(sig: Signature, entry_fingerprint: str, entry_frames: list[str] | tuple[str, ...]) -> bool:
    """Is this problem another occurrence of the entry: the same fingerprint (exception and
    masked message) and, when both have frames, a shared frame near the raise."""
    if sig.kind == "text" or not sig.message or sig.fingerprint != entry_fingerprint:
        return False
    return not sig.frames or not entry_frames or bool(set(sig.frames[:3]) & set(entry_frames[:3]))


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
    fps = sorted({p.sig.fingerprint for p in prepared if p.sig.kind != "text" and p.sig.message})
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
        kb_version_bump()  # also takes the row lock that serialises concurrent ingests
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
            entry = next((e for e in known.get(key, ()) if groups_with(p.sig, e.fingerprint, e.frames)), None)
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
        Embedding.objects.bulk_create([_embedding_new(e, v) for e, v in new_entries], batch_size=BATCH)
        Occurrence.objects.bulk_create([_occurrence_new(e, i) for i, e in placed], batch_size=BATCH)
        if not placed:
            transaction.set_rollback(True)  # nothing changed: leave the version as it was
    created = [e for e, _ in new_entries]
    if created:
        # Written even if an outer transaction later rolls back: the index is a cache, and a
        # vector whose entry does not exist is ignored by triage (and dropped by rebuild_index).
        _index_add([e.pk for e in created], np.vstack([v for _, v in new_entries]))
    return IngestOutcome(tuple(e.pk for e in created), tuple(dict.fromkeys(grouped)), len(created))


def entries_create_separate(items: list[NewEntry]) -> list[Entry]:
    """One new entry per item, never grouped with another (the starter pack's entries stay
    apart from each other and from the team's)."""
    prepared = entries_prepare(items)
    embedder = get_embedder()
    vectors = embedder.encode([p.text for p in prepared]) if prepared else np.zeros((0, embedder.dim), np.float32)
    with transaction.atomic():
        kb_version_bump()
        entries = [_entry_new(p) for p in prepared]
        Entry.objects.bulk_create(entries, batch_size=BATCH)
        Embedding.objects.bulk_create(
            [_embedding_new(e, v) for e, v in zip(entries, vectors, strict=True)], batch_size=BATCH
        )
        Occurrence.objects.bulk_create(
            [_occurrence_new(e, p.item) for e, p in zip(entries, prepared, strict=True)], batch_size=BATCH
        )
    if entries:
        _index_add([e.pk for e in entries], vectors)
    return entries


def entry_problem_replace(entry: Entry, log: str) -> None:
    """A new problem text for an entry (the pack changed its report): new signature and vector."""
    p = entries_prepare([NewEntry(entry.title, log, entry.remedy_markdown, "", None, 1, 1, 1, 1)])[0]
    fresh = _entry_new(p)
    for field in (
        "problem_excerpt",
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
    ):
        setattr(entry, field, getattr(fresh, field))
    entry.save()
    entries_embed([entry.pk])


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


def _index_add(ids: list[int], vectors: np.ndarray) -> None:
    embedder = get_embedder()
    if get_index().upsert(ids, vectors, embedder.name, embedder.dim) is None:
        index_rebuild(embed_missing=False)


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _embedding_new(entry: Entry, vector: np.ndarray) -> Embedding:
    embedder = get_embedder()
    return Embedding(
        entry=entry,
        model_name=embedder.name,
        dim=embedder.dim,
        vector=vector.astype(np.float32).tobytes(),
        text_sha1=_sha1(entry.signature_text),
    )


def _embedding_save(entry: Entry, vector: np.ndarray) -> None:
    """Store an entry's vector with the model that made it and the hash of the embedded text."""
    embedder = get_embedder()
    Embedding.objects.update_or_create(
        entry=entry,
        defaults={
            "model_name": embedder.name,
            "dim": embedder.dim,
            "vector": vector.astype(np.float32).tobytes(),
            "text_sha1": _sha1(entry.signature_text),
        },
    )


def entries_embed(entry_ids: list[int] | None = None) -> int:
    """Embed entries whose vector is missing, stale or from another model; update the index.

    Returns how many entries were embedded.
    """
    embedder = get_embedder()
    qs = Entry.objects.all() if entry_ids is None else Entry.objects.filter(pk__in=entry_ids)
    todo: list[Entry] = []
    for entry in qs.select_related("embedding"):
        emb = getattr(entry, "embedding", None)
        if emb is None or emb.model_name != embedder.name or emb.text_sha1 != _sha1(entry.signature_text):
            todo.append(entry)
    if todo:
        vectors = embedder.encode([e.signature_text for e in todo])
        with transaction.atomic():
            for entry, vec in zip(todo, vectors, strict=True):
                _embedding_save(entry, vec)
            kb_version_bump()
        _index_add([e.pk for e in todo], vectors)
    elif get_index().meta() is None:
        index_rebuild(embed_missing=False)
    return len(todo)


def index_rebuild(embed_missing: bool = True) -> IndexMeta:
    """Recreate the FAISS file from the database (the source of truth)."""
    embedder = get_embedder()
    if embed_missing:
        entries_embed()
    rows = list(
        Embedding.objects.filter(model_name=embedder.name, entry__merged_into__isnull=True).values_list(
            "entry_id", "vector"
        )
    )
    ids = [pk for pk, _ in rows]
    vectors = (
        np.vstack([np.frombuffer(bytes(v), dtype=np.float32) for _, v in rows])
        if rows
        else np.zeros((0, embedder.dim), dtype=np.float32)
    )
    meta = get_index().rebuild(ids, vectors, embedder.name, embedder.dim)
    logger.info("rebuilt index: %d vectors, version %d", meta.count, meta.version)
    return meta


def _first_revision(entry: Entry) -> None:
    """An entry made by ingest has no revision yet: record it as it was, so the first edit can
    be reverted."""
    if not Version.objects.get_for_object(entry).exists():
        with reversion.create_revision():
            reversion.set_comment("as first recorded")
            reversion.add_to_revision(entry)


def entry_update(entry: Entry, *, title: str, remedy_markdown: str, user: Any = None, comment: str = "") -> Entry:
    """Change an entry's title and remedy; the change is a revision by `user`."""
    _first_revision(entry)
    title, remedy_markdown = title.replace("\x00", ""), remedy_markdown.replace("\x00", "")
    with transaction.atomic(), reversion.create_revision():
        entry.title = title.strip()[:300] or entry.title
        entry.remedy_markdown = remedy_markdown
        entry.save(update_fields=["title", "remedy_markdown", "updated_at"])
        reversion.set_user(user if user is not None and user.is_authenticated else None)
        reversion.set_comment(comment or "edited")
        kb_version_bump()
    return entry


def entry_revert(entry: Entry, version_id: int, user: Any = None) -> Entry:
    """Bring back an earlier revision's title and remedy, as a new revision."""
    version = Version.objects.get_for_object(entry).get(pk=version_id)
    fields = version.field_dict
    when = version.revision.date_created.strftime("%Y-%m-%d %H:%M")
    return entry_update(
        entry,
        title=str(fields.get("title", entry.title)),
        remedy_markdown=str(fields.get("remedy_markdown", "")),
        user=user,
        comment=f"reverted to the revision of {when}",
    )


def entry_create_from_paste(log: str, title: str = "", user: Any = None) -> Entry:
    """A pasted log with no known match becomes a "needs a fix" entry the team fills in later."""
    log = redact(log.replace("\x00", "")).text
    title = title.replace("\x00", "")
    sig, _ = signature_from_text(log)
    n_lines = max(1, len(log.splitlines()))
    outcome = entries_ingest(
        [
            NewEntry(
                title=title or sig.headline[:200] or "Pasted log",
                problem_text=log,
                remedy_markdown="",
                filename="pasted log",
                document_id=None,
                line_start=1,
                line_end=n_lines,
                problem_start=1,
                problem_end=n_lines,
            )
        ]
    )
    entry = Entry.objects.get(pk=(outcome.created or outcome.grouped)[0])
    if outcome.created and user is not None and user.is_authenticated:
        with reversion.create_revision():
            reversion.set_user(user)
            reversion.set_comment("added from a pasted log")
            reversion.add_to_revision(entry)
    return entry


def entry_merge(target: Entry, source: Entry, user: Any = None) -> Merge:
    """Fold `source` into `target`: its occurrences move over, its remedy is kept if the target
    has none (otherwise appended under a heading), and `source` is hidden from the wiki and the
    index. Nothing is deleted: `entry_unmerge` undoes it."""
    if target.pk == source.pk:
        raise ValueError("An entry cannot be merged into itself.")
    if target.merged_into_id or source.merged_into_id:
        raise ValueError("That entry was merged already.")
    _first_revision(target)
    who = user if user is not None and user.is_authenticated else None
    with transaction.atomic(), reversion.create_revision():
        moved = list(Occurrence.objects.filter(entry=source).values_list("pk", flat=True))
        Occurrence.objects.filter(pk__in=moved).update(entry=target)
        before = target.remedy_markdown
        extra = source.remedy_markdown.strip()
        if extra and extra not in target.remedy_markdown:
            target.remedy_markdown = (
                f"{target.remedy_markdown.rstrip()}\n\n### Also (from “{source.title}”)\n\n{extra}"
                if target.remedy_markdown.strip()
                else extra
            )
        target.save(update_fields=["remedy_markdown", "updated_at"])
        source.merged_into = target
        source.save(update_fields=["merged_into", "updated_at"])
        reversion.set_user(who)
        reversion.set_comment(f"merged #{source.pk} “{source.title[:80]}” into #{target.pk}")
        merge = Merge.objects.create(
            target=target,
            source=source,
            occurrence_ids=moved,
            target_remedy_before=before,
            target_remedy_after=target.remedy_markdown,
            merged_by=who,
        )
        kb_version_bump()
    get_index().remove([source.pk])
    return merge


def entry_unmerge(merge: Merge, user: Any = None) -> Entry:
    """Undo a merge: the source entry comes back with its occurrences, and the target's remedy
    goes back to what it was if nobody edited it since."""
    if merge.undone_at is not None:
        raise ValueError("That merge was undone already.")
    who = user if user is not None and user.is_authenticated else None
    source = Entry.all_objects.get(pk=merge.source_id)
    target = Entry.all_objects.get(pk=merge.target_id)
    with transaction.atomic(), reversion.create_revision():
        Occurrence.objects.filter(pk__in=merge.occurrence_ids, entry=target).update(entry=source)
        if target.remedy_markdown == merge.target_remedy_after:
            target.remedy_markdown = merge.target_remedy_before
        target.save(update_fields=["remedy_markdown", "updated_at"])
        source.merged_into = None
        source.save(update_fields=["merged_into", "updated_at"])
        reversion.set_user(who)
        reversion.set_comment(f"undid the merge of #{source.pk} into #{target.pk}")
        merge.undone_at = timezone.now()
        merge.undone_by = who
        merge.save(update_fields=["undone_at", "undone_by"])
        kb_version_bump()
    emb = Embedding.objects.filter(entry=source, model_name=get_embedder().name).first()
    if emb is not None:
        _index_add([source.pk], np.frombuffer(bytes(emb.vector), dtype=np.float32).reshape(1, -1))
    else:
        entries_embed([source.pk])
    return source
