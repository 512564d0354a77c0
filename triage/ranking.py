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
from collections.abc import Callable, Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

from kb.normalize import error_family, message_slots, tokenize
from kb.signature import Signature, exception_relation
from triage.corpus import Corpus, Doc

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
    "slot_conflict",
    "type_conflict",
)
# The features the model weighs. The others are still computed (a match's explanation reads them)
# but left out: without all five, grouped CV gave Hit@1 0.938 and answered right 0.879 against
# 0.932 and 0.873 with them (`bench/grouped_cv.py --add F` puts one back; README).
MODEL_FEATURES = ("coverage", "msg_cover_entry", "raw_cover", "raw_cover_margin", "slot_conflict", "type_conflict")
# Evidence against a candidate; every other feature is evidence for it. The fit keeps the
# weights to those signs, so correlated features cannot flip one ("the same exception type
# lowers the score") to fit a few hundred queries.
AGAINST = frozenset({"slot_conflict", "type_conflict"})
WEIGHTS_PATH = Path(__file__).with_name("ranker_weights.json")
FRAME_DECAY = 0.35
VERSION_TOKEN_RE = re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?![\w.])")


@dataclass(frozen=True)
class Query:
    sig: Signature
    msg_tokens: tuple[str, ...]
    ctx_tokens: tuple[str, ...]
    text_tokens: tuple[str, ...]
    raw_tokens: tuple[str, ...] = ()
    slots: tuple[str, ...] = ()
    core_tokens: tuple[str, ...] = ()  # text_tokens without the paste's telling lines
    tail_tokens: tuple[str, ...] = ()  # with a weak root: the words of the paste's last few telling lines
    # Other readings of the paste's raw words (the root's own lines; the last telling lines), each
    # scored on its own: a candidate's raw cover is the largest share, so none dilutes another.
    raw_alternatives: tuple[tuple[str, ...], ...] = ()


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
        z = self.bias + sum(w * features.get(name, 0.0) for name, w in self.weights.items())  # what was fitted
        return _sigmoid(z)

    def answer_probability(self, scores: Sequence[float], top: dict[str, float]) -> float:
        feats = answer_features(scores, top)
        return _sigmoid(self.answer_bias + sum(self.answer_weights.get(k, 0.0) * v for k, v in feats.items()))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


# Under grouped CV the answer model did best on these two alone (answered right 0.844 against
# 0.834 with the first candidate's coverage, message, dense, type and novelty features added).
ANSWER_FEATURES: tuple[str, ...] = ("logit_top", "gap")


def answer_features(scores: Sequence[float], top: dict[str, float]) -> dict[str, float]:
    """What says the first candidate is the fix, beyond its own score: how far it is ahead of
    the second (`top`, the first candidate's features, is there for models that read them)."""
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


def query_from_signature(
    sig: Signature,
    extra_text: str = "",
    raw_tokens: Sequence[str] = (),
    tail_text: str = "",
    raw_alternatives: Sequence[Sequence[str]] = (),
) -> Query:
    msg = message_tokens(sig.message, sig.raw_message)
    ctx = tuple(t for c in sig.context for t in tokenize(c))
    core = tuple(list(msg) + list(ctx) + frame_tokens(sig.frames[:8]))
    text = core + tuple(tokenize(extra_text))
    return Query(
        sig=sig,
        msg_tokens=msg,
        ctx_tokens=ctx,
        text_tokens=text,
        raw_tokens=tuple(raw_tokens),
        slots=message_slots(sig.raw_message),
        core_tokens=core,
        tail_tokens=tuple(tokenize(tail_text)),
        raw_alternatives=tuple(tuple(a) for a in raw_alternatives if a and set(a) != set(raw_tokens)),
    )


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


@dataclass(frozen=True)
class WeightedTokens:
    """A query's distinct tokens with their IDF, weighed once per triage, not once per candidate."""

    weights: tuple[tuple[str, float], ...]
    total: float

    def share(self, doc_tokens: AbstractSet[str]) -> float:
        """IDF-weighted share of these tokens that `doc_tokens` contains."""
        if not self.total:
            return 0.0
        return sum(w for t, w in self.weights if t in doc_tokens) / self.total


