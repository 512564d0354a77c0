"""Fit the triage ranker's weights and match threshold on labelled queries; print how well
the fit generalises (leave-one-query-out) and write triage/ranker_weights.json.

    .venv/bin/python bench/fit_ranker.py                # fit and write
    .venv/bin/python bench/fit_ranker.py --dry-run      # fit and report only

Training data: the dev benchmark (../shared/bench/dev and dev-long, labelled by source
spans) when present, the project's held-out benchmarks in bench/data/*/ (same format, other
problems), and the project's own hard cases (tests/data/hard_cases, labelled by words of the
expected entry's title or remedy) against the project's samples/. Each query set is also
judged as if unseen: fitted on the others.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
from _django import ROOT, setup_throwaway

SHARED = ROOT.parent / "shared" / "bench"


@dataclass
class Group:
    qid: str
    X: np.ndarray  # candidates × features
    y: np.ndarray  # 1 = the right entry
    known: bool
    factor: np.ndarray  # what triage multiplies a candidate's probability by (family conflicts)


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (the bias is not penalised)."""
    n, d = X.shape
    Xb = np.hstack([X, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 1e-6
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(Xb @ w, -30, 30)))
        grad = Xb.T @ (p - y) + reg * w
        H = (Xb * (p * (1 - p))[:, None]).T @ Xb + np.diag(reg)
        step = np.linalg.solve(H, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def prob(X: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(X @ w + b, -30, 30)))


def top1(groups: list[Group], score: Callable[[Group], np.ndarray]) -> list[tuple[bool, float, bool]]:
    """(top-1 is right, its probability, query has a known match) per query."""
    out = []
    for g in groups:
        if len(g.y) == 0:
            out.append((False, 0.0, g.known))
            continue
        s = score(g) * g.factor
        i = int(np.argmax(s))
        out.append((bool(g.y[i]), float(s[i]), g.known))
    return out


def best_threshold(rows: list[tuple[bool, float, bool]]) -> float:
    """Midpoint of the widest interval of thresholds with the fewest wrong verdicts.

    A verdict is right when it says match and the top entry is right, or says no_match and it
    is not. Wrong matches on unknown queries cost twice: a wrong remedy is worse than none.
    """
    cands = sorted({0.0, 1.0, *(p for _, p, _ in rows)})
    best: list[tuple[float, float]] = []
    best_cost = math.inf
    for lo, hi in pairwise(cands):
        t = (lo + hi) / 2
        cost = 0.0
        for right, p, known in rows:
            if p >= t and not right:
                cost += 1.0 if known else 2.0
            elif p < t and right:
                cost += 1.0
        if cost < best_cost - 1e-9:
            best_cost, best = cost, [(lo, hi)]
        elif abs(cost - best_cost) < 1e-9:
            best.append((lo, hi))
    lo, hi = max(best, key=lambda iv: iv[1] - iv[0])
    return (lo + hi) / 2


