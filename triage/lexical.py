"""Lexical retrieval over the raw text of entries' problems, and the BM25 indexes ranking reads.

Signatures fail on pastes that do not look like Python tracebacks (compiler errors, a
debugger's "Exception has occurred", an error quoted in prose); the words of the lines around
the error still match the entry that was written from the same failure. The query side is the
region of the paste around its errors, not the whole log, so a job log's start-up noise does not
drown them. Both BM25 indexes (this one and the one over signature tokens) are `Postings`: a
sparse matrix of per-(entry, word) weights, read by word. Pure Python, no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
from scipy.sparse import csr_matrix

from kb.logclean import clean_line, line_stream, log_lines, process_tag
from kb.logpatterns import FENCE_LINE_RE, QUIET_LINE_RE
from kb.logscan import ErrorBlock, scan_log
from kb.normalize import SLOT_RULES
from kb.rootcause import select_root
from kb.signature import telling_lines

RAW_TOKEN_RE = re.compile(r"[a-z_][a-z0-9_]+|\d+")
MAX_DOC_LINES = 200
REGION_BEFORE, REGION_AFTER = 3, 2
# With a weak root, the paste's last this many telling lines are also read on their own: a job that
# dies prints why last, and among twenty lines of its own output that line is one voice in twenty
# (3 chosen by grouped CV over the shared and gathered sets, against 1 and 5; README).
TAIL_LINES = 3
MAX_REGION_LINES = 120
# An entry's problem text this long is a job log, matched by its error region (20, 40 and 80 were
# measured by grouped CV; README).
ENTRY_REGION_MIN_LINES = 40
# How entries are read into the ranking copy (their problem texts, their messages' slots): a saved
# copy read another way is built again.
ENTRY_READING = (
    f"error-region-{ENTRY_REGION_MIN_LINES};slots-{SLOT_RULES};fences-markup;region-by-stream;exc-repr;prose-exc-tier;"
    "comfyui-marker;hub-request-id;hip-errors;raise-glued;os-error-line;wrapped-next-line;quoted-error;"
    "telling-not-traceback;prose-quote-string;cli-error-line;setuptools-command-failed;bare-fatal-error;pip-wrapper-code;debugger-note;"
    "argparse-evidence;program-error-line;errno-line;double-quoted-error;warning-source-rescan;abort-and-note-weak;"
    "empty-quote-line;program-warning-line;cmake-message;warning-sign;bare-date-time;header-only-traceback;code-only-error;validation-field-line;error-mapping;private-exception-class;exception-indented-as-code"
)


def raw_tokens(text: str) -> list[str]:
    """Lower-cased words and numbers of text with ANSI codes, launcher prefixes and markdown fences removed."""
    lines = (clean_line(line).text for line in log_lines(text)[:MAX_DOC_LINES])
    return RAW_TOKEN_RE.findall("\n".join(line for line in lines if not FENCE_LINE_RE.match(line.strip())).lower())


def telling_errors(blocks: Sequence[ErrorBlock]) -> list[ErrorBlock]:
    """The errors that say what failed: not warnings, not symptoms. A paste with none is read by
    its last telling lines as well (in a job log a warning is as likely start-up noise as the
    failure, and a symptom is the consequence of something printed elsewhere)."""
    return [b for b in blocks if b.kind != "warning" and not b.symptom]


def error_region(text: str, blocks: Sequence[ErrorBlock], fallback: Sequence[str]) -> str:
    """The lines of the paste around its errors (informational lines, config dumps and lines
    repeated by other ranks left out); `fallback` lines when it has none."""
    errors = telling_errors(blocks)
    if errors:
        return _lines_around(text, errors)
    # Only a warning or a symptom: in a job log that is as likely start-up noise as the failure,
    # so the paste's last telling lines (where a job dies) are read with it.
    head = _lines_around(text, blocks[:1]) if blocks else ""
    return "\n".join([head, *fallback]) if head else "\n".join(fallback)


def root_lines(text: str, root: ErrorBlock) -> str:
    """The root error's own lines, as the error region reads them (without its neighbours)."""
    return _lines_around(text, (root,), before=0, after=0)


def entry_raw_text(excerpt: str) -> str:
    """What an entry's problem text is matched by: a short report whole; a job log (from
    ENTRY_REGION_MIN_LINES lines) by its error region, as a paste is, so that the job's own start-up
    lines, which the next job log of the same pipeline prints too, are no evidence for it."""
    if excerpt.count("\n") < ENTRY_REGION_MIN_LINES:
        return excerpt
    choice = select_root(scan_log(excerpt))
    fallback = telling_lines(excerpt, quiet_if_nothing_else=choice.root is None)
    return error_region(excerpt, choice.blocks, fallback) or excerpt


