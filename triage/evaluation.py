"""Offline evaluation of triage on a labelled query set (pure Python).

Query format (one JSON object a line): {"id", "log", "expect": [{"file", "start", "end"}],
"others": {file: [[start, end], ...]}}. A returned entry is a hit when one of its sources
overlaps an expected span and no other case's span. An empty `expect` means no known match.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    log: str
    expect: tuple[tuple[str, int, int], ...]
    others: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    @property
    def has_match(self) -> bool:
        return bool(self.expect)


def load_queries(path: Path) -> list[LabelledQuery]:
    out: list[LabelledQuery] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        out.append(
            LabelledQuery(
                id=str(raw.get("id", n)),
                log=raw["log"],
                expect=tuple((e["file"], int(e["start"]), int(e["end"])) for e in raw.get("expect", [])),
                others={f: tuple((int(a), int(b)) for a, b in spans) for f, spans in (raw.get("others") or {}).items()},
            )
        )
    return out


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def is_hit(sources: Iterable[dict[str, Any]], query: LabelledQuery) -> bool:
    for s in sources:
        span = (int(s["line_start"]), int(s["line_end"]))
        for file, start, end in query.expect:
            if s["filename"] != file or not _overlaps(span, (start, end)):
                continue
            if any(_overlaps(span, other) for other in query.others.get(file, ())):
                continue
            return True
    return False


@dataclass(frozen=True)
class QueryOutcome:
    query: LabelledQuery
    verdict: str
    hit_rank: int | None  # 1-based rank of the first hit among returned matches
    latency_ms: float
    top_title: str = ""


@dataclass(frozen=True)
class Report:
    n_known: int
    n_unknown: int
    hit1: float
    hit5: float
    mrr: float
    no_match_on_unknown: float
    no_match_on_known: float
    p50_ms: float
    p95_ms: float


def outcome_of(query: LabelledQuery, response: dict[str, Any], latency_ms: float) -> QueryOutcome:
    rank = None
    for i, m in enumerate(response.get("matches", []), 1):
        if is_hit(m.get("sources", []), query):
            rank = i
            break
    matches = response.get("matches") or [{}]
    return QueryOutcome(query, response.get("verdict", ""), rank, latency_ms, matches[0].get("title", ""))


def summarize(outcomes: Sequence[QueryOutcome]) -> Report:
    known = [o for o in outcomes if o.query.has_match]
    unknown = [o for o in outcomes if not o.query.has_match]
    lat = sorted(o.latency_ms for o in outcomes) or [0.0]

    def frac(items: Sequence[QueryOutcome], pred: Any) -> float:
        return sum(1 for o in items if pred(o)) / len(items) if items else 0.0

    return Report(
        n_known=len(known),
        n_unknown=len(unknown),
        hit1=frac(known, lambda o: o.hit_rank == 1),
        hit5=frac(known, lambda o: o.hit_rank is not None and o.hit_rank <= 5),
        mrr=sum(1.0 / o.hit_rank for o in known if o.hit_rank) / len(known) if known else 0.0,
        no_match_on_unknown=frac(unknown, lambda o: o.verdict != "match"),
        no_match_on_known=frac(known, lambda o: o.verdict != "match"),
        p50_ms=statistics.median(lat),
        p95_ms=lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))],
    )


def format_report(name: str, r: Report) -> str:
    return (
        f"{name}: known={r.n_known} unknown={r.n_unknown} Hit@1={r.hit1:.3f} Hit@5={r.hit5:.3f} MRR={r.mrr:.3f} "
        f"no_match(unknown)={r.no_match_on_unknown:.3f} no_match(known)={r.no_match_on_known:.3f} "
        f"p50={r.p50_ms:.1f}ms p95={r.p95_ms:.1f}ms"
    )
