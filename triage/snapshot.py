"""An in-memory view of the knowledge base for ranking, rebuilt when the kb version changes."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db import connection

from kb.embedding import get_embedder
from kb.models import Embedding, Entry
from kb.normalize import error_family, message_slots, tokenize
from kb.selectors import EntryRecord, entry_records, kb_version
from triage.corpus import Corpus, Doc, LayeredCorpus
from triage.lexical import RawLexicalIndex, raw_tokens
from triage.ranking import frame_tokens, message_tokens


@dataclass(frozen=True)
class Watermark:
    """Where a full build stopped: what later writes are compared with."""

    max_pk: int
    count: int  # entries with a pk up to max_pk
    updated: datetime | None  # the newest updated_at among them


@dataclass(frozen=True)
class Snapshot:
    version: int
    corpus: Corpus
    size: int  # entries in this copy (what an entry shows is read from the database when shown)
    vectors: np.ndarray  # one row per entry that has a vector of the current model
    vector_row: dict[int, int]  # entry pk -> its row in `vectors`
    watermark: Watermark | None = None
    base: Snapshot | None = None  # the full build that added entries are layered on
    added_vectors: dict[int, np.ndarray] = field(default_factory=dict)

    def vector(self, entry_id: int) -> np.ndarray | None:
        if entry_id in self.added_vectors:
            return self.added_vectors[entry_id]
        row = self.vector_row.get(entry_id)
        return None if row is None else self.vectors[row]


def doc_of(rec: EntryRecord) -> Doc:
    msg = message_tokens(rec.message, rec.raw_message)
    ctx = tuple(t for c in rec.context for t in tokenize(c))
    text = tuple(
        list(msg)
        + list(ctx)
        + frame_tokens(rec.frames[:8])
        + tokenize(rec.title)
        + tokenize(rec.remedy_markdown[:1500])
    )
    return Doc(
        id=rec.id,
        exc_type=rec.exc_type,
        pattern=rec.pattern,
        kind=rec.kind,
        fingerprint=rec.fingerprint,
        framework=rec.framework,
        frames=rec.frames,
        msg_tokens=msg,
        ctx_tokens=ctx,
        text_tokens=text,
        family=error_family(rec.message),
        origin=rec.origin,
        has_fix=bool(rec.remedy_markdown.strip()),
        slots=message_slots(rec.raw_message),
    )


_lock = threading.Lock()
_current: Snapshot | None = None
_building = threading.Event()  # a background rebuild is under way
# Tokenising is most of a rebuild: an entry that did not change since (same pk and updated_at)
# keeps its tokens. Tokens are interned, so the many entries that share a word share its string.
_tokens: dict[int, tuple[datetime | None, Doc, list[str]]] = {}


def _interned(doc: Doc) -> Doc:
    return replace(
        doc,
        msg_tokens=tuple(map(sys.intern, doc.msg_tokens)),
        ctx_tokens=tuple(map(sys.intern, doc.ctx_tokens)),
        text_tokens=tuple(map(sys.intern, doc.text_tokens)),
        frames=tuple(map(sys.intern, doc.frames)),
    )


def _docs_of(records: dict[int, EntryRecord], forget_others: bool = True) -> tuple[list[Doc], list[list[str]]]:
    docs: list[Doc] = []
    raw: list[list[str]] = []
    for pk, rec in records.items():
        cached = _tokens.get(pk)
        if cached is None or cached[0] != rec.updated_at:
            tokens = [sys.intern(t) for t in raw_tokens(rec.problem_excerpt)]
            cached = (rec.updated_at, _interned(doc_of(rec)), tokens)
            _tokens[pk] = cached
        docs.append(cached[1])
        raw.append(cached[2])
    if forget_others:
        for pk in set(_tokens) - set(records):
            del _tokens[pk]
    return docs, raw


def _build(version: int) -> Snapshot:
    """1. Read every entry as a row; 2. tokenise the ones that changed; 3. build the indexes.
    The records are not kept: what a shown entry says is read when it is shown."""
    records = {r.id: r for r in entry_records()}
    name = get_embedder().name
    rows = Embedding.objects.filter(model_name=name, entry__merged_into__isnull=True).values_list(
        "entry_id", "vector", "dim"
    )
    vector_row: dict[int, int] = {}
    chunks: list[bytes] = []
    dim = get_embedder().dim
    for pk, vec, vec_dim in rows.iterator(chunk_size=2000):
        if vec_dim == dim:
            vector_row[pk] = len(chunks)
            chunks.append(bytes(vec))
    vectors = np.frombuffer(b"".join(chunks), dtype=np.float32).reshape(len(chunks), dim)
    docs, raw = _docs_of(records)
    updated = max((r.updated_at for r in records.values() if r.updated_at is not None), default=None)
    return Snapshot(
        version=version,
        corpus=Corpus(docs, raw=RawLexicalIndex(list(records), raw)),
        size=len(records),
        vectors=vectors,
        vector_row=vector_row,
        watermark=Watermark(max(records, default=0), len(records), updated),
    )


LAYER_LIMIT = 5000  # entries added since the full build that are layered on it; past this, rebuild


def _extend(snap: Snapshot, version: int) -> Snapshot | None:
    """The full build `snap` stands on, plus the entries added since, layered on it.

    1. Give up (None: rebuild) if an entry of the full build was edited or deleted since, or
       too many were added.
    2. Read the added entries, and the entries of the full build that gained an occurrence.
    3. Layer the added entries' small indexes on the full build's (`LayeredCorpus`)."""
    base = snap.base or snap
    w = base.watermark
    if w is None:
        return None
    old = Entry.objects.filter(pk__lte=w.max_pk)
    if old.count() != w.count or (w.updated is not None and old.filter(updated_at__gt=w.updated).exists()):
        return None
    added = {r.id: r for r in entry_records(after_pk=w.max_pk)}
    if len(added) > LAYER_LIMIT:
        return None
    docs, raw = _docs_of(added, forget_others=False)
    name, dim = get_embedder().name, get_embedder().dim
    added_vectors = {
        pk: np.frombuffer(bytes(vec), dtype=np.float32)
        for pk, vec in Embedding.objects.filter(entry_id__in=list(added), model_name=name, dim=dim).values_list(
            "entry_id", "vector"
        )
    }
    return replace(
        base,
        version=version,
        corpus=LayeredCorpus(base.corpus, docs, raw),
        size=base.size + len(added),
        base=base,
        added_vectors=added_vectors,
    )


def _rebuild_in_background() -> None:
    global _current
    try:
        with _lock:
            version = kb_version()
            if _current is None or _current.version != version:
                _current = _build(version)
    finally:
        connection.close()  # this thread's own database connection
        _building.clear()


def get_snapshot() -> Snapshot:
    """The ranking copy of the knowledge base at its current version.

    A small knowledge base is rebuilt on the spot, so an entry is triaged the moment it is
    written. Above `FIXBASE_SYNC_REBUILD_ENTRIES` entries a rebuild takes seconds, so entries
    added since the last full build are layered on it at once (`_extend`); when that does not
    apply (an entry was edited or deleted, or many were added) the previous copy keeps
    answering while a background thread builds the new one."""
    global _current
    version = kb_version()
    snap = _current
    if snap is not None and snap.version == version:
        return snap
    if snap is not None and snap.size > settings.FIXBASE_SYNC_REBUILD_ENTRIES:
        with _lock:
            if _current is not None and _current.version == version:
                return _current
            layered = _extend(_current or snap, version)
            if layered is not None:
                _current = layered
                return layered
        if not _building.is_set():
            _building.set()
            threading.Thread(target=_rebuild_in_background, name="fixbase-snapshot", daemon=True).start()
        return snap
    with _lock:
        if _current is None or _current.version != version:
            _current = _build(version)
        return _current