def collect(dev: bool) -> list[Group]:
    from django.core.management import call_command

    from kb.models import Entry
    from triage.evaluation import is_hit, load_queries
    from triage.ranking import FAMILY_CONFLICT_FACTOR, FEATURES
    from triage.services import triage_log

    def load_kb(paths: list[Path]) -> tuple[dict[int, Entry], dict[int, list[dict[str, object]]]]:
        """Empty the throwaway knowledge base and ingest `paths` into it."""
        from ingest.models import Document
        from kb.services import index_rebuild, kb_version_bump

        Entry.objects.all().delete()
        Document.objects.all().delete()
        kb_version_bump()
        index_rebuild()
        for p in paths:
            call_command("ingest", str(p), stdout=io.StringIO())
        entries = {e.pk: e for e in Entry.objects.prefetch_related("occurrences")}
        sources = {
            pk: [
                {"filename": o.filename, "line_start": o.line_start, "line_end": o.line_end}
                for o in e.occurrences.all()
            ]
            for pk, e in entries.items()
        }
        return entries, sources

    def group(qid: str, log: str, label: Callable[[int], bool], known: bool) -> Group:
        res = triage_log(log, top_k=40)
        X = np.array([[m.features[f] for f in FEATURES] for m in res.matches]).reshape(-1, len(FEATURES))
        y = np.array([1.0 if label(m.entry_id) else 0.0 for m in res.matches])
        factor = np.array([FAMILY_CONFLICT_FACTOR if m.features.get("family_conflict") else 1.0 for m in res.matches])
        return Group(qid, X, y, known, factor)

    groups: list[Group] = []
    if dev and (SHARED / "dev" / "corpus").exists():
        entries, sources = load_kb([SHARED / "dev" / "corpus"])
        for qfile in (SHARED / "dev" / "queries.jsonl", SHARED / "dev-long" / "queries.jsonl"):
            if not qfile.exists():
                continue
            for q in load_queries(qfile):
                groups.append(
                    group(f"{qfile.parent.name}:{q.id}", q.log, lambda pk, q=q: is_hit(sources[pk], q), q.has_match)
                )
    # The project's own held-out benchmarks (same format as dev, other problems).
    for heldout in sorted(p for p in (ROOT / "bench" / "data").iterdir() if (p / "corpus").is_dir()):
        entries, sources = load_kb([heldout / "corpus"])
        for qfile, tag in (
            (heldout / "queries.jsonl", heldout.name),
            (heldout / "long" / "queries.jsonl", f"{heldout.name}-long"),
        ):
            if not qfile.exists():
                continue
            for q in load_queries(qfile):
                groups.append(
                    group(f"{tag}:{q.id}", q.log, lambda pk, q=q, sources=sources: is_hit(sources[pk], q), q.has_match)
                )
    # The hard cases were written against the project's samples with remedies (not the raw log).
    entries, sources = load_kb([p for p in sorted((ROOT / "samples").iterdir()) if p.name != "raw_train.log"])
    for line in (ROOT / "tests" / "data" / "hard_cases" / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        words = [w.lower() for w in case["expect_title_contains"]]

        def label(pk: int, words: list[str] = words) -> bool:
            e = entries[pk]
            hay = (e.title + " " + e.remedy_markdown[:300]).lower()
            return bool(words) and all(w in hay for w in words)

        groups.append(group(f"hard:{case['id']}", case["log"], label, bool(words)))
    return groups


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--no-dev", action="store_true", help="Fit on the project's own hard cases only.")
    parser.add_argument("--l2", type=float, default=1.0)
    args = parser.parse_args()
    tmp = setup_throwaway()
    try:
        from triage.ranking import FEATURES, WEIGHTS_PATH

        groups = collect(dev=not args.no_dev)
        X = np.vstack([g.X for g in groups if len(g.y)])
        y = np.concatenate([g.y for g in groups if len(g.y)])
        print(f"{len(groups)} queries, {len(y)} candidate pairs, {int(y.sum())} positives")
        # Leave one query out: fit without it, rank it, decide it with a threshold fitted without it.
        loo_rows = []
        for k, g in enumerate(groups):
            rest = [h for j, h in enumerate(groups) if j != k and len(h.y)]
            w, b = fit_logistic(np.vstack([h.X for h in rest]), np.concatenate([h.y for h in rest]), args.l2)
            t = best_threshold(top1(rest, lambda h, w=w, b=b: prob(h.X, w, b)))
            right, p, known = top1([g], lambda h, w=w, b=b: prob(h.X, w, b))[0]
            loo_rows.append((g.qid, right, p >= t, known))
        known_rows = [r for r in loo_rows if r[3]]
        unknown_rows = [r for r in loo_rows if not r[3]]
        print(
            f"leave-one-query-out: Hit@1={sum(r[1] for r in known_rows) / max(1, len(known_rows)):.3f} "
            f"no_match(known)={sum(not r[2] for r in known_rows) / max(1, len(known_rows)):.3f} "
            f"no_match(unknown)={sum(not r[2] for r in unknown_rows) / max(1, len(unknown_rows)):.3f}"
        )
        for qid, right, said_match, known in loo_rows:
            if (known and (not right or not said_match)) or (not known and said_match):
                print(f"  miss: {qid} top1_right={right} said_match={said_match}")
        # Across query sets: fit on the others, judge each set as if it were new problems.
        sets = sorted({g.qid.split(":", 1)[0].removesuffix("-long") for g in groups})
        for name in sets:
            train = [g for g in groups if g.qid.split(":", 1)[0].removesuffix("-long") != name and len(g.y)]
            test = [g for g in groups if g.qid.split(":", 1)[0].removesuffix("-long") == name]
            w, b = fit_logistic(np.vstack([h.X for h in train]), np.concatenate([h.y for h in train]), args.l2)
            t = best_threshold(top1(train, lambda h, w=w, b=b: prob(h.X, w, b)))
            rows = top1(test, lambda h, w=w, b=b: prob(h.X, w, b))
            kn = [r for r in rows if r[2]]
            un = [r for r in rows if not r[2]]
            print(
                f"trained without {name:8s}: on {name}: Hit@1={sum(r[0] for r in kn) / max(1, len(kn)):.3f} "
                f"no_match(known)={sum(r[1] < t for r in kn) / max(1, len(kn)):.3f} "
                f"no_match(unknown)={sum(r[1] < t for r in un) / max(1, len(un)):.3f} (threshold {t:.3f})"
            )
        w, b = fit_logistic(X, y, args.l2)
        t = best_threshold(top1(groups, lambda h: prob(h.X, w, b)))
        weights = {f: round(float(v), 4) for f, v in zip(FEATURES, w, strict=True)}
        for qid, right, p, known in sorted(
            ((g.qid, *r) for g, r in zip(groups, top1(groups, lambda h: prob(h.X, w, b)), strict=True)),
            key=lambda r: r[2],
        ):
            print(f"  p={p:.4f} right={right!s:5} known={known!s:5} {qid}")
        print("weights:", weights, "bias:", round(b, 4), "threshold:", round(t, 4))
        if not args.dry_run:
            WEIGHTS_PATH.write_text(
                json.dumps(
                    {
                        "weights": weights,
                        "bias": round(b, 4),
                        "threshold": round(t, 4),
                        "meta": {
                            "fitted_by": "bench/fit_ranker.py",
                            "queries": len(groups),
                            "pairs": len(y),
                            "l2": args.l2,
                        },
                    },
                    indent=2,
                )
                + "\n"
            )
            print(f"wrote {WEIGHTS_PATH}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
