from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import numpy as np

from kb.vector_index import VectorIndex


def _writer(directory: str, start: int) -> None:
    index = VectorIndex(Path(directory))
    rng = np.random.default_rng(start)
    for k in range(start, start + 40):
        vec = rng.standard_normal((1, 8)).astype(np.float32)
        index.upsert([k], vec / np.linalg.norm(vec), "m", 8)


def test_concurrent_writers_never_lose_or_corrupt_vectors(tmp_path: Path):
    VectorIndex(tmp_path).rebuild([], np.zeros((0, 8), np.float32), "m", 8)
    procs = [mp.get_context("fork").Process(target=_writer, args=(str(tmp_path), s)) for s in (0, 1000, 2000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    index = VectorIndex(tmp_path)
    meta = index.meta()
    assert meta is not None and meta.count == 120
    assert meta.version == 1 + 120
    assert not list(tmp_path.glob(".entries.*"))  # no temporary file left behind


def test_readers_reload_when_the_file_changes(tmp_path: Path):
    index = VectorIndex(tmp_path)
    a = np.eye(4, dtype=np.float32)[:1]
    index.rebuild([7], a, "m", 4)
    assert index.search(a[0], 5, "m") == [(7, 1.0)]
    other = VectorIndex(tmp_path)  # another process's view of the same file
    b = np.eye(4, dtype=np.float32)[1:2]
    other.upsert([9], b, "m", 4)
    assert index.search(b[0], 5, "m")[0][0] == 9
    assert index.search(b[0], 5, "other-model") == []


def test_large_index_is_approximate_and_still_finds_upserts_and_forgets_removals(tmp_path: Path, monkeypatch):
    import faiss

    from kb import vector_index

    monkeypatch.setattr(vector_index, "APPROXIMATE_FROM", 500)
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((2000, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = VectorIndex(tmp_path)
    index.rebuild(list(range(1, 2001)), vecs, "m", 16)
    assert faiss.try_extract_index_ivf(faiss.read_index(str(index.path))) is not None
    assert index.search(vecs[41], 5, "m")[0][0] == 42  # each vector is its own nearest neighbour
    new = rng.standard_normal((1, 16)).astype(np.float32)
    index.upsert([5000], new / np.linalg.norm(new), "m", 16)
    assert index.search(new[0] / np.linalg.norm(new), 1, "m")[0][0] == 5000
    index.remove([42])
    assert 42 not in {i for i, _ in index.search(vecs[41], 5, "m")}


def test_exact_index_turns_approximate_when_upserts_grow_it(tmp_path: Path, monkeypatch):
    import faiss

    from kb import vector_index

    monkeypatch.setattr(vector_index, "APPROXIMATE_FROM", 300)
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((400, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = VectorIndex(tmp_path)
    index.rebuild(list(range(1, 201)), vecs[:200], "m", 16)
    assert faiss.try_extract_index_ivf(faiss.read_index(str(index.path))) is None
    index.upsert(list(range(201, 401)), vecs[200:], "m", 16)
    assert faiss.try_extract_index_ivf(faiss.read_index(str(index.path))) is not None
    assert index.meta().count == 400 and index.search(vecs[10], 1, "m")[0][0] == 11
