"""Recall and speed of the approximate vector index against exact search.

    .venv/bin/python bench/ann_recall.py [--n 100000] [--queries 500]

Vectors: the real model's embeddings of compact signatures of the shared benchmarks' root errors,
mutated (other words, numbers and frames, as bench/scale.py builds its knowledge bases) and
embedded in batches; queries: the benchmark queries' own signatures. Prints recall@k of the index
kb.vector_index builds at this size (IVF from APPROXIMATE_FROM on) against exact inner-product
search, and the time per query of both.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--k", type=int, default=30)
    args = ap.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["FIXBASE_DATA_DIR"] = tempfile.mkdtemp(prefix="fixbase-ann-")
    import django

    django.setup()
    import faiss
    from scale import mutated_failure, real_roots

    from kb.embedding import get_embedder
    from kb.signature import compact_text, signature_from_text
    from kb.vector_index import VectorIndex

    rng = random.Random(0)
    roots = real_roots()
    embedder = get_embedder()
    start = time.perf_counter()
    texts = [compact_text(signature_from_text(mutated_failure(rng, roots, k))[0]) for k in range(args.n)]
    vectors = embedder.encode(texts)
    print(f"embedded {args.n} signatures in {time.perf_counter() - start:.0f} s ({embedder.name})")
    qtexts = [compact_text(signature_from_text(mutated_failure(rng, roots, 10**7 + k))[0]) for k in range(args.queries)]
    queries = embedder.encode(qtexts)
    index = VectorIndex(Path(os.environ["FIXBASE_DATA_DIR"]) / "index")
    ids = list(range(1, args.n + 1))
    start = time.perf_counter()
    index.rebuild(ids, vectors, embedder.name, embedder.dim)
    print(f"built the index in {time.perf_counter() - start:.1f} s")
    exact = faiss.IndexFlatIP(embedder.dim)
    exact.add(vectors)
    t0 = time.perf_counter()
    _, truth = exact.search(queries, args.k)
    exact_ms = (time.perf_counter() - t0) * 1000 / args.queries
    hits = 0
    t0 = time.perf_counter()
    for q, true_ids in zip(queries, truth, strict=True):
        got = {i for i, _ in index.search(q, args.k, embedder.name)}
        hits += len(got & {int(t) + 1 for t in true_ids})
    ann_ms = (time.perf_counter() - t0) * 1000 / args.queries
    print(
        f"{args.n} vectors: recall@{args.k} {hits / (args.k * args.queries):.3f}; "
        f"{ann_ms:.1f} ms a query (exact search {exact_ms:.1f} ms)"
    )


if __name__ == "__main__":
    main()
