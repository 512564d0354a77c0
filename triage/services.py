"""Triage a pasted log: find its root error, rank known entries, decide match or no match."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from kb.embedding import get_embedder
from kb.logscan import ErrorBlock
from kb.redact import redact
from kb.rootcause import RootChoice
from kb.signature import Signature, compact_text, signature_from_text, telling_lines
from kb.vector_index import get_index
from triage.explain import Explanation, explain_match
from triage.lexical import error_region, raw_tokens
from triage.ranking import Query, RankerModel, load_model, query_from_signature, rank_candidates
from triage.snapshot import Snapshot, get_snapshot

logger = logging.getLogger("fixbase.triage")

DENSE_POOL = 30


@dataclass(frozen=True)
class SourceView:
    filename: str
    line_start: int
    line_end: int
    remedy_markdown: str = ""  # the fix given where this occurrence was seen


@dataclass(frozen=True)
class Match:
    entry_id: int
    title: str
    score: float
    remedy_markdown: str
    sources: tuple[SourceView, ...]
    explanation: Explanation
    features: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TriageResult:
    verdict: str
    signature: Signature
    matches: tuple[Match, ...]
    notes: tuple[str, ...]
    root_lines: tuple[int, int] | None
    threshold: float
    floor: float = 0.0
    secondary: tuple[ErrorBlock, ...] = ()
    confidence: float = 0.0  # the probability that the first match is the fix


@lru_cache(maxsize=1)
def ranker_model() -> RankerModel:
    return load_model()


def match_threshold() -> float:
    from django.conf import settings

    configured = float(settings.FIXBASE_MATCH_THRESHOLD)
    return configured if configured >= 0 else ranker_model().threshold


def verdict_of(best: float | None, threshold: float) -> str:
    """ "match" when the best candidate is confident enough to be the fix; "possible" when some
    candidates are worth a look (listed, never presented as the fix); else "no_match"."""
    if best is None:
        return "no_match"
    return "match" if best >= threshold else "possible"


def triage_log(text: str, top_k: int = 5, min_score: float | None = None) -> TriageResult:
    """1. Scan the log and choose the root error; 2. embed its compact signature;
    3. gather and score candidates, keep those above the model's floor (or `min_score`);
    4. verdict by the answer model's confidence that the first one is the fix."""
    text = redact(text).text  # a pasted secret is never echoed back, stored or embedded
    sig, choice = signature_from_text(text, symptom_context=False)
    # With no error in it, the paste's own words (a hang described in words) are the query.
    telling = telling_lines(text)
    region = error_region(text, (choice.root, *choice.secondary) if choice.root else (), telling)
    query = query_from_signature(
        sig, extra_text="\n".join(telling) if choice.root is None else "", raw_tokens=raw_tokens(region)
    )
    snap = get_snapshot()
    embedder = get_embedder()
    qvec = embedder.encode([compact_text(sig)])[0]
    dense_hits = get_index().search(qvec, DENSE_POOL, embedder.name)

    def dense_of(entry_id: int) -> float:
        vec = snap.vector(entry_id)
        return float(np.dot(vec, qvec)) if vec is not None else 0.0

    model = ranker_model()
    ranked = rank_candidates(query, snap.corpus, dense_hits, dense_of, model)
    threshold = match_threshold()
    floor = model.floor if min_score is None else min_score
    shown = [c for c in ranked if c.score >= floor][:top_k]
    matches = tuple(_match(c.doc_id, c.score, c.features, query, snap, choice, text) for c in shown)
    confidence = model.answer_probability([c.score for c in ranked[:2]], ranked[0].features) if ranked else 0.0
    if ranked and ranked[0].features.get("family_conflict"):
        confidence = 0.0  # a different failure of the same family is never the answer
    verdict = verdict_of(confidence if matches else None, threshold)
    return TriageResult(
        verdict=verdict,
        signature=sig,
        matches=matches,
        notes=choice.notes,
        root_lines=(choice.root.line_start, choice.root.line_end) if choice.root else None,
        threshold=threshold,
        floor=floor,
        secondary=choice.secondary,
        confidence=round(confidence, 4),
    )


def _match(
    entry_id: int, score: float, feats: dict[str, float], query: Query, snap: Snapshot, choice: RootChoice, text: str
) -> Match:
    rec = snap.records[entry_id]
    return Match(
        entry_id=entry_id,
        title=rec.title,
        score=round(score, 4),
        remedy_markdown=rec.remedy_markdown,
        sources=tuple(SourceView(s.filename, s.line_start, s.line_end, s.remedy_markdown) for s in rec.sources),
        explanation=explain_match(query, snap.corpus.docs[entry_id], snap.corpus, feats, choice.root, text),
        features={k: round(v, 4) for k, v in feats.items()},
    )


def triage_record(result: TriageResult, source: str) -> None:
    """Remember a triage (not the log itself) so the wiki can show what keeps failing."""
    from triage.models import TriageRecord

    top = result.matches[0] if result.matches else None
    TriageRecord.objects.create(
        source=source,
        verdict=result.verdict,
        top_entry_id=top.entry_id if top and result.verdict == "match" else None,
        top_score=top.score if top else None,
        fingerprint=result.signature.fingerprint,
        headline=result.signature.headline[:300],
    )


def trends(days: int = 30) -> dict[str, object]:
    """The most matched entries and the latest unmatched failures over the last `days` days."""
    from datetime import timedelta

    from django.db.models import Count
    from django.utils import timezone

    from kb.models import Entry
    from triage.models import TriageRecord

    since = timezone.now() - timedelta(days=max(1, min(days, 3650)))
    recent = TriageRecord.objects.filter(created_at__gte=since)
    counts = list(
        recent.filter(verdict="match")
        .values("top_entry_id")
        .annotate(n=Count("id"))
        .order_by("-n", "top_entry_id")[:20]
    )
    titles = dict(Entry.objects.filter(pk__in=[c["top_entry_id"] for c in counts]).values_list("pk", "title"))
    return {
        "days": days,
        "total": recent.count(),
        "matched": [
            {"entry_id": c["top_entry_id"], "title": titles[c["top_entry_id"]], "n": c["n"]}
            for c in counts
            if c["top_entry_id"] in titles
        ],
        "unmatched": list(
            recent.exclude(verdict="match")
            .values("fingerprint", "headline")
            .annotate(n=Count("id"))
            .order_by("-n")[:20]
        ),
    }
