"""Triage a pasted log: find its root error, rank known entries, decide match or no match."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from kb.embedding import get_embedder
from kb.logscan import ErrorBlock
from kb.redact import redact
from kb.rootcause import RootChoice, informative
from kb.selectors import EntryRecord, SourceRef, entry_records
from kb.signature import Signature, compact_text, read_failure, telling_lines
from kb.vector_index import get_index
from triage.explain import Explanation, explain_match
from triage.lexical import TAIL_LINES, after_block, error_region, raw_tokens, root_lines, telling_errors
from triage.ranking import (
    Candidate,
    Query,
    RankerModel,
    load_model,
    query_from_signature,
    rank_candidates,
    too_little_to_match,
)
from triage.ranking_cache import Snapshot, get_snapshot
from triage.selectors import feedback_votes

if TYPE_CHECKING:
    from kb.models import Entry
    from triage.models import TriageRecord

logger = logging.getLogger("fixbase.triage")

DENSE_POOL = 30


@dataclass(frozen=True)
class Match:
    entry_id: int
    title: str
    score: float
    remedy_markdown: str
    sources: tuple[SourceRef, ...]  # where the entry was seen, each with the fix given there
    explanation: Explanation
    features: dict[str, float] = field(default_factory=dict)
    framework: str = ""
    origin: str = "team"
    references: tuple[str, ...] = ()


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
    redacted_log: str = ""  # the paste as triage read it, secrets removed (what may be stored)
    too_little: bool = False  # hardly a word that tells failures apart: never a confident match


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


def triage_log(
    text: str, top_k: int = 5, min_score: float | None = None, exclude: Collection[int] = ()
) -> TriageResult:
    """1. Scan the log and choose the root error; 2. embed its compact signature;
    3. gather and score candidates (never the entries in `exclude`), keep those above the
    model's floor (or `min_score`); 4. verdict by the answer model's confidence that the first
    one is the fix."""
    # A pasted secret is never echoed back, stored or embedded; a NUL (binary output) cannot be stored.
    pasted = redact(text.replace("\x00", "")).text
    # Everything below reads the part of the paste that holds the failure (all of it, but for a
    # worker's start-up deprecation notice with another process's output after it: that output).
    text, sig, choice = read_failure(pasted, symptom_context=False)
    # With no error in it, the paste's own words (a hang described in words) are the query.
    telling = telling_lines(text, quiet_if_nothing_else=choice.root is None)
    blocks = choice.blocks
    region = error_region(text, blocks, telling)
    # No error that says what failed: the paste's last telling lines count as well.
    weak_root = not telling_errors(blocks)
    # The last few lines printed after the weak root, on their own (a logger's warning among them: what
    # the user asks about when it ends the paste). A weak root that ends the paste is its last words
    # already: the lines above it are the root's surroundings (read in the region), not what the job
    # printed as it died, and a start-up warning among them is no answer.
    tail = (
        "\n".join(telling_lines(after_block(text, choice.root), TAIL_LINES, choice.root is None, with_warnings=True))
        if weak_root
        else ""
    )
    query = query_from_signature(
        sig,
        extra_text="\n".join(telling) if weak_root else "",
        raw_tokens=raw_tokens(region),
        # With a weak root, the last few telling lines (where a job that dies prints why) also on their own.
        tail_text=tail,
        raw_alternatives=(
            # The root's own lines, when they say more than an exception's name, may stand for the region.
            raw_tokens(root_lines(text, choice.root)) if choice.root and informative(choice.root) else (),
            raw_tokens(tail),
        ),
    )
    snap = get_snapshot()
    embedder = get_embedder()
    qvec = embedder.encode([compact_text(sig)])[0]
    dense_hits = get_index().search(qvec, DENSE_POOL, embedder.name)

    def dense_of(entry_ids: Sequence[int]) -> dict[int, float]:
        return {pk: float(np.dot(vec, qvec)) for pk, vec in snap.vectors_of(entry_ids).items()}

    model = ranker_model()
    ranked = apply_feedback(
        rank_candidates(query, snap.corpus, dense_hits, dense_of, model, exclude=exclude), sig.fingerprint
    )
    threshold = match_threshold()
    floor = model.floor if min_score is None else min_score
    shown = [c for c in ranked if c.score >= floor][:top_k]
    # What a shown entry says (title, remedy, sources) is read now, not kept in the ranking copy:
    # the copy stays small, and an edit shows at once. An entry deleted since is left out.
    records = {r.id: r for r in entry_records(pks=[c.doc_id for c in shown], with_problem=False)} if shown else {}
    matches = tuple(
        _match(records[c.doc_id], c.score, c.features, query, snap, choice, text) for c in shown if c.doc_id in records
    )
    confidence = model.answer_probability([c.score for c in ranked[:2]], ranked[0].features) if ranked else 0.0
    if ranked and ranked[0].features.get("family_conflict"):
        confidence = 0.0  # a different failure of the same family is never the answer
    elif ranked and ranked[0].features.get("feedback", 0) > 0:
        confidence = max(confidence, threshold)  # people confirmed it fixed this very failure
    elif ranked and ranked[0].features.get("feedback", 0) < 0:
        confidence = min(confidence, threshold * 0.99)  # people said it did not: a lead at most
    weak = too_little_to_match(query, choice.root is not None)
    if weak:
        confidence = min(confidence, threshold * 0.99)
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
        redacted_log=pasted,
        too_little=weak,
    )


def _match(
    rec: EntryRecord, score: float, feats: dict[str, float], query: Query, snap: Snapshot, choice: RootChoice, text: str
) -> Match:
    entry_id = rec.id
    return Match(
        entry_id=entry_id,
        title=rec.title,
        score=round(score, 4),
        remedy_markdown=rec.remedy_markdown,
        sources=rec.sources,
        explanation=explain_match(
            query, snap.corpus.docs[entry_id], snap.corpus, feats, choice.root, text, rec.raw_message
        ),
        features={k: round(v, 4) for k, v in feats.items()},
        framework=rec.framework,
        origin=rec.origin,
        references=rec.references,
    )


FEEDBACK_DEMOTION = 0.2  # a candidate's score is multiplied by this per net "didn't help"
FEEDBACK_PROMOTION = 0.5  # and raised by this share of what is left per net "this fixed it"


def apply_feedback(ranked: list[Candidate], fingerprint: str) -> list[Candidate]:
    """Re-rank by what the team said about these entries for this very failure."""
    votes = feedback_votes(fingerprint) if fingerprint else {}
    if not votes:
        return ranked
    out = []
    for c in ranked:
        net = votes.get(c.doc_id, 0)
        if net < 0:
            score = c.score * FEEDBACK_DEMOTION ** min(3, -net)
        elif net > 0:
            score = c.score + (1 - c.score) * (1 - (1 - FEEDBACK_PROMOTION) ** min(3, net))
        else:
            out.append(c)
            continue
        out.append(replace(c, score=score, features={**c.features, "feedback": float(net)}))
    out.sort(key=lambda c: (-c.score, c.doc_id))
    return out


def feedback_record(user: Any, entry: Any, fingerprint: str, helpful: bool) -> None:
    """Record (or change) a user's vote; the ranking copy does not change, so nothing rebuilds."""
    from triage.models import Feedback

    fingerprint = fingerprint.replace("\x00", "")[:32]
    Feedback.objects.update_or_create(user=user, entry=entry, fingerprint=fingerprint, defaults={"helpful": helpful})


