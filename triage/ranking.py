"""Rank knowledge-base entries against a pasted failure. Pure Python, no Django.

Each candidate gets a feature vector comparing its signature with the query's:
message similarity (TF-IDF over masked message tokens), exception-type relation, frame
similarity weighted by distance from the raise and by rarity across the knowledge base
(in the spirit of TraceSim), lexical coverage of the query by the entry's text, dense
similarity of the compact signature texts, an exact-fingerprint flag and framework
agreement. A logistic model fitted on labelled triage data (bench/grouped_cv.py) turns the
features into a calibrated probability that the entry is the right fix.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kb.normalize import error_family, tokenize
from kb.signature import Signature, exception_relation
from triage.lexical import RawLexicalIndex, SignatureBM25, raw_coverage, raw_novelty

FEATURES = (
    "msg_cos",
    "ctx_cos",
    "type_rel",
    "frame_sim",
    "coverage",
    "fingerprint",
    "msg_cover_entry",
    "raw_cover",
    "raw_cover_margin",
)
WEIGHTS_PATH = Path(__file__).with_name("ranker_weights.json")
FRAME_DECAY = 0.35
VERSION_TOKEN_RE = re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?![\w.])")


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


@dataclass(frozen=True)
class Query:
    sig: Signature
    msg_tokens: tuple[str, ...]
    ctx_tokens: tuple[str, ...]
    text_tokens: tuple[str, ...]
    raw_tokens: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    doc_id: int
    features: dict[str, float]
    score: float


@dataclass(frozen=True)
class RankerModel:
    """Two logistic models: `weights` score each candidate (is this entry the right one?);
    `answer_weights` score the ranked list as a whole (is its first entry the fix?), which decides
    the verdict against `threshold`."""

    weights: dict[str, float]
    bias: float
    threshold: float  # a confident match from here up (on the answer probability)
    floor: float = 0.0  # a candidate scoring below this is not worth showing at all
    answer_weights: dict[str, float] = field(default_factory=dict)
    answer_bias: float = 0.0
    meta: dict[str, object] = field(default_factory=dict)

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(name, 0.0) * features.get(name, 0.0) for name in FEATURES)
        return _sigmoid(z)

    def answer_probability(self, scores: Sequence[float], top: dict[str, float]) -> float:
        feats = answer_features(scores, top)
        return _sigmoid(self.answer_bias + sum(self.answer_weights.get(k, 0.0) * v for k, v in feats.items()))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


ANSWER_FEATURES = (
    "logit_top",
    "gap",
    "raw_cover",
    "raw_cover_margin",
    "coverage",
    "msg_cos",
    "dense",
    "type_rel",
    "novelty",
)


def answer_features(scores: Sequence[float], top: dict[str, float]) -> dict[str, float]:
    """What says the first candidate is the fix, beyond its own score: how far it is ahead of
    the second, and how much of the paste it explains at all."""
    if not scores:
        return dict.fromkeys(ANSWER_FEATURES, 0.0)
    p1 = min(max(scores[0], 1e-6), 1 - 1e-6)
    p2 = scores[1] if len(scores) > 1 else 0.0
    out = {"logit_top": math.log(p1 / (1 - p1)), "gap": p1 - p2}
    out.update({k: top.get(k, 0.0) for k in ANSWER_FEATURES[2:]})
    return out


def load_model(path: Path = WEIGHTS_PATH) -> RankerModel:
    data = json.loads(path.read_text())
    return RankerModel(
        weights={k: float(v) for k, v in data["weights"].items()},
        bias=float(data["bias"]),
        threshold=float(data["threshold"]),
        floor=float(data.get("floor", 0.0)),
        answer_weights={k: float(v) for k, v in data.get("answer_weights", {}).items()},
        answer_bias=float(data.get("answer_bias", 0.0)),
        meta=data.get("meta", {}),
    )


def frame_tokens(frames: Iterable[str]) -> list[str]:
    out: list[str] = []
    for frame in frames:
        module, _, func = frame.partition(":")
        out.extend(tokenize(func))
        out.extend(tokenize(module.rsplit(".", 1)[-1]))
    return out


def message_tokens(masked: str, raw: str) -> tuple[str, ...]:
    """Tokens of a masked message, plus the version numbers of the raw one.

    Versions are masked for the fingerprint, but a requirement such as trl<=0.9.6 is the same
    for every user who hits it, so its versions help to match.
    """
    return tuple(tokenize(masked)) + tuple("v" + v for v in VERSION_TOKEN_RE.findall(raw))


def query_from_signature(sig: Signature, extra_text: str = "", raw_tokens: Sequence[str] = ()) -> Query:
    msg = message_tokens(sig.message, sig.raw_message)
    ctx = tuple(t for c in sig.context for t in tokenize(c))
    text = tuple(list(msg) + list(ctx) + frame_tokens(sig.frames[:8]) + tokenize(extra_text))
    return Query(sig=sig, msg_tokens=msg, ctx_tokens=ctx, text_tokens=text, raw_tokens=tuple(raw_tokens))


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


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def frame_similarity(q: Sequence[str], e: Sequence[str], corpus: Corpus) -> float:
    """Cosine of frame vectors weighted by position from the raise and by rarity."""
    if not q or not e:
        return 0.0

    def vec(frames: Sequence[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for pos, f in enumerate(frames[:12]):
            w = math.exp(-FRAME_DECAY * pos) * corpus.idf(corpus.frame_df, f)
            out[f] = max(out.get(f, 0.0), w)
        return out

    vq, ve = vec(q), vec(e)
    dot = sum(w * ve.get(f, 0.0) for f, w in vq.items())
    nq = math.sqrt(sum(w * w for w in vq.values()))
    ne = math.sqrt(sum(w * w for w in ve.values()))
    return dot / (nq * ne) if nq and ne else 0.0


def coverage(query_tokens: Sequence[str], doc: Doc, corpus: Corpus) -> float:
    """IDF-weighted share of the query's distinct tokens that the entry's text contains."""
    uniq = set(query_tokens)
    if not uniq:
        return 0.0
    doc_set = set(doc.text_tokens)
    total = sum(corpus.idf(corpus.text_df, t) for t in uniq)
    hit = sum(corpus.idf(corpus.text_df, t) for t in uniq if t in doc_set)
    return hit / total if total else 0.0


@dataclass(frozen=True)
class QueryVectors:
    """The query's TF-IDF vectors, computed once per triage rather than once per candidate."""

    msg: dict[str, float]
    msg_ctx: dict[str, float]
    msg_ctx_tokens: tuple[str, ...]