def after_block(text: str, block: ErrorBlock | None) -> str:
    """What the paste printed after a block's last line (all of it when there is no block)."""
    return text if block is None else "\n".join(log_lines(text)[block.line_end :])


def _lines_around(
    text: str, blocks: Sequence[ErrorBlock], before: int = REGION_BEFORE, after: int = REGION_AFTER
) -> str:
    lines = log_lines(text)
    numbers: set[int] = set()
    for b in blocks:
        # The lines around an error that another process printed (a worker's start-up notice beside
        # the driver's error) are that process's, not the error's surroundings.
        stream = process_tag(b.prefix)
        numbers.update(
            n
            for n in range(max(1, b.line_start - before), min(len(lines), b.line_end + after) + 1)
            if b.line_start <= n <= b.line_end or line_stream(lines[n - 1]) == stream
        )
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


# BM25 of the raw problem text: bm25s's defaults (Lucene's formula), which it was built with first.
RAW_K1, RAW_B = 1.5, 0.75
# BM25 of the signature and remedy tokens.
SIGNATURE_K1, SIGNATURE_B = 1.2, 0.75


def lucene_idf(n: int, df: np.ndarray | int) -> np.ndarray | float:
    return np.log(1.0 + (n - np.asarray(df, dtype=np.float64) + 0.5) / (np.asarray(df, dtype=np.float64) + 0.5))


def raw_bm25_weights(tf: np.ndarray, lengths: np.ndarray, offsets: np.ndarray, words: np.ndarray) -> np.ndarray:
    """bm25s's "lucene" score of each (entry, word): idf(df) · tf / (tf + k1·(1 − b + b·len/avg)),
    in float32 as bm25s stores it. Entry i's words are words[offsets[i]:offsets[i + 1]]."""
    avg = float(lengths.mean()) if len(lengths) else 1.0
    idf = np.asarray(lucene_idf(len(lengths), np.bincount(words)), dtype=np.float32)

    def chunk(rows: np.ndarray, at: slice) -> np.ndarray:
        tf32 = tf[at].astype(np.float32)
        tfc = tf32 / (RAW_K1 * ((1 - RAW_B) + RAW_B * lengths[rows] / avg) + tf32)
        return (idf[words[at]] * tfc).astype(np.float32)

    return _by_entry_chunks(offsets, chunk)


