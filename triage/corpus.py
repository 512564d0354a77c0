"""The knowledge base as ranking reads it: entries' tokens, document frequencies, lexical indexes.

Pure Python, no Django. `Corpus` is built from every entry at once; `LayeredCorpus` lays entries
added since on top of a built one, so a write does not rebuild the indexes of a large knowledge base.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from triage.lexical import RawLexicalIndex, SignatureBM25, raw_coverage, raw_novelty


@dataclass(frozen=True)
class Doc:
    """An entry as ranking sees it (tokens precomputed once per knowledge-base version)."""

    id: int
    exc_type: str
    pattern: str
    kind: str
    fingerprint: str
    framework: str
    frames: tuple[str, ...]
    msg_tokens: tuple[str, ...]
    ctx_tokens: tuple[str, ...]
    text_tokens: tuple[str, ...]
    family: tuple[str, frozenset[str]] | None = None
    origin: str = "team"
    has_fix: bool = True
    slots: tuple[str, ...] = ()  # the message's distinguishing values (kb.normalize.message_slots)


class Corpus:
    """Document frequencies and an inverted index over the entries' tokens."""

    def __init__(self, docs: Sequence[Doc], raw: RawLexicalIndex | None = None) -> None:
        self.raw = raw
        self.docs = {d.id: d for d in docs}
        self.by_fingerprint: dict[str, list[int]] = {}
        for d in docs:
            self.by_fingerprint.setdefault(d.fingerprint, []).append(d.id)
        self.n = max(1, len(docs))
        self.msg_df: Counter[str] = Counter()
        self.text_df: Counter[str] = Counter()
        self.frame_df: Counter[str] = Counter()
        for d in docs:
            self.msg_df.update(set(d.msg_tokens) | set(d.ctx_tokens))
            self.text_df.update(set(d.text_tokens))
            self.frame_df.update(set(d.frames))
        # BM25 over the signature and remedy tokens as a sparse matrix: scoring a query is a
        # few vectorised sums instead of a Python loop over every posting.
        self.signature_index = SignatureBM25([d.id for d in docs], [d.text_tokens for d in docs])
        self._doc_vectors: dict[int, tuple[dict[str, float], dict[str, float]]] = {}

    def doc_vectors(self, doc_id: int) -> tuple[dict[str, float], dict[str, float]]:
        """TF-IDF of an entry's message, and of its message with its context (memoised)."""
        if doc_id not in self._doc_vectors:
            d = self.docs[doc_id]
            self._doc_vectors[doc_id] = (self.tfidf(d.msg_tokens), self.tfidf(d.msg_tokens + d.ctx_tokens))
        return self._doc_vectors[doc_id]

    def idf(self, df: Counter[str], token: str) -> float:
        return math.log(1.0 + (self.n + 1) / (df.get(token, 0) + 0.5))

    def tfidf(self, tokens: Sequence[str]) -> dict[str, float]:
        counts = Counter(tokens)
        vec = {t: (1.0 + math.log(c)) * self.idf(self.msg_df, t) for t, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {t: v / norm for t, v in vec.items()}

    def lexical_top(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The `k` entries with the best BM25 over their signature and remedy tokens. Words in
        more than 60% of the entries (boilerplate of this knowledge base) do not count."""
        return self.signature_index.top(tokens, k)


class _SummedCounts:
    """Document frequencies of a base corpus plus those of the entries layered on it."""

    def __init__(self, base: Counter[str], extra: Counter[str]) -> None:
        self.base, self.extra = base, extra

    def get(self, token: str, default: int = 0) -> int:
        return self.base.get(token, 0) + self.extra.get(token, 0) or default


class _LayeredRaw:
    """The raw-text index of a base corpus and of the entries layered on it, read as one."""

    def __init__(self, base: RawLexicalIndex, extra: RawLexicalIndex) -> None:
        self.parts = (base, extra)
        self.ids = np.concatenate([base.ids, extra.ids])
        self.offset = len(base.ids)
        self.position = _LayeredPositions(base.position, extra.position, self.offset)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        # Each part scores with its own IDF: these scores only choose which entries to consider.
        return np.concatenate([p.scores(tokens) for p in self.parts])

    def coverage(self, tokens: Sequence[str], candidates: Iterable[int]) -> dict[int, float]:
        return raw_coverage(self.parts, tokens, candidates)

    def novelty(self, tokens: Sequence[str]) -> float:
        return raw_novelty(self.parts, tokens)


class _LayeredPositions:
    def __init__(self, base: dict[int, int], extra: dict[int, int], offset: int) -> None:
        self.base, self.extra, self.offset = base, extra, offset

    def __contains__(self, key: object) -> bool:
        return key in self.extra or key in self.base

    def __getitem__(self, key: int) -> int:
        return self.extra[key] + self.offset if key in self.extra else self.base[key]


class LayeredCorpus(Corpus):
    """A built corpus plus entries added since, without rebuilding the built one's indexes.

    Writes add entries all the time; rebuilding every index for each would cost seconds at 10⁵
    entries. The new entries get small indexes of their own; document frequencies and entry
    counts are summed, so their features are computed on the same scale as the others'. Only
    additions are layered: an edited or deleted entry means a full rebuild."""

    def __init__(self, base: Corpus, added: Sequence[Doc], added_raw: Sequence[Sequence[str]]) -> None:
        self.base = base
        self.docs = {**base.docs, **{d.id: d for d in added}}
        self.by_fingerprint = dict(base.by_fingerprint)
        for d in added:
            self.by_fingerprint[d.fingerprint] = [*self.by_fingerprint.get(d.fingerprint, ()), d.id]
        self.n = base.n + len(added)
        extra: dict[str, Counter[str]] = {"msg": Counter(), "text": Counter(), "frame": Counter()}
        for d in added:
            extra["msg"].update(set(d.msg_tokens) | set(d.ctx_tokens))
            extra["text"].update(set(d.text_tokens))
            extra["frame"].update(set(d.frames))
        self.msg_df = _SummedCounts(base.msg_df, extra["msg"])  # type: ignore[assignment]
        self.text_df = _SummedCounts(base.text_df, extra["text"])  # type: ignore[assignment]
        self.frame_df = _SummedCounts(base.frame_df, extra["frame"])  # type: ignore[assignment]
        self.added_index = SignatureBM25([d.id for d in added], [d.text_tokens for d in added])
        self.signature_index = base.signature_index
        added_raw_index = RawLexicalIndex([d.id for d in added], added_raw)
        self.raw = _LayeredRaw(base.raw, added_raw_index) if base.raw is not None else None  # type: ignore[assignment]
        self._doc_vectors = {}

    def lexical_top(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        def df_of(t: str) -> int:
            return self.text_df.get(t, 0)

        both = self.signature_index.top(tokens, k, df_of=df_of, n=self.n) + self.added_index.top(
            tokens, k, df_of=df_of, n=self.n
        )
        return sorted(both, key=lambda kv: -kv[1])[:k]