def weighted_tokens(tokens: Sequence[str], corpus: Corpus) -> WeightedTokens:
    weights = tuple((t, corpus.idf(corpus.text_df, t)) for t in dict.fromkeys(tokens))
    return WeightedTokens(weights, sum(w for _, w in weights))


def coverage(query_tokens: Sequence[str], doc: Doc, corpus: Corpus) -> float:
    """IDF-weighted share of the query's distinct tokens that the entry's text contains."""
    return weighted_tokens(query_tokens, corpus).share(set(doc.text_tokens))


@dataclass(frozen=True)
class QueryVectors:
    """The query's TF-IDF vectors, computed once per triage rather than once per candidate."""

    msg: dict[str, float]
    msg_ctx: dict[str, float]
    msg_ctx_tokens: tuple[str, ...]
    # The coverage variants (`features`): every query word; without the telling lines; the last few alone.
    covered: tuple[WeightedTokens, ...]


def query_vectors(query: Query, corpus: Corpus) -> QueryVectors:
    both = tuple(query.msg_tokens) + tuple(query.ctx_tokens)
    variants = [query.text_tokens]
    if len(query.core_tokens) < len(query.text_tokens):
        variants.append(query.core_tokens)
    if query.tail_tokens:
        variants.append(query.tail_tokens)
    covered = tuple(weighted_tokens(v, corpus) for v in variants)
    return QueryVectors(corpus.tfidf(query.msg_tokens), corpus.tfidf(both), both, covered)


def features(query: Query, doc: Doc, corpus: Corpus, dense: float, qv: QueryVectors | None = None) -> dict[str, float]:
    sig = query.sig
    qv = qv or query_vectors(query, corpus)
    doc_msg, doc_ctx = corpus.doc_vectors(doc.id)
    doc_words = set(doc.text_tokens)
    if sig.exc_type and doc.exc_type:
        type_rel = exception_relation(sig.exc_type, doc.exc_type)
    elif sig.pattern and sig.pattern == doc.pattern:
        type_rel = 1.0
    else:
        type_rel = 0.0
    covs = [w.share(doc_words) for w in qv.covered]
    # An entry that the paste's last lines alone cover best is matched by them, not by the weak root:
    # what the root's type and values say (a start-up deprecation notice's) is no evidence against it.
    by_tail = bool(query.tail_tokens) and covs[-1] > max(covs[:-1])
    return {
        # Two named exception types that are unrelated, as opposed to a side that names none.
        "type_conflict": float(bool(sig.exc_type and doc.exc_type) and type_rel == 0.0 and not by_tail),
        "msg_cos": cosine(qv.msg, doc_msg),
        "ctx_cos": cosine(qv.msg_ctx, doc_ctx),
        "type_rel": type_rel,
        "frame_sim": frame_similarity(sig.frames, doc.frames, corpus),
        # With a weak root the paste's last telling lines join the query words (they may be the
        # report); inside a job log they are mostly the job's, so they may add coverage, never dilute
        # it; and its last few lines, where a job that dies prints why, are read on their own too.
        "coverage": max(covs),
        "dense": max(0.0, dense),
        # Two pastes with no error in them share the empty signature's fingerprint: not a match.
        "fingerprint": 1.0 if sig.fingerprint == doc.fingerprint and query.msg_tokens else 0.0,
        "msg_cover_entry": message_cover(doc.msg_tokens, qv.msg_ctx_tokens, corpus),
        # One wording with another word swapped inside it ("type set" vs "type Tensor") names
        # another thing as well as a quoted name does.
        "slot_conflict": 0.0
        if by_tail
        else max(
            slot_agreement(query.slots, doc.slots)["slot_conflict"],
            word_substitution(query.msg_tokens, doc.msg_tokens),
        ),
    }


