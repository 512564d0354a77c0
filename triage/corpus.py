"""The knowledge base as ranking reads it: entries' tokens, document frequencies, lexical indexes.

Pure Python, no Django. A `Corpus` reads one or more `EntryTable`s as one knowledge base: the
full build, and (`LayeredCorpus`) the entries added since, so a write does not rebuild the
indexes of a large knowledge base. Document frequencies and entry counts are summed over the
tables; an entry is decoded into a `Doc` only when a triage scores it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from triage.entry_table import Doc, EntryTable
from triage.lexical import Postings

__all__ = ["Corpus", "Doc", "LayeredCorpus"]

DOC_CACHE = 20_000  # decoded entries kept per corpus (a triage scores ~30–90)
IDF_CACHE = 200_000  # words whose IDF is remembered per corpus
MAX_DF_SHARE = 0.6  # words in more of the entries than this are this knowledge base's boilerplate


class DocFreq:
    """How many entries contain a word, summed over the tables (`get` as on a Counter)."""

    def __init__(self, parts: Sequence[EntryTable], field: str) -> None:
        self.parts, self.field = parts, field
        self.idf_of: dict[str, float] = {}  # filled by `Corpus.idf`: ranking asks for the same words often

    def get(self, token: str, default: int = 0) -> int:
        return sum(p.df(self.field, token) for p in self.parts) or default


class DocStore:
    """Entries by pk, decoded from the tables on demand (`in` and `[]` as on a dict). A `hidden`
    pk is not read from the first table (the full build): it was edited (its new state is in a
    later table) or deleted since."""

    def __init__(self, parts: Sequence[EntryTable], hidden: frozenset[int] = frozenset()) -> None:
        self.parts, self.hidden = parts, hidden
        self._doc = lru_cache(maxsize=DOC_CACHE)(self._decode)

    def _locate(self, pk: int) -> tuple[EntryTable, int] | None:
        for k, part in enumerate(self.parts):
            if k == 0 and pk in self.hidden:
                continue
            pos = part.position(pk)
            if pos is not None:
                return part, pos
        return None

    def _decode(self, pk: int) -> Doc | None:
        found = self._locate(pk)
        return None if found is None else found[0].doc(found[1])

    def __contains__(self, pk: object) -> bool:
        return isinstance(pk, int) and self._doc(pk) is not None

    def __getitem__(self, pk: int) -> Doc:
        doc = self._doc(pk)
        if doc is None:
            raise KeyError(pk)
        return doc

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts) - len(self.hidden)


class FingerprintLookup:
    def __init__(self, parts: Sequence[EntryTable], hidden: frozenset[int] = frozenset()) -> None:
        self.parts, self.hidden = parts, hidden

    def get(self, fp: str, default: Sequence[int] = ()) -> list[int]:
        found = [pk for k, p in enumerate(self.parts) for pk in p.with_fingerprint(fp) if k or pk not in self.hidden]
        return found or list(default)


class RawText:
    """BM25 (bm25s's formula) of the entries' problem text, over the tables taken as one: each
    table scores with its own IDF (scores only choose which entries to consider); coverage sums
    document frequencies."""

    def __init__(self, parts: Sequence[EntryTable], exact: bool = False, hidden: frozenset[int] = frozenset()) -> None:
        self.parts, self.exact, self.hidden = parts, exact, hidden

    def top(self, tokens: Sequence[str], k: int) -> list[int]:
        """The `k` entries (pks) whose problem text best matches the words, with a positive score."""
        best: list[tuple[float, int]] = []
        uniq = list(dict.fromkeys(tokens))
        for n, p in enumerate(self.parts):
            cols = [c for t in uniq if (c := p.vocab.get(t)) is not None and p.raw.df[c]]
            for pos, score in p.raw.top(cols, [1.0] * len(cols), k, exact=self.exact):
                if n or int(p.pks[pos]) not in self.hidden:
                    best.append((score, int(p.pks[pos])))
        best.sort(key=lambda sp: (-sp[0], sp[1]))
        return [pk for _, pk in best[:k]]

    def df(self, token: str) -> int:
        return sum(p.df("raw", token) for p in self.parts)

    def coverage(self, tokens: Sequence[str], candidates: Iterable[int]) -> dict[int, float]:
        """IDF-weighted share of the query's distinct words that each candidate's text contains.

        Unlike BM25 relative to the best entry, this is on an absolute scale: a paste whose
        words are mostly new to the knowledge base covers little of any entry, however the
        entries rank among themselves. Read from the index's postings (word → entries)."""
        uniq = set(tokens)
        cands = list(candidates)
        if not uniq or not cands:
            return {}
        n = sum(len(p) for p in self.parts)
        shown = [pk for pk in cands if pk not in self.hidden]
        wanted = [(p, *p.positions(shown if k == 0 else cands)) for k, p in enumerate(self.parts)]
        got = [[0.0] * len(pks) for _, pks, _ in wanted]
        total = 0.0
        for t in uniq:
            df = self.df(t)
            idf = _lucene_idf(n, df)
            total += idf
            if not df:
                continue
            for k, (p, _, pos) in enumerate(wanted):
                col = p.vocab.get(t)
                if col is not None and len(pos):
                    for j in p.raw.holds(col, pos).nonzero()[0]:
                        got[k][j] += idf
        if not total:
            return {}
        return {
            int(pk): v / total for (_, pks, _), g in zip(wanted, got, strict=True) for pk, v in zip(pks, g, strict=True)
        }


def _lucene_idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


class Corpus:
    """Document frequencies, lexical indexes and the entries of one or more tables.

    `exact` turns off the shortcuts of candidate generation (every posting list is summed), for
    measuring the scaled path against exact ranking (bench/scale.py)."""

    def __init__(self, parts: Sequence[EntryTable], exact: bool = False, hidden: frozenset[int] = frozenset()) -> None:
        self.parts = tuple(parts)
        self.exact = exact
        self.hidden = hidden  # pks whose copy in the first table is out of date (see DocStore)
        self.n = max(1, sum(len(p) for p in self.parts) - len(hidden))
        self.docs = DocStore(self.parts, hidden)
        self.by_fingerprint = FingerprintLookup(self.parts, hidden)
        self.msg_df = DocFreq(self.parts, "msg")
        self.text_df = DocFreq(self.parts, "text")
        self.frame_df = DocFreq(self.parts, "frame")
        self.raw = RawText(self.parts, exact, hidden)
        self._doc_vectors = lru_cache(maxsize=DOC_CACHE)(self._vectors_of)

    def with_exact(self, exact: bool) -> Corpus:
        return Corpus(self.parts, exact)

    def doc_vectors(self, doc_id: int) -> tuple[dict[str, float], dict[str, float]]:
        """TF-IDF of an entry's message, and of its message with its context (memoised)."""
        return self._doc_vectors(doc_id)

    def _vectors_of(self, doc_id: int) -> tuple[dict[str, float], dict[str, float]]:
        d = self.docs[doc_id]
        return self.tfidf(d.msg_tokens), self.tfidf(d.msg_tokens + d.ctx_tokens)

    def idf(self, df: DocFreq, token: str) -> float:
        cached = df.idf_of.get(token)
        if cached is None:
            if len(df.idf_of) > IDF_CACHE:
                df.idf_of.clear()
            cached = df.idf_of[token] = math.log(1.0 + (self.n + 1) / (df.get(token, 0) + 0.5))
        return cached

    def tfidf(self, tokens: Sequence[str]) -> dict[str, float]:
        counts = Counter(tokens)
        vec = {t: (1.0 + math.log(c)) * self.idf(self.msg_df, t) for t, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {t: v / norm for t, v in vec.items()}

    def lexical_top(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The `k` entries with the best BM25 over their signature and remedy tokens. IDF is
        log(1 + (N + 1) / (df + 0.5)), which keeps some weight on words most entries share, and a
        word the query repeats counts up to three times by its square root. Words in more than
        60% of the entries (boilerplate of this knowledge base) do not count."""
        n = self.n
        mults: dict[str, float] = {}
        for tok, qtf in Counter(tokens).items():
            df = self.text_df.get(tok, 0)
            if not df or (n > 5 and df > n * MAX_DF_SHARE):
                continue
            mults[tok] = math.log(1.0 + (n + 1) / (df + 0.5)) * math.sqrt(min(qtf, 3))
        both: list[tuple[int, float]] = []
        for n_part, p in enumerate(self.parts):
            index: Postings = p.signature
            cols, weights = [], []
            for tok, m in mults.items():
                col = p.vocab.get(tok)
                if col is not None and index.df[col]:
                    cols.append(col)
                    weights.append(m)
            found = ((int(p.pks[pos]), s) for pos, s in index.top(cols, weights, k, exact=self.exact))
            both.extend((pk, s) for pk, s in found if n_part or pk not in self.hidden)
        return sorted(both, key=lambda kv: (-kv[1], kv[0]))[:k]


class LayeredCorpus(Corpus):
    """A built corpus plus a small table of the entries added since, read as one.

    Writes add entries all the time; rebuilding every index for each would cost seconds at 10⁵
    entries. The new entries get a table of their own; document frequencies and entry counts are
    summed, so their features are computed on the same scale as the others'. An entry of the full
    build edited since is `hidden` there and read from the small table; one deleted since is only
    hidden (its words still count in the document frequencies until the next full build)."""

    def __init__(
        self, base: Corpus, added: EntryTable, exact: bool = False, hidden: frozenset[int] = frozenset()
    ) -> None:
        super().__init__((*base.parts[:1], added), exact, hidden)
        self.base = base

    def with_exact(self, exact: bool) -> Corpus:
        return LayeredCorpus(self.base, self.parts[1], exact, self.hidden)