def query_vectors(query: Query, corpus: Corpus) -> QueryVectors:
    both = tuple(query.msg_tokens) + tuple(query.ctx_tokens)
    return QueryVectors(corpus.tfidf(query.msg_tokens), corpus.tfidf(both), both)


def features(query: Query, doc: Doc, corpus: Corpus, dense: float, qv: QueryVectors | None = None) -> dict[str, float]:
    sig = query.sig
    qv = qv or query_vectors(query, corpus)
    doc_msg, doc_ctx = corpus.doc_vectors(doc.id)
    if sig.exc_type and doc.exc_type:
        type_rel = exception_relation(sig.exc_type, doc.exc_type)
    elif sig.pattern and sig.pattern == doc.pattern:
        type_rel = 1.0
    else:
        type_rel = 0.0
    return {
        "msg_cos": cosine(qv.msg, doc_msg),
        "ctx_cos": cosine(qv.msg_ctx, doc_ctx),
        "type_rel": type_rel,
        "frame_sim": frame_similarity(sig.frames, doc.frames, corpus),
        "coverage": coverage(query.text_tokens, doc, corpus),
        "dense": max(0.0, dense),
        "fingerprint": 1.0 if sig.fingerprint == doc.fingerprint else 0.0,
        "framework": 1.0 if sig.framework and sig.framework == doc.framework else 0.0,
        "msg_cover_entry": message_cover(doc.msg_tokens, qv.msg_ctx_tokens, corpus),
    }


def message_cover(entry_tokens: Sequence[str], query_tokens: Sequence[str], corpus: Corpus) -> float:
    """IDF-weighted share of the entry's message words found in the query's errors.

    High when the pasted error contains the known error (numbers aside); low when the two only
    share boilerplate such as "NCCL error in ... NCCL version".
    """
    uniq = set(entry_tokens)
    if not uniq:
        return 0.0
    have = set(query_tokens)
    total = sum(corpus.idf(corpus.msg_df, t) for t in uniq)
    return sum(corpus.idf(corpus.msg_df, t) for t in uniq if t in have) / total if total else 0.0


