"""Writes to the knowledge base. Every other app writes kb only through these functions."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import F

from kb.embedding import get_embedder
from kb.models import Embedding, Entry, KbState, Occurrence
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


def entry_group_for(sig: Signature) -> Entry | None:
    """An existing entry this problem is another occurrence of: the same fingerprint (exception
    and masked message) and, when both have frames, a shared frame near the raise."""
    if sig.kind == "text" or not sig.message:
        return None
    for entry in Entry.objects.filter(fingerprint=sig.fingerprint, exc_type=sig.exc_type[:200], pattern=sig.pattern):
        if not sig.frames or not entry.frames or set(sig.frames[:3]) & set(entry.frames[:3]):
            return entry
    return None


def entries_ingest(items: list[NewEntry]) -> IngestOutcome:
    """Store problems as entries (or as occurrences of entries they repeat), all or nothing.

    1. Skip spans already stored from the same document (re-running an ingest changes nothing).
    2. Compute signatures and embeddings before opening the transaction.
    3. In one transaction: group each problem with a matching entry or create a new entry with
       its occurrence and embedding; bump the kb version.
    4. Add the new vectors to the FAISS index (a cache the database can rebuild).
    """
    fresh = [
        i
        for i in items
        if i.document_id is None
        or not Occurrence.objects.filter(document_id=i.document_id, line_start=i.line_start).exists()
    ]
    prepared = entries_prepare(fresh)
    embedder = get_embedder()
    vectors = embedder.encode([p.text for p in prepared]) if prepared else np.zeros((0, embedder.dim), np.float32)
    created: list[Entry] = []
    created_vectors: list[np.ndarray] = []
    grouped: list[int] = []
    with transaction.atomic():
        for p, vec in zip(prepared, vectors, strict=True):
            item = p.item
            if (
                item.document_id is not None
                and Occurrence.objects.filter(document_id=item.document_id, line_start=item.line_start).exists()
            ):
                continue
            entry = entry_group_for(p.sig)
            if entry is not None:
                if not entry.remedy_markdown.strip() and item.remedy_markdown.strip():
                    entry.remedy_markdown = item.remedy_markdown
                    entry.save(update_fields=["remedy_markdown", "updated_at"])
                grouped.append(entry.pk)
            else:
                entry = _entry_create(p)
                _embedding_save(entry, vec)
                created.append(entry)
                created_vectors.append(vec)
            _occurrence_create(entry, item)
        if created or grouped:
            kb_version_bump()
    if created:
        # Written even if an outer transaction later rolls back: the index is a cache, and a
        # vector whose entry does not exist is ignored by triage (and dropped by rebuild_index).
        _index_add([e.pk for e in created], np.vstack(created_vectors))
    return IngestOutcome(tuple(e.pk for e in created), tuple(grouped), len(created))


def _entry_create(p: Prepared) -> Entry:
    sig, item = p.sig, p.item
    return Entry.objects.create(
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


def _occurrence_create(entry: Entry, item: NewEntry) -> Occurrence:
    return Occurrence.objects.create(
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
    rows = list(Embedding.objects.filter(model_name=embedder.name).values_list("entry_id", "vector"))
    ids = [pk for pk, _ in rows]
    vectors = (
        np.vstack([np.frombuffer(bytes(v), dtype=np.float32) for _, v in rows])
        if rows
        else np.zeros((0, embedder.dim), dtype=np.float32)
    )
    meta = get_index().rebuild(ids, vectors, embedder.name, embedder.dim)
    logger.info("rebuilt index: %d vectors, version %d", meta.count, meta.version)
    return meta


def entry_update(entry: Entry, *, title: str, remedy_markdown: str) -> Entry:
    entry.title = title.strip()[:300] or entry.title
    entry.remedy_markdown = remedy_markdown
    entry.save(update_fields=["title", "remedy_markdown", "updated_at"])
    kb_version_bump()
    return entry


def entry_create_from_paste(log: str, title: str = "") -> Entry:
    """A pasted log with no known match becomes a "needs a fix" entry the team fills in later."""
    log = redact(log).text
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
    return Entry.objects.get(pk=(outcome.created or outcome.grouped)[0])


def entry_merge(target: Entry, source: Entry) -> Entry:
    """Fold `source` into `target`: its occurrences move over, its remedy is kept if the target
    has none (otherwise appended under a heading), and `source` disappears from the index."""
    if target.pk == source.pk:
        raise ValueError("An entry cannot be merged into itself.")
    with transaction.atomic():
        Occurrence.objects.filter(entry=source).update(entry=target)
        extra = source.remedy_markdown.strip()
        if extra and extra not in target.remedy_markdown:
            target.remedy_markdown = (
                f"{target.remedy_markdown.rstrip()}\n\n### Also (from “{source.title}”)\n\n{extra}"
                if target.remedy_markdown.strip()
                else extra
            )
            target.save(update_fields=["remedy_markdown", "updated_at"])
        source_pk = source.pk
        source.delete()
        kb_version_bump()
    get_index().remove([source_pk])
    return target
