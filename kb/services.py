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
from kb.signature import compact_text, signature_from_text
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


def entries_create(items: list[NewEntry]) -> list[Entry]:
    """Store entries with their signature and provenance, in one transaction.

    A pair already stored from the same document span is not stored again, so re-running an
    ingest changes nothing.
    """
    created: list[Entry] = []
    with transaction.atomic():
        for item in items:
            if (
                item.document_id is not None
                and Occurrence.objects.filter(document_id=item.document_id, line_start=item.line_start).exists()
            ):
                continue
            sig, _ = signature_from_text(item.problem_text)
            entry = Entry.objects.create(
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
                signature_text=compact_text(sig),
                remedy_markdown=item.remedy_markdown,
            )
            Occurrence.objects.create(
                entry=entry,
                document_id=item.document_id,
                filename=item.filename[:500],
                line_start=item.line_start,
                line_end=item.line_end,
                problem_start=item.problem_start,
                problem_end=item.problem_end,
                remedy_markdown=item.remedy_markdown,
            )
            created.append(entry)
        if created:
            kb_version_bump()
    return created


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


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
                Embedding.objects.update_or_create(
                    entry=entry,
                    defaults={
                        "model_name": embedder.name,
                        "dim": embedder.dim,
                        "vector": vec.astype(np.float32).tobytes(),
                        "text_sha1": _sha1(entry.signature_text),
                    },
                )
        meta = get_index().upsert([e.pk for e in todo], vectors, embedder.name, embedder.dim)
        if meta is None:
            index_rebuild(embed_missing=False)
        kb_version_bump()
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
    from kb.signature import signature_from_text

    sig, _ = signature_from_text(log)
    n_lines = max(1, len(log.splitlines()))
    created = entries_create(
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
    entries_embed([e.pk for e in created])
    return created[0]
