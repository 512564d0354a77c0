"""An in-memory view of the knowledge base for ranking, rebuilt when the kb version changes."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from kb.embedding import get_embedder
from kb.models import Embedding
from kb.normalize import error_family, tokenize
from kb.selectors import EntryRecord, entry_records, kb_version
from triage.lexical import RawLexicalIndex, raw_tokens
from triage.ranking import Corpus, Doc, frame_tokens, message_tokens


@dataclass(frozen=True)
class Snapshot:
    version: int
    corpus: Corpus
    records: dict[int, EntryRecord]
    vectors: dict[int, np.ndarray]


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
    )


_lock = threading.Lock()
_current: Snapshot | None = None
# Tokenising is most of a rebuild: an entry that did not change keeps its tokens.
_tokens: dict[int, tuple[EntryRecord, Doc, list[str]]] = {}


def _docs_of(records: dict[int, EntryRecord]) -> tuple[list[Doc], list[list[str]]]:
    docs: list[Doc] = []
    raw: list[list[str]] = []
    for pk, rec in records.items():
        cached = _tokens.get(pk)
        if cached is None or cached[0] != rec:
            cached = (rec, doc_of(rec), raw_tokens(rec.problem_excerpt))
            _tokens[pk] = cached
        docs.append(cached[1])
        raw.append(cached[2])
    for pk in set(_tokens) - set(records):
        del _tokens[pk]
    return docs, raw


def get_snapshot() -> Snapshot:
    global _current
    version = kb_version()
    snap = _current
    if snap is not None and snap.version == version:
        return snap
    with _lock:
        if _current is not None and _current.version == version:
            return _current
        records = {r.id: r for r in entry_records()}
        name = get_embedder().name
        vectors = {
            pk: np.frombuffer(bytes(vec), dtype=np.float32)
            for pk, vec in Embedding.objects.filter(model_name=name).values_list("entry_id", "vector")
        }
        docs, raw = _docs_of(records)
        _current = Snapshot(
            version=version,
            corpus=Corpus(docs, raw=RawLexicalIndex(list(records), raw)),
            records=records,
            vectors=vectors,
        )
        return _current
