"""The FAISS index file: a cache of the embeddings in the database, keyed by entry pk.

Writers hold an exclusive file lock, write a temporary file and rename it into place, so two
workers never corrupt the index and readers never see half a file. Readers keep the index in
memory and reload it when the file on disk changes.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def _faiss() -> Any:
    import faiss

    return faiss


# Exact (flat) search costs ~12 ms a query at 100k vectors and grows with them; from here on the
# index is approximate. Its recall against exact search is measured by bench/ann_recall.py.
APPROXIMATE_FROM = 50_000
COMPRESSED_FROM = 250_000
NPROBE = 32


@dataclass(frozen=True)
class IndexMeta:
    version: int
    model_name: str
    dim: int
    count: int


class VectorIndex:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "entries.faiss"
        self.meta_path = self.directory / "entries.json"
        self.lock_path = self.directory / "entries.lock"
        self._cache_key: tuple[int, int] | None = None
        self._index: Any = None
        self._meta: IndexMeta | None = None
        self._mutex = threading.Lock()

    # -- reading -----------------------------------------------------------------------
    def meta(self) -> IndexMeta | None:
        try:
            data = json.loads(self.meta_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return IndexMeta(**data)

    def _load(self) -> tuple[Any, IndexMeta | None]:
        with self._mutex:
            try:
                st = self.path.stat()
            except FileNotFoundError:
                self._cache_key, self._index, self._meta = None, None, None
                return None, None
            key = (st.st_mtime_ns, st.st_ino)
            if key != self._cache_key:
                # Mapped, not read: after a write the new file is searchable at once (reading a
                # 10⁵-vector IVF takes a few hundred ms) and only the cells searched are paged in.
                # The writer replaces the file by a rename, so a mapped old file stays whole.
                self._index = _faiss().read_index(str(self.path), _faiss().IO_FLAG_MMAP)
                ivf = _faiss().try_extract_index_ivf(self._index)
                if ivf is not None:
                    ivf.nprobe = NPROBE
                self._meta = self.meta()
                self._cache_key = key
            return self._index, self._meta

    def search(self, vector: np.ndarray, k: int, model_name: str) -> list[tuple[int, float]]:
        index, meta = self._load()
        if index is None or meta is None or meta.model_name != model_name or index.ntotal == 0:
            return []
        scores, ids = index.search(np.asarray(vector, dtype=np.float32).reshape(1, -1), min(k, index.ntotal))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    # -- writing -----------------------------------------------------------------------
    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _write(self, index: Any, meta: IndexMeta) -> None:
        faiss = _faiss()
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".entries.", suffix=".faiss")
        os.close(fd)
        try:
            faiss.write_index(index, tmp)
            # The replaced file stays linked until the next write: when a reader unmaps the last
            # file it mapped, the kernel then has nothing to free (~150 ms for 10⁵ vectors, paid
            # by the triage that noticed the change); the writer pays for it here instead.
            prev = self.directory / "entries.prev.faiss"
            if self.path.exists():
                prev.unlink(missing_ok=True)
                os.link(self.path, prev)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".entries.", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(meta.__dict__, fh)
        os.replace(tmp, self.meta_path)

    def _empty(self, dim: int, vectors: np.ndarray) -> Any:
        """Exact search up to APPROXIMATE_FROM vectors; above, an inverted-file index (IVF,
        k-means cells over these vectors) that searches NPROBE cells, keeps the entry pks as
        its ids and supports removals, so upserts work the same on both. From COMPRESSED_FROM
        on, the cells hold each vector in 8 bits a dimension (a quarter of the memory: a
        million vectors in 0.4 GB rather than 1.5 GB in every process that searches); the
        scores are approximate, and triage reads the exact vectors of its candidates anyway."""
        faiss = _faiss()
        if len(vectors) < APPROXIMATE_FROM:
            return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        if len(vectors) >= COMPRESSED_FROM:
            # Fewer, larger cells, placed by a short k-means over a sample (40 vectors a cell):
            # k-means over a million vectors into 4,000 cells takes most of an hour on 2 cores.
            cells = int(2 * np.sqrt(len(vectors)))
            index = faiss.IndexIVFScalarQuantizer(
                faiss.IndexFlatIP(dim), dim, cells, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
            )
            index.cp.niter = 10
            sample = np.random.default_rng(0).choice(len(vectors), min(len(vectors), 40 * cells), replace=False)
            index.train(np.asarray(vectors[np.sort(sample)], dtype=np.float32))
            return index
        cells = int(4 * np.sqrt(len(vectors)))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, cells, faiss.METRIC_INNER_PRODUCT)
        index.train(np.asarray(vectors, dtype=np.float32))
        return index

    def rebuild(self, ids: list[int], vectors: np.ndarray, model_name: str, dim: int) -> IndexMeta:
        with self._write_lock():
            old = self.meta()
            index = self._empty(dim, np.asarray(vectors, dtype=np.float32).reshape(len(ids), dim))
            if ids:
                index.add_with_ids(np.asarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64))
            meta = IndexMeta(version=(old.version + 1 if old else 1), model_name=model_name, dim=dim, count=len(ids))
            self._write(index, meta)
            return meta

    def upsert(self, ids: list[int], vectors: np.ndarray, model_name: str, dim: int) -> IndexMeta | None:
        """Add or replace vectors. Returns None when the index is missing or built with another
        model: the caller must rebuild it from the database."""
        faiss = _faiss()
        with self._write_lock():
            old = self.meta()
            if old is None or old.model_name != model_name or old.dim != dim or not self.path.exists():
                return None
            index = faiss.read_index(str(self.path))
            id_array = np.asarray(ids, dtype=np.int64)
            if ids:
                index.remove_ids(id_array)
                index.add_with_ids(np.asarray(vectors, dtype=np.float32), id_array)
            if isinstance(index, faiss.IndexIVFFlat) and index.ntotal >= COMPRESSED_FROM:
                return None  # an IVF keeps no copy of its vectors to re-index: rebuilt from the database
            if faiss.try_extract_index_ivf(index) is None and index.ntotal >= APPROXIMATE_FROM:
                # Grown past exact search: the same vectors, re-indexed approximately.
                all_ids = faiss.vector_to_array(index.id_map).astype(np.int64)
                all_vectors = index.index.reconstruct_n(0, index.ntotal)
                index = self._empty(dim, all_vectors)
                index.add_with_ids(all_vectors, all_ids)
            meta = IndexMeta(version=old.version + 1, model_name=model_name, dim=dim, count=int(index.ntotal))
            self._write(index, meta)
            return meta

    def remove(self, ids: list[int]) -> None:
        faiss = _faiss()
        with self._write_lock():
            old = self.meta()
            if old is None or not self.path.exists() or not ids:
                return
            index = faiss.read_index(str(self.path))
            index.remove_ids(np.asarray(ids, dtype=np.int64))
            self._write(index, IndexMeta(old.version + 1, old.model_name, old.dim, int(index.ntotal)))


_indexes: dict[str, VectorIndex] = {}


def get_index() -> VectorIndex:
    from django.conf import settings

    key = str(settings.FIXBASE_INDEX_DIR)
    if key not in _indexes:
        _indexes[key] = VectorIndex(Path(key))
    return _indexes[key]
