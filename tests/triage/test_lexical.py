from __future__ import annotations

import numpy as np

from triage.lexical import Postings


def random_postings(rng: np.random.Generator, n: int, n_words: int) -> Postings:
    # Word frequencies from very rare to in almost every entry, as in a real knowledge base.
    p = np.geomspace(0.9, 0.0005, n_words)
    offsets, words, weights = [0], [], []
    for _ in range(n):
        have = np.flatnonzero(rng.random(n_words) < p)
        words.extend(have.tolist())
        weights.extend(rng.random(len(have)).astype(np.float32).tolist())
        offsets.append(len(words))
    return Postings(
        np.asarray(offsets, dtype=np.int64),
        np.asarray(words, dtype=np.int32),
        np.asarray(weights, dtype=np.float32),
        n_words,
    )


def test_top_without_the_long_lists_finds_the_same_entries_as_summing_them_all():
    rng = np.random.default_rng(7)
    index = random_postings(rng, 60_000, 300)
    for _ in range(20):
        cols = rng.choice(300, size=rng.integers(5, 40), replace=False)
        mults = rng.random(len(cols)) * 5
        fast = index.top(cols, mults, 30)
        exact = index.top(cols, mults, 30, exact=True)
        assert len(fast) == len(exact)
        assert np.allclose([s for _, s in fast], [s for _, s in exact])
