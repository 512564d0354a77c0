"""Reference retrievers for the README's comparison table: plain BM25 and naive dense.

Both see what a naive system would: the raw problem text of each entry and the raw pasted log.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]+|[\u4e00-\u9fff]")


def raw_tokens(text: str) -> list[str]:
    return [t.lower() for t in TOKEN_RE.findall(text)]


class RawBM25:
    def __init__(self, docs: Sequence[tuple[int, str]]) -> None:
        self.ids = [i for i, _ in docs]
        self.tfs = [Counter(raw_tokens(t)) for _, t in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        self.df: Counter[str] = Counter()
        for tf in self.tfs:
            self.df.update(tf.keys())
        self.n = max(1, len(docs))

    def rank(self, query: str, k: int = 5) -> list[int]:
        q = Counter(raw_tokens(query))
        scores = []
        for doc_id, tf, length in zip(self.ids, self.tfs, self.lens, strict=True):
            s = 0.0
            for t in q:
                f = tf.get(t, 0)
                if f:
                    idf = math.log(1 + (self.n - self.df[t] + 0.5) / (self.df[t] + 0.5))
                    s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / self.avg))
            scores.append((s, doc_id))
        scores.sort(key=lambda x: -x[0])
        return [d for _, d in scores[:k]]


def naive_dense_rank(doc_vectors: np.ndarray, ids: Sequence[int], query_vector: np.ndarray, k: int = 5) -> list[int]:
    sims = doc_vectors @ query_vector
    order = np.argsort(-sims)[:k]
    return [ids[int(i)] for i in order]