FAMILY_CONFLICT_FACTOR = 0.01


def family_conflict(q: tuple[str, frozenset[str]] | None, e: tuple[str, frozenset[str]] | None) -> bool:
    """Both messages belong to one family of errors but say different things after its name."""
    if q is None or e is None or q[0] != e[0]:
        return False
    shared = len(q[1] & e[1])
    return shared / min(len(q[1]), len(e[1])) < 0.5


def add_margins(cands: list[tuple[Doc, dict[str, float]]]) -> None:
    """How far each candidate is ahead of the best other one: a clear winner is more
    believable than the best of several equally weak look-alikes. Entries with the same
    fingerprint are the same error seen twice, not competitors."""
    for name, margin in (("raw_cover", "raw_cover_margin"),):
        for doc, feats in cands:
            others = [f[name] for d, f in cands if d.id != doc.id and d.fingerprint != doc.fingerprint]
            feats[margin] = feats[name] - (max(others) if others else 0.0)


def raw_relative_scores(query: Query, corpus: Corpus, pool: int, ids: set[int]) -> dict[int, float]:
    """BM25 of the paste's error region against every entry's problem text, relative to the best
    entry; the `pool` best join the candidates (`ids` is extended in place)."""
    if corpus.raw is None or not query.raw_tokens:
        return {}
    scores = corpus.raw.scores(query.raw_tokens)
    best = float(scores.max()) if len(scores) else 0.0
    if best <= 0:
        return {}
    order = np.argsort(-scores)[:pool]
    ids.update(int(corpus.raw.ids[k]) for k in order if scores[k] > 0 and int(corpus.raw.ids[k]) in corpus.docs)
    pos = corpus.raw.position
    return {i: float(scores[pos[i]]) / best for i in ids if i in pos}


def rank_candidates(
    query: Query,
    corpus: Corpus,
    dense_hits: Sequence[tuple[int, float]],
    dense_of: Callable[[int], float],
    model: RankerModel,
    pool: int = 30,
) -> list[Candidate]:
    """Gather candidates (fingerprint, lexical, dense), score each, best first.

    `dense_hits` are the nearest entries from the vector index; `dense_of` gives the exact
    dense similarity of any entry, so a candidate found lexically is not scored as if dense
    had not seen it.
    """
    ids: set[int] = {i for i, _ in dense_hits if i in corpus.docs}
    ids.update(i for i, _ in corpus.lexical_top(query.text_tokens, pool))
    ids.update(corpus.by_fingerprint.get(query.sig.fingerprint, ()))
    raw_of = raw_relative_scores(query, corpus, pool, ids)
    raw_cover = corpus.raw.coverage(query.raw_tokens, ids) if corpus.raw is not None else {}
    novelty = corpus.raw.novelty(query.raw_tokens) if corpus.raw is not None else 0.0
    qv = query_vectors(query, corpus)
    scored: list[tuple[Doc, dict[str, float]]] = []
    for doc_id in sorted(ids):
        doc = corpus.docs[doc_id]
        if query.sig.kind == "metric" and (doc.kind != "metric" or doc.pattern != query.sig.pattern):
            # A metrics anomaly is identified by its pattern alone; the words of two
            # different anomalies (loss, reward, std...) overlap without meaning anything.
            continue
        feats = features(query, doc, corpus, dense_of(doc_id), qv)
        feats["raw_rel"] = raw_of.get(doc_id, 0.0)
        feats["raw_cover"] = raw_cover.get(doc_id, 0.0)
        feats["novelty"] = novelty  # of the paste, the same for every candidate (read by the answer model)
        scored.append((doc, feats))
    add_margins(scored)
    q_family = error_family(query.sig.message)
    out = []
    for doc, feats in scored:
        score = model.probability(feats)
        if family_conflict(q_family, doc.family):
            # Same family, different failure ("CUDA error: device-side assert" is not "CUDA
            # error: no kernel image"): listed, never confident enough to be the answer.
            feats["family_conflict"] = 1.0
            feats["rule_factor"] = FAMILY_CONFLICT_FACTOR
            score *= FAMILY_CONFLICT_FACTOR
        out.append(Candidate(doc_id=doc.id, features=feats, score=score))
    out.sort(key=lambda c: (-c.score, c.doc_id))
    return out
