"""An in-memory view of the knowledge base for ranking, rebuilt when the kb version changes.

The copy holds compact arrays (`triage.entry_table`), built from the database a chunk of rows at a
time; entries added since a full build are layered on it, so a write costs a small table, not a
rebuild. A large full build is also saved under the data directory (`FIXBASE_DATA_DIR/ranking`),
so the next process maps its arrays and layers what changed since instead of building it again."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

from kb.embedding import get_embedder
from kb.models import Embedding, Entry
from kb.normalize import error_family, message_slots, tokenize
from kb.selectors import EntryRecord, entry_records_stream, kb_version
from triage.corpus import Corpus, LayeredCorpus
from triage.entry_table import Doc, EntryTable, TableBuilder, table_load, table_save
from triage.lexical import ENTRY_READING, entry_raw_text, raw_tokens
from triage.ranking import frame_tokens, message_tokens

logger = logging.getLogger("fixbase.triage")


@dataclass(frozen=True)
class Watermark:
    """Where a full build stopped: what later writes are compared with."""

    max_pk: int
    count: int  # rows with a pk up to max_pk, merged entries included
    updated: datetime | None  # the newest updated_at among them


@dataclass(frozen=True)
class Snapshot:
    version: int
    corpus: Corpus
    size: int  # entries in this copy (what an entry shows is read from the database when shown)
    model_name: str = ""  # the embedder whose vectors dense similarity reads
    dim: int = 0
    watermark: Watermark | None = None
    base: Snapshot | None = None  # the full build that added entries are layered on

    def vectors_of(self, entry_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these entries (of the current model), read from the database:
        the copy keeps no vectors (a million of them would be 1.5 GB in every process)."""
        ids = [int(i) for i in entry_ids]
        if not ids:
            return {}
        # One plain query: the ORM's own work would be most of the cost of ~90 rows read by pk.
        table = Embedding._meta.db_table
        marks = ", ".join(["%s"] * len(ids))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT entry_id, vector FROM {table} WHERE model_name = %s AND dim = %s AND entry_id IN ({marks})",  # noqa: S608 (names from the model, values as parameters)
                [self.model_name, self.dim, *ids],
            )
            return {pk: np.frombuffer(bytes(vec), dtype=np.float32) for pk, vec in cursor.fetchall()}

    def vector(self, entry_id: int) -> np.ndarray | None:
        return self.vectors_of([entry_id]).get(entry_id)


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
# Tokenising is most of a layering: an added entry that did not change since (same pk and
# updated_at) keeps its tokens until the next full build takes it in.
_added_tokens: dict[int, tuple[datetime | None, Doc, list[str]]] = {}


def _table_of(
    records: Iterable[EntryRecord], cache: dict[int, tuple[datetime | None, Doc, list[str]]] | None
) -> tuple[EntryTable, Watermark]:
    """The records (in pk order) as one table, and where they stop."""
    builder = TableBuilder()
    max_pk, updated = 0, None
    for rec in records:
        cached = cache.get(rec.id) if cache is not None else None
        if cached is None or cached[0] != rec.updated_at:
            cached = (rec.updated_at, doc_of(rec), raw_tokens(entry_raw_text(rec.problem_excerpt)))
            if cache is not None:
                cache[rec.id] = cached
        builder.add(cached[1], cached[2])
        max_pk = rec.id
        if rec.updated_at is not None and (updated is None or rec.updated_at > updated):
            updated = rec.updated_at
    return builder.build(), Watermark(max_pk, 0, updated)


def _build(version: int, from_disk: bool = False) -> Snapshot:
    """0. With `from_disk` (a process's first build), the saved full build if it is still good
    for the database, with what was added since layered on it;
    1. Read the entries a chunk of rows at a time, tokenise each into the table's arrays (no
    row or Python object per entry is kept); 2. build the indexes; 3. note where the build
    stopped; 4. save it when it is large. What a shown entry says, and its vector, are read
    when needed."""
    if from_disk:
        saved = _load_saved(version)
        if saved is not None:
            return saved
    table, mark = _table_of(entry_records_stream(), None)
    count = Entry.all_objects.filter(pk__lte=mark.max_pk).count()
    embedder = get_embedder()
    snap = Snapshot(
        version=version,
        corpus=Corpus([table]),
        size=len(table),
        model_name=embedder.name,
        dim=embedder.dim,
        watermark=replace(mark, count=count),
    )
    if len(table) >= settings.FIXBASE_SAVE_COPY_ENTRIES:
        _save(table, snap.watermark)
    return snap


def _saved_root() -> Path:
    return Path(settings.FIXBASE_RANKING_COPY_DIR)


def _database() -> str:
    """Which database a saved build was made from (the data directory may outlive it)."""
    db = connection.settings_dict
    return f"{db['ENGINE']}|{db.get('HOST') or ''}|{db.get('PORT') or ''}|{db['NAME']}"