def signature_bm25_weights(tf: np.ndarray, lengths: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The term part of BM25 over signature tokens (the IDF is applied per query, from document
    frequencies that may span several indexes): tf·(k1+1) / (tf + k1·(1 − b + b·len/avg))."""
    avg = float(lengths.mean()) if len(lengths) else 1.0

    def chunk(rows: np.ndarray, at: slice) -> np.ndarray:
        tf64 = tf[at].astype(np.float64)
        norm = SIGNATURE_K1 * (1 - SIGNATURE_B + SIGNATURE_B * lengths[rows] / (avg or 1.0))
        return (tf64 * (SIGNATURE_K1 + 1) / (tf64 + norm)).astype(np.float32)

    return _by_entry_chunks(offsets, chunk)


def _by_entry_chunks(
    offsets: np.ndarray, weigh: Callable[[np.ndarray, slice], np.ndarray], entries: int = 50_000
) -> np.ndarray:
    """Weights computed for a chunk of entries at a time, so that the float64 temporaries of a
    million entries' tens of millions of postings never exist at once."""
    out = np.empty(int(offsets[-1]), dtype=np.float32)
    for first in range(0, len(offsets) - 1, entries):
        last = min(first + entries, len(offsets) - 1)
        at = slice(int(offsets[first]), int(offsets[last]))
        rows = np.repeat(np.arange(first, last), np.diff(offsets[first : last + 1]))
        out[at] = weigh(rows, at)
    return out


class Postings:
    """Per-(entry, word) weights as a sparse matrix read by word (CSC; float32 weights, int32
    entry positions sorted within each word). A query's score of an entry is the sum, over the
    query's words, of a per-word multiplier times the entry's weight for that word.

    `top` does not sum the long lists of the words most entries share (MaxScore): the most a
    word can add is its multiplier times its largest weight; the words whose most, added up,
    stays below a k-th best score already found are not summed, and the best entries within
    reach of that score are completed from them by binary search. Past READ_BUDGET postings the
    remaining lists are treated the same way, which is approximate; its recall against `exact`
    (every list summed) is measured by bench/scale.py."""

    def __init__(self, offsets: np.ndarray, words: np.ndarray, weights: np.ndarray, n_words: int) -> None:
        """`offsets`, `words`, `weights`: the matrix by entry (CSR) as built; read by word from here."""
        n = len(offsets) - 1
        by_entry = csr_matrix((weights, words, offsets), shape=(n, max(1, n_words)))
        by_word = by_entry.tocsc()
        del by_entry
        by_word.sort_indices()
        self.n = n
        self.indptr = by_word.indptr.astype(np.int64)
        self.indices = by_word.indices.astype(np.int32, copy=False)
        self.data = by_word.data.astype(np.float32, copy=False)
        self.df = np.diff(self.indptr).astype(np.int32)
        nonempty = self.df > 0
        self.col_max = np.zeros(len(self.df), dtype=np.float32)
        if nonempty.any():
            self.col_max[nonempty] = np.maximum.reduceat(self.data, self.indptr[:-1][nonempty])

    ARRAYS = ("indptr", "indices", "data", "df", "col_max")

    @classmethod
    def from_arrays(cls, n: int, arrays: dict[str, np.ndarray]) -> Postings:
        """The index as `arrays` (those named in ARRAYS, e.g. memory-mapped files) hold it."""
        self = cls.__new__(cls)
        self.n = n
        for name in cls.ARRAYS:
            setattr(self, name, arrays[name])
        return self

    @classmethod
    def empty(cls) -> Postings:
        return cls(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32), 1)

    def column(self, col: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self.indptr[col], self.indptr[col + 1]
        return self.indices[start:end], self.data[start:end]

    def holds(self, col: int, positions: np.ndarray) -> np.ndarray:
        """Which of the entries at `positions` have the word (a boolean per position)."""
        holders = self.column(col)[0]
        if not len(holders) or not len(positions):
            return np.zeros(len(positions), dtype=bool)
        at = np.searchsorted(holders, positions)
        return holders[np.minimum(at, len(holders) - 1)] == positions

    def weights_at(self, col: int, positions: np.ndarray) -> np.ndarray:
        """The weight of the word in each of the entries at `positions` (0 where absent)."""
        holders, data = self.column(col)
        out = np.zeros(len(positions), dtype=np.float64)
        if not len(holders) or not len(positions):
            return out
        at = np.minimum(np.searchsorted(holders, positions), len(holders) - 1)
        hit = holders[at] == positions
        out[hit] = data[at[hit]]
        return out

    def scores(self, cols: Sequence[int] | np.ndarray, mults: Sequence[float] | np.ndarray) -> np.ndarray:
        """Every entry's score (the exact path: each word's whole list is summed)."""
        out = np.zeros(self.n, dtype=np.float64)
        for col, m in zip(cols, mults, strict=True):
            idx, data = self.column(col)
            out[idx] += m * data
        return out

    def top(self, cols: Sequence[int], mults: Sequence[float], k: int, exact: bool = False) -> list[tuple[int, float]]:
        """The `k` best entries with a positive score as (position, score), best first."""
        if not len(cols) or k <= 0 or not self.n:
            return []
        col_arr = np.asarray(cols, dtype=np.int64)
        mult = np.asarray(mults, dtype=np.float64)
        if exact:
            return _best(self.scores(col_arr, mult), np.arange(self.n), k)
        if int(self.df[col_arr].sum()) <= SHORT_QUERY_POSTINGS:
            return _best(*_summed(self, col_arr, mult), k)
        reach = mult * self.col_max[col_arr]  # the most each word adds to an entry's score
        # 1. A first k-th best score: the full scores of the best entries of the shortest lists.
        # (a hair below it, as the same score summed in another order may differ in its last bits)
        theta = self._first_kth(col_arr, mult, k) * (1 - 1e-6)
        # 2. The words whose lists need not be read: those (least reach first) whose reach adds
        #    up to less than that score; an entry that has none of the other words cannot make it.
        by_reach = np.argsort(reach, kind="stable")
        # (a hair of slack, so rounding never drops an entry)
        skipped = by_reach[np.cumsum(reach[by_reach]) * (1 + 1e-6) < theta]
        read = np.setdiff1d(np.arange(len(col_arr)), skipped)
        # In a very large index even those lists can be long: read them shortest first up to a
        # budget of postings; the others are looked up like the skipped ones. An entry holding
        # none of the words read is then missed: the one shortcut that is not exact.
        read = read[np.argsort(self.df[col_arr[read]], kind="stable")]
        fits = np.cumsum(self.df[col_arr[read]]) <= READ_BUDGET
        fits[0] = True
        skipped = np.concatenate([skipped, read[~fits]])
        skipped = skipped[np.argsort(reach[skipped], kind="stable")]
        read = read[fits]
        total, within = _summed(self, col_arr[read], mult[read])
        # 3. Complete, from the skipped lists, the scores of the entries within reach of it, by
        #    binary search. Entries whose partial score cannot reach it are dropped; of the rest,
        #    only the best RERANK·k by partial score are completed (the skipped words are the
        #    commonest and add little, alike, to every entry that has them): `exact` reads all.
        if len(skipped):
            keep = np.flatnonzero(total + float(reach[skipped].sum()) * (1 + 1e-6) >= theta)
            if len(keep) > RERANK * k:
                keep = keep[_at_least_kth(total[keep], RERANK * k)]
            total, within = total[keep], within[keep]
            # Most reach first; after each list, what the rest can add shrinks, the k-th best
            # partial score is a lower bound too, and entries that can no longer reach it go.
            left = float(reach[skipped].sum())
            for j in skipped[::-1]:
                total += mult[j] * self.weights_at(int(col_arr[j]), within)
                left -= float(reach[j])
                if len(total) > k:
                    kth = float(np.partition(total, len(total) - k)[len(total) - k])
                    theta = max(theta, kth * (1 - 1e-6))
                    keep = np.flatnonzero(total + max(left, 0.0) * (1 + 1e-6) >= theta)
                    total, within = total[keep], within[keep]
        return _best(total, within, k)

    def _first_kth(self, cols: np.ndarray, mult: np.ndarray, k: int, seed_postings: int = 5_000) -> float:
        """A lower bound of the k-th best score: the k-th best full score among the entries that
        score best on the words with the shortest lists (0 when fewer than k are found)."""
        order = np.argsort(self.df[cols], kind="stable")
        within = np.cumsum(self.df[cols][order]) <= seed_postings
        within[0] = True
        partial, docs = _summed(self, cols[order[within]], mult[order[within]])
        if len(docs) < k:
            return 0.0
        if len(docs) > 4 * k:
            docs = np.sort(docs[np.argpartition(-partial, 4 * k - 1)[: 4 * k]])
        full = np.zeros(len(docs), dtype=np.float64)
        for col, m in zip(cols, mult, strict=True):
            full += m * self.weights_at(int(col), docs)
        return float(np.partition(full, len(full) - k)[len(full) - k])


# Entries completed per wanted one when the skipped words leave many within reach, and postings
# summed in full at most. Chosen on a million-entry knowledge base with
# `bench/scale.py --sweep` (the README's table): the recall of summing every list at about two
# thirds of its latency, where 50 and 250,000 lost recall against exact ranking.
RERANK = 400
READ_BUDGET = 1_000_000
SHORT_QUERY_POSTINGS = 50_000  # below this many postings, summing them all is as quick as skipping


def _summed(index: Postings, cols: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The summed scores of the words' lists, and the (sorted) positions of the entries they hold."""
    if not len(cols):
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    postings = int(index.df[cols].sum())
    if postings * 8 < index.n:  # few: sort the postings rather than touch every entry
        idx = np.concatenate([index.column(int(c))[0] for c in cols])
        val = np.concatenate([m * index.column(int(c))[1] for c, m in zip(cols, mult, strict=True)])
        docs, inverse = np.unique(idx, return_inverse=True)
        return np.bincount(inverse, weights=val, minlength=len(docs)), docs
    acc = np.zeros(index.n, dtype=np.float64)
    hit = np.zeros(index.n, dtype=bool)
    for c, m in zip(cols, mult, strict=True):
        idx, data = index.column(int(c))
        acc[idx] += m * data
        hit[idx] = True
    docs = np.flatnonzero(hit)
    return acc[docs], docs


def _best(scores: np.ndarray, positions: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k best (position, score) with a positive score, best first; among equal scores the
    first position wins, so which of many tied entries are kept does not depend on the path."""
    keep = scores > 0
    scores, positions = scores[keep], positions[keep]
    chosen = _at_least_kth(scores, k)
    scores, positions = scores[chosen], positions[chosen]
    order = np.lexsort((positions, -scores))[:k]
    return [(int(positions[j]), float(scores[j])) for j in order]


def _at_least_kth(scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the scores at least as high as the k-th highest (all of them when fewer)."""
    if len(scores) <= k:
        return np.arange(len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    return np.flatnonzero(scores >= kth)
