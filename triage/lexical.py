"""Lexical retrieval over the raw text of entries' problems (BM25, via bm25s).

Signatures fail on pastes that do not look like Python tracebacks (compiler errors, a
debugger's "Exception has occurred", an error quoted in prose); the words of the lines around
the error still match the entry that was written from the same failure. The query side is the
region of the paste around its errors, not the whole log, so a job log's start-up noise does not
drown them. Pure Python, no Django.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from kb.logpatterns import QUIET_LINE_RE
from kb.logscan import ErrorBlock, clean_line

RAW_TOKEN_RE = re.compile(r"[a-z_][a-z0-9_]+|\d+")
MAX_DOC_LINES = 200
REGION_BEFORE, REGION_AFTER = 3, 2
MAX_REGION_LINES = 120


def raw_tokens(text: str) -> list[str]:
    """Lower-cased words and numbers of text with ANSI codes and launcher prefixes removed."""
    lines = text.splitlines()[:MAX_DOC_LINES]
    return RAW_TOKEN_RE.findall("\n".join(clean_line(line).text for line in lines).lower())


def error_region(text: str, blocks: Sequence[ErrorBlock], fallback: Sequence[str]) -> str:
    """The lines of the paste around its errors (informational lines, config dumps and lines
    repeated by other ranks left out); `fallback` lines when it has none."""
    errors = [b for b in blocks if b.kind != "warning" and not b.symptom]
    if errors:
        return _lines_around(text, errors)
    # Only a warning or a symptom: in a job log that is as likely start-up noise as the failure,
    # so the paste's last telling lines (where a job dies) are read with it.
    head = _lines_around(text, blocks[:1]) if blocks else ""
    return "\n".join([head, *fallback]) if head else "\n".join(fallback)


def _lines_around(text: str, blocks: Sequence[ErrorBlock]) -> str:
    lines = text.splitlines()
    numbers: set[int] = set()
    for b in blocks:
        numbers.update(range(max(1, b.line_start - REGION_BEFORE), min(len(lines), b.line_end + REGION_AFTER) + 1))
    out: list[str] = []
    seen: set[str] = set()
    for n in sorted(numbers):
        cl = clean_line(lines[n - 1])
        body = cl.text.strip()
        if not body or body in seen or cl.level in ("INFO", "DEBUG") or QUIET_LINE_RE.match(body):
            continue
        seen.add(body)
        out.append(body)
        if len(out) >= MAX_REGION_LINES:
            break
    return "\n".join(out)


class RawLexicalIndex:
    """BM25 over entries' problem text; `scores` is aligned with the ids it was built from."""

    def __init__(self, ids: Sequence[int], token_lists: Sequence[Sequence[str]]) -> None:
        import bm25s

        self.ids = np.asarray(ids, dtype=np.int64)
        self.position = {int(i): k for k, i in enumerate(self.ids)}
        self._bm25 = None
        if len(self.ids):
            self._bm25 = bm25s.BM25()
            self._bm25.index([list(t) or ["<empty>"] for t in token_lists], show_progress=False)

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        if self._bm25 is None or not tokens:
            return np.zeros(len(self.ids), dtype=np.float32)
        vocab = self._bm25.vocab_dict
        known = [t for t in dict.fromkeys(tokens) if t in vocab]
        if not known:
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def df(self, token: str) -> int:
        """How many entries of this index contain the word."""
        if self._bm25 is None:
            return 0
        tid = self._bm25.vocab_dict.get(token)
        if tid is None:
            return 0
        indptr = self._bm25.scores["indptr"]
        return int(indptr[tid + 1] - indptr[tid])

    def holders(self, token: str) -> np.ndarray:
        """Positions (in `ids`) of the entries that contain the word."""
        if self._bm25 is None:
            return np.zeros(0, dtype=np.int64)
        tid = self._bm25.vocab_dict.get(token)
        if tid is None:
            return np.zeros(0, dtype=np.int64)
        indptr, indices = self._bm25.scores["indptr"], self._bm25.scores["indices"]
        return np.asarray(indices[indptr[tid] : indptr[tid + 1]])

    def coverage(self, tokens: Sequence[str], candidates: Iterable[int]) -> dict[int, float]:
        """IDF-weighted share of the query's distinct words that each candidate's text contains.

        Unlike BM25 relative to the best entry, this is on an absolute scale: a paste whose
        words are mostly new to the knowledge base covers little of any entry, however the
        entries rank among themselves. Read from the BM25 matrix's postings (token → entries)."""
        return raw_coverage([self], tokens, candidates)

    def novelty(self, tokens: Sequence[str]) -> float:
        """IDF-weighted share of the paste's distinct words (numbers aside) that no entry contains:
        a failure nobody has documented tends to speak of things the knowledge base never saw."""
        return raw_novelty([self], tokens)