def slot_agreement(q: Sequence[str], e: Sequence[str]) -> dict[str, float]:
    """Whether the two messages' distinguishing values (kb.normalize.message_slots) disagree:
    each side names something the other does not (the same wording about a different name,
    library or code). A side that names nothing is no evidence. (Their Jaccard overlap was
    measured as a feature too and added nothing under grouped CV.)"""
    qs, es = set(q), set(e)
    both = qs & es
    q_only = {a for a in qs - both if not any(_sibling_modules(a, b) for b in es - both)}
    e_only = {b for b in es - both if not any(_sibling_modules(a, b) for a in qs - both)}
    return {"slot_conflict": float(bool(qs and es) and bool(q_only) and bool(e_only))}


# A dotted module path of three parts or more: `timm.models.layers.helpers`.
MODULE_PATH_RE = re.compile(r"^[a-z_][\w#]*(?:\.[a-z_#][\w#]*){2,}$")


def _sibling_modules(a: str, b: str) -> bool:
    """Two modules of one package (`timm.models.layers.helpers`, `timm.models.layers.drop`): a
    package that moved or dropped its submodules names whichever one the user's code imports, so
    the two name one failure, not two."""
    return bool(MODULE_PATH_RE.match(a) and MODULE_PATH_RE.match(b)) and a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0]


WORDING_TOKENS = 32


def word_substitution(q: Sequence[str], e: Sequence[str]) -> float:
    """1.0 when the two messages are one wording with a word swapped inside it (`swapped_words`)."""
    return 1.0 if swapped_words(q, e) else 0.0


