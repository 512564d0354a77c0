"""Entries' vectors and the FAISS index: the database holds the vectors, the index is their cache."""

from __future__ import annotations

import hashlib
import logging

import numpy as np
from django.db import transaction

from kb.embedding import get_embedder
from kb.models import Embedding, Entry, KbState
from kb.vector_index import IndexMeta, get_index

logger = logging.getLogger("fixbase.kb")


def index_add(ids: list[int], vectors: np.ndarray) -> None:
    """Add or replace vectors in the FAISS index; an index of another model or size is rebuilt."""
    embedder = get_embedder()
    if get_index().upsert(ids, vectors, embedder.name, embedder.dim) is None:
        index_rebuild(embed_missing=False)


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def embedding_new(entry: Entry, vector: np.ndarray) -> Embedding:
    """An unsaved vector row for `entry` (ingest creates them in bulk)."""
    embedder = get_embedder()
    return Embedding(
        entry=entry,
        model_name=embedder.name,
        dim=embedder.dim,
        vector=vector.astype(np.float32).tobytes(),
        text_sha1=_sha1(entry.signature_text),
    )


def embedding_save(entry: Entry, vector: np.ndarray) -> None:
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
                embedding_save(entry, vec)
            KbState.bump()
        index_add([e.pk for e in todo], vectors)
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