def _lucene_idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def raw_coverage(
    parts: Sequence[RawLexicalIndex], tokens: Sequence[str], candidates: Iterable[int]
) -> dict[int, float]:
    """`RawLexicalIndex.coverage` over several indexes taken as one (document frequencies summed)."""
    uniq = set(tokens)
    cands = list(candidates)
    if not uniq or not cands:
        return {}
    n = sum(len(p.ids) for p in parts)
    wanted = [(p, np.fromiter((p.position[i] for i in cands if i in p.position), dtype=np.int64)) for p in parts]
    got = [np.zeros(len(w)) for _, w in wanted]
    total = 0.0
    for t in uniq:
        df = sum(p.df(t) for p in parts)
        idf = _lucene_idf(n, df)
        total += idf
        if df:
            for k, (p, w) in enumerate(wanted):
                if len(w):
                    got[k] += idf * np.isin(w, p.holders(t))
    if not total:
        return {}
    return {
        int(p.ids[pos]): float(v) / total
        for (p, w), g in zip(wanted, got, strict=True)
        for pos, v in zip(w, g, strict=True)
    }


def raw_novelty(parts: Sequence[RawLexicalIndex], tokens: Sequence[str]) -> float:
    """`RawLexicalIndex.novelty` over several indexes taken as one."""
    uniq = {t for t in tokens if not t.isdigit()}
    n = sum(len(p.ids) for p in parts)
    if not uniq or not n:
        return 0.0
    total = unseen = 0.0
    for t in uniq:
        df = sum(p.df(t) for p in parts)
        idf = _lucene_idf(n, df)
        total += idf
        if df == 0:
            unseen += idf
    return unseen / total if total else 0.0


class SignatureBM25:
    """BM25 over the entries' signature tokens as a sparse matrix (scipy): term weights are
    precomputed per (entry, word); a query sums the columns of its words. IDF is
    log(1 + (N + 1) / (df + 0.5)), which keeps some weight on words most entries share, and a
    word the query repeats counts up to three times by its square root."""

    K1, B = 1.2, 0.75

    def __init__(self, ids: Sequence[int], token_lists: Sequence[Sequence[str]]) -> None:
        from scipy.sparse import csc_matrix

        self.ids = np.asarray(ids, dtype=np.int64)
        self.n = max(1, len(self.ids))
        self.vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[float] = []
        lengths = np.array([len(t) for t in token_lists], dtype=np.float64)
        avg = float(lengths.mean()) if len(lengths) else 1.0
        for row, tokens in enumerate(token_lists):
            for tok, tf in Counter(tokens).items():
                rows.append(row)
                cols.append(self.vocab.setdefault(tok, len(self.vocab)))
                tfs.append(tf)
        tf_arr = np.asarray(tfs, dtype=np.float64)
        norm = self.K1 * (1 - self.B + self.B * lengths[np.asarray(rows, dtype=np.int64)] / (avg or 1.0))
        weights = tf_arr * (self.K1 + 1) / (tf_arr + norm) if len(tf_arr) else tf_arr
        self.matrix = csc_matrix(
            (weights, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(len(self.ids), max(1, len(self.vocab))),
        )
        self.df = np.diff(self.matrix.indptr)

    def doc_freq(self, token: str) -> int:
        col = self.vocab.get(token)
        return 0 if col is None else int(self.df[col])

    def top(
        self,
        tokens: Sequence[str],
        k: int,
        max_df_share: float = 0.6,
        df_of: Callable[[str], int] | None = None,
        n: int | None = None,
    ) -> list[tuple[int, float]]:
        """The `k` best entries with a positive score, best first; words in more than
        `max_df_share` of the entries (this knowledge base's boilerplate) do not count.
        `df_of` and `n` give the statistics of a larger whole this index is part of."""
        n = n or self.n
        df_of = df_of or self.doc_freq
        scores = np.zeros(len(self.ids), dtype=np.float64)
        for tok, qtf in Counter(tokens).items():
            col = self.vocab.get(tok)
            if col is None:
                continue
            df = df_of(tok)
            if n > 5 and df > n * max_df_share:
                continue
            idf = math.log(1.0 + (n + 1) / (df + 0.5))
            start, end = self.matrix.indptr[col], self.matrix.indptr[col + 1]
            scores[self.matrix.indices[start:end]] += idf * math.sqrt(min(qtf, 3)) * self.matrix.data[start:end]
        if not len(scores) or k <= 0:
            return []
        k = min(k, len(scores))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in best if scores[i] > 0]