def swapped_words(q: Sequence[str], e: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The words swapped when the two messages are one wording with a word swapped inside it
    ("Object of type set is not JSON serializable" against "… type Tensor …": (("set",), ("tensor",))):
    most of the entry's words line up in order, and between two aligned runs each side has one or
    two words that the other never says. Words swapped at either end are a cut paste's or a
    version's, not counted. Only the first WORDING_TOKENS words of each are compared: a message of
    many repeated words (a state dict's list of missing keys) would otherwise take milliseconds per
    candidate."""
    q, e = q[:WORDING_TOKENS], e[:WORDING_TOKENS]
    if len(q) < 3 or len(e) < 3:
        return None
    qs, es = set(q), set(e)
    if sum(t in qs for t in e) < max(3, 0.6 * len(e)):
        return None  # too few of the entry's words in the paste for any alignment to line up most of them
    sm = SequenceMatcher(None, q, e, autojunk=False)
    if sum(b.size for b in sm.get_matching_blocks()) < max(3, 0.6 * len(e)):
        return None
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        inside = i1 > 0 and j1 > 0 and i2 < len(q) and j2 < len(e)
        a, b = tuple(q[i1:i2]), tuple(e[j1:j2])
        if op != "replace" or not inside or len(a) > 2 or len(b) > 2:
            continue
        if all(len(t) >= 3 and t.isalpha() for t in (*a, *b)) and not (set(a) & es or set(b) & qs):
            return a, b
    return None


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


MIN_WORDS_WITHOUT_ERROR = 4
MIN_WORDS_WITH_ERROR = 2
# Words any error report has, which say nothing about which failure it is: a bare traceback
# header, "CUDA error" or "NCCL error" alone name no failure.
REPORT_BOILERPLATE = frozenset({"traceback", "most", "recent", "call", "last", "error", "exception", "warning", "warn"})


def too_little_to_match(query: Query, has_error: bool) -> bool:
    """A paste with hardly a word that tells failures apart ("it doesnt work", a bare traceback
    header, "CUDA error"): a shared word is no evidence, so it is never a confident match
    (triage and grouped CV both apply this)."""
    words = set(query.text_tokens) - REPORT_BOILERPLATE
    return len(words) < (MIN_WORDS_WITH_ERROR if has_error else MIN_WORDS_WITHOUT_ERROR)


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
        # The best of each fingerprint; a candidate's best other is the best of another fingerprint.
        best: dict[str, float] = {}
        for doc, feats in cands:
            best[doc.fingerprint] = max(best.get(doc.fingerprint, feats[name]), feats[name])
        top2 = sorted(best.items(), key=lambda kv: -kv[1])[:2]
        for doc, feats in cands:
            others = [v for fp, v in top2 if fp != doc.fingerprint]
            feats[margin] = feats[name] - (others[0] if others else 0.0)


def raw_top(query: Query, corpus: Corpus, pool: int) -> list[int]:
    """The `pool` entries whose problem text best matches the paste's error region (BM25)."""
    if corpus.raw is None or not query.raw_tokens:
        return []
    return [i for i in corpus.raw.top(query.raw_tokens, pool) if i in corpus.docs]


def rank_candidates(
    query: Query,
    corpus: Corpus,
    dense_hits: Sequence[tuple[int, float]],
    dense_of: Callable[[Sequence[int]], dict[int, float]],
    model: RankerModel,
    pool: int = 30,
    exclude: Collection[int] = (),
) -> list[Candidate]:
    """Gather candidates (fingerprint, lexical, dense), score each, best first.

    `dense_hits` are the nearest entries from the vector index; `dense_of` gives the exact
    dense similarity of any entries (read at once), so a candidate found lexically is not
    scored as if dense had not seen it.
    """
    ids: set[int] = {i for i, _ in dense_hits if i in corpus.docs}
    ids.update(i for i, _ in corpus.lexical_top(query.text_tokens, pool))
    if query.msg_tokens:
        ids.update(corpus.by_fingerprint.get(query.sig.fingerprint, ()))
    ids.update(raw_top(query, corpus, pool))
    ids.difference_update(exclude)
    ids = {i for i in ids if i in corpus.docs}  # an index may still name an entry deleted since
    raw_cover = corpus.raw.coverage(query.raw_tokens, ids) if corpus.raw is not None else {}
    for alternative in query.raw_alternatives if corpus.raw is not None else ():
        other = corpus.raw.coverage(alternative, ids)
        raw_cover = {i: max(v, other.get(i, 0.0)) for i, v in raw_cover.items()}
    qv = query_vectors(query, corpus)
    dense = dense_of(sorted(ids))
    scored: list[tuple[Doc, dict[str, float]]] = []
    for doc_id in sorted(ids):
        doc = corpus.docs[doc_id]
        if query.sig.kind == "metric" and (doc.kind != "metric" or doc.pattern != query.sig.pattern):
            # A metrics anomaly is identified by its pattern alone; the words of two
            # different anomalies (loss, reward, std...) overlap without meaning anything.
            continue
        feats = features(query, doc, corpus, dense.get(doc_id, 0.0), qv)
        feats["raw_cover"] = raw_cover.get(doc_id, 0.0)
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
    out = team_before_pack(out, corpus)
    # Among equal scores, the entry with the very same error (fingerprint) first.
    out.sort(
        key=lambda c: (
            -c.score,
            not c.features.get("fingerprint"),
            not corpus.docs[c.doc_id].has_fix,
            corpus.docs[c.doc_id].origin == "pack",
            c.doc_id,
        )
    )
    return out


def team_before_pack(cands: list[Candidate], corpus: Corpus) -> list[Candidate]:
    """A starter-pack entry never outranks a team entry of the same failure (same fingerprint) that
    has a fix: the team's own words about its own setup come first; the pack's stays listed below.
    A team entry that still needs a fix does not push the pack's fix down."""
    best_team: dict[str, float] = {}
    for c in cands:
        doc = corpus.docs[c.doc_id]
        if doc.origin != "pack" and doc.has_fix:  # a team entry still waiting for its fix does not hide one
            best_team[doc.fingerprint] = max(best_team.get(doc.fingerprint, 0.0), c.score)
    out = []
    for c in cands:
        doc = corpus.docs[c.doc_id]
        team = best_team.get(doc.fingerprint)
        if doc.origin == "pack" and team is not None and c.score >= team:
            c = Candidate(doc_id=c.doc_id, features={**c.features, "below_team": 1.0}, score=team * 0.99)
        out.append(c)
    return out