def _save(table: EntryTable, mark: Watermark | None) -> None:
    """Write the full build next to the FAISS file: into a fresh folder, renamed into place, then
    the older ones removed (a process still mapping one keeps its pages until it lets go)."""
    if mark is None:
        return
    root = _saved_root()
    tmp = root / f".building-{os.getpid()}-{threading.get_ident()}"
    final = root / f"{mark.max_pk}-{mark.count}-{os.getpid()}"
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        table_save(table, tmp)
        meta = {
            "max_pk": mark.max_pk,
            "count": mark.count,
            "updated": mark.updated.isoformat() if mark.updated else None,
            "database": _database(),
            "reading": ENTRY_READING,
        }
        (tmp / "watermark.json").write_text(json.dumps(meta), encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        os.rename(tmp, final)
    except OSError as exc:
        logger.warning("ranking copy not saved (%s): the next process builds it again", exc)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    for old in root.iterdir():
        if old != final and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)


def _load_saved(version: int) -> Snapshot | None:
    """The newest saved full build with what changed since layered on it, or None when there is
    none, it is unreadable, it is another database's (another name, or rows older than the ones
    it was built from: a restored backup), or more changed since than layering takes."""
    root = _saved_root()
    if not root.is_dir():
        return None
    saved = [d for d in root.iterdir() if not d.name.startswith(".") and (d / "watermark.json").is_file()]
    if not saved:
        return None
    folder = max(saved, key=lambda d: d.stat().st_mtime)
    try:
        meta = json.loads((folder / "watermark.json").read_text(encoding="utf-8"))
        if meta["database"] != _database() or meta.get("reading") != ENTRY_READING:
            return None
        table = table_load(folder)
        mark = Watermark(
            int(meta["max_pk"]),
            int(meta["count"]),
            datetime.fromisoformat(meta["updated"]) if meta["updated"] else None,
        )
    except (OSError, ValueError, KeyError) as exc:
        logger.warning("saved ranking copy %s unreadable (%s): building it again", folder, exc)
        return None
    # The row it last read is still there (a newer one is an edit, which is layered); none is:
    # not the rows it was built from. (A range on the updated_at index, not a scan.)
    if mark.updated is None or not Entry.all_objects.filter(updated_at__gte=mark.updated, pk__lte=mark.max_pk).exists():
        return None
    embedder = get_embedder()
    base = Snapshot(
        version=-1,
        corpus=Corpus([table]),
        size=len(table),
        model_name=embedder.name,
        dim=embedder.dim,
        watermark=mark,
    )
    return _extend(base, version)


LAYER_LIMIT = 5000  # entries added since the full build that are layered on it; past this, rebuild


def _extend(snap: Snapshot, version: int) -> Snapshot | None:
    """The full build `snap` stands on, with what changed since layered on it.

    1. Entries of the full build edited or merged since (a newer updated_at) are hidden in it
       and read again; rows deleted since (fewer rows than the build and the additions explain)
       are found by comparing pks, and hidden.
    2. Give up (None: rebuild) when more than LAYER_LIMIT entries were changed or added.
    3. Read the added and changed entries (tokens are kept from one layering to the next) into a
       small table layered on the full build's (`LayeredCorpus`)."""
    base = snap.base or snap
    w = base.watermark
    if w is None:
        return None
    rows = Entry.all_objects
    changed: set[int] = set()
    if w.updated is not None:
        edited = rows.filter(updated_at__gt=w.updated, pk__lte=w.max_pk).values_list("pk", flat=True)
        changed = set(edited[: LAYER_LIMIT + 1])
    added_rows = rows.filter(pk__gt=w.max_pk).count()
    if added_rows + len(changed) > LAYER_LIMIT:
        return None
    gone = _deleted_since(base, rows.count() - added_rows)
    if len(gone) > LAYER_LIMIT:
        return None
    layered = [*entry_records_stream(pks=changed), *entry_records_stream(after_pk=w.max_pk)]
    for pk in set(_added_tokens) - {r.id for r in layered}:
        del _added_tokens[pk]
    table, _ = _table_of(layered, _added_tokens)
    return replace(
        base,
        version=version,
        corpus=LayeredCorpus(base.corpus, table, hidden=frozenset(changed | gone)),
        size=base.size + len(layered) - len(changed | gone),
        base=base,
    )


_gone: tuple[Snapshot, int, frozenset[int]] | None = None  # the last answer of _deleted_since


def _deleted_since(base: Snapshot, rows_up_to_watermark: int) -> frozenset[int]:
    """The full build's entries whose rows are gone: none when the rows up to its watermark are
    as many as it counted; else its pks compared with the table's (one read of the pk column),
    remembered until that count changes again, so writes after a deletion do not each pay it."""
    global _gone
    w = base.watermark
    if w is None or rows_up_to_watermark == w.count:
        return frozenset()
    if _gone is not None and _gone[0] is base and _gone[1] == rows_up_to_watermark:
        return _gone[2]
    present = Entry.all_objects.filter(pk__lte=w.max_pk).values_list("pk", flat=True).iterator(chunk_size=20_000)
    gone = frozenset(np.setdiff1d(base.corpus.parts[0].pks, np.fromiter(present, dtype=np.int64)).tolist())
    _gone = (base, rows_up_to_watermark, gone)
    return gone


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
    written. Above `FIXBASE_SYNC_REBUILD_ENTRIES` entries a rebuild takes seconds, so what
    changed since the last full build (entries added, edited, merged or deleted) is layered on
    it at once (`_extend`); past LAYER_LIMIT changes the previous copy keeps answering while a
    background thread builds the new one."""
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
            _current = _build(version, from_disk=_current is None)
        return _current