class FeedbackRefused(ValueError):
    """A vote on an entry the triage did not show."""


def feedback_on_triage(user: Any, record: TriageRecord, entry_id: int, helpful: bool) -> Entry:
    """A vote on one of the entries a triage showed, for that triage's failure (its fingerprint).

    Votes re-rank every later triage of the same failure, so an entry the triage never showed
    is refused: otherwise one click could push any entry onto a failure it has nothing to do with.
    Returns the entry; raises FeedbackRefused, or Entry.DoesNotExist when it is gone.
    """
    from kb.models import Entry

    if record.entry_ids is None:  # recorded before triages kept what they showed
        if entry_id != record.top_entry_id:
            raise FeedbackRefused(
                "This triage is older than the record of what it showed: triage the log again to vote."
            )
    elif entry_id not in record.entry_ids:
        raise FeedbackRefused("That entry was not among this triage's results.")
    entry = Entry.objects.get(pk=entry_id)
    if helpful and not entry.remedy_markdown.strip():
        raise FeedbackRefused("That entry has no fix yet, so it cannot have fixed this failure: add the fix first.")
    feedback_record(user, entry, record.fingerprint, helpful)
    return entry


def triage_record(
    result: TriageResult,
    source: str,
    user: Any = None,
    context: dict[str, str] | None = None,
    keep_log: bool = False,
) -> Any:
    """Remember a triage so the wiki can show what keeps failing. A log posted to the API is kept
    (redacted, as triage saw it) with the job context the hook sent; the web page keeps none."""
    from triage.models import TriageRecord

    top = result.matches[0] if result.matches else None
    return TriageRecord.objects.create(
        source=source,
        verdict=result.verdict,
        top_entry_id=top.entry_id if top and result.verdict == "match" else None,
        top_score=top.score if top else None,
        fingerprint=result.signature.fingerprint,
        headline=result.signature.headline[:300],
        entry_ids=[m.entry_id for m in result.matches],
        user=user if user is not None and getattr(user, "is_authenticated", False) else None,
        context=context or {},
        log=result.redacted_log if keep_log else "",
    )


def triage_and_record(
    log: str,
    source: str,
    *,
    user: Any = None,
    top_k: int = 5,
    context: dict[str, str] | None = None,
    keep_log: bool = False,
) -> tuple[TriageResult, Any]:
    """Triage a paste and remember it (what the page, the API and the CLI all do): the result,
    and the TriageRecord stored for the wiki's trends."""
    result = triage_log(log, top_k=top_k)
    return result, triage_record(result, source, user=user, context=context, keep_log=keep_log)
