"""What the match threshold would be, and give, if it were chosen for another share of undocumented failures.

    .venv/bin/python bench/threshold_share.py --share 0.15 [--cache FILE] [--judge-share 0.15]

The threshold here called shipped is the one that answers most of dev + train right on their own
out-of-fold answer confidences (as `make fit-ranker` chose it before it took the gathered sets'
queries into the choice, `bench/grouped_cv.py`), where 9% of the queries are failures nobody
documented. The gathered sets (bench/data/fresh*) hold about 32%. This leaves one gathered set out
at a time: both models are fitted on dev + train as shipped, and the threshold is chosen on dev +
train's out-of-fold rows plus the other gathered sets' rows, the undocumented ones weighted so that
they are `--share` of the whole; the set left out is then judged with it and with the shipped
threshold. Printed per set, then over all sets: known reports answered right, undocumented failures
not answered `match`, answered right as the sets hold them, and answered right at `--judge-share`
undocumented (what a benchmark with that share would score).
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import shutil
from pathlib import Path

from _django import setup_throwaway
from benchsets import GATHERED, QueryTable, collect
from grouped_cv import (
    COLUMNS,
    FEATURES,
    Outcome,
    answer_probability,
    answer_row,
    choose_threshold,
    commit,
    confidence_row,
    decide,
    fit_all,
    inner_oof,
    load_tables,
    scores,
)

from triage.ranking import MODEL_FEATURES

SHARED = ("dev", "dev-long", "train", "train-long")
Row = tuple[bool, float, bool]  # (first candidate right, answer confidence, known)


def gathered_tables(cache: str | None) -> dict[str, list[QueryTable]]:
    """Each gathered set's tables (short and long pastes), read from `cache`.NAME as
    bench/transfer.py writes them, else collected."""
    out: dict[str, list[QueryTable]] = {}
    for name in GATHERED:
        path = Path(f"{cache}.{name}") if cache else None
        if path and path.exists():
            with open(path, "rb") as fh:
                out[name] = pickle.load(fh)  # noqa: S301 - a file the bench scripts wrote
        else:
            out[name] = collect(name, COLUMNS)
            if path:
                with open(path, "wb") as fh:
                    pickle.dump(out[name], fh)
    return out


def rates(outs: list[Outcome]) -> tuple[int, int, int, int]:
    """(known answered right, known, undocumented not answered `match`, undocumented)."""
    known = [o for o in outs if o.table.known]
    unknown = [o for o in outs if not o.table.known]
    right = sum(1 for o in known if o.rank == 1 and o.verdict == "match")
    refused = sum(1 for o in unknown if o.verdict != "match")
    return right, len(known), refused, len(unknown)


def summary(counts: list[int], judge_share: float) -> str:
    kr, k, ur, u = counts
    known, unknown = kr / max(1, k), ur / max(1, u)
    return (
        f"known right {known:.3f}, undocumented refused {unknown:.3f}, answered right {(kr + ur) / max(1, k + u):.3f}"
        f" as held, {(1 - judge_share) * known + judge_share * unknown:.3f} at {judge_share:.0%} undocumented"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", type=float, required=True, help="share of undocumented failures to choose for")
    ap.add_argument("--judge-share", type=float, default=0.15, help="share to score the result at")
    ap.add_argument("--cache", help="pickle of collected tables, as bench/transfer.py --cache writes them")
    args = ap.parse_args()
    tmp = setup_throwaway()
    try:
        cols = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
        shared = [t for t in load_tables(args.cache, COLUMNS) if t.set_name in SHARED]
        fitted = fit_all(shared, set(), cols, 1.0, 5)
        oof = inner_oof(shared, [], set(), cols, 1.0, 5)
        shared_rows = [
            (ok, answer_probability(answer_row(t, s), fitted.answer_coef, fitted.answer_bias), t.known)
            for t, s, (ok, _, _) in oof
        ]
        sets = gathered_tables(args.cache)
        totals = {"shipped": [0, 0, 0, 0], "chosen": [0, 0, 0, 0]}
        print(
            f"commit {commit()}; shipped threshold {fitted.threshold:.3f}; choosing for {args.share:.0%} undocumented"
        )
        for name, tables in sets.items():
            others = [t for other, ts in sets.items() if other != name for t in ts]
            chosen = choose_threshold(
                shared_rows
                + [
                    confidence_row(t, fitted.coef, fitted.bias, cols, fitted.answer_coef, fitted.answer_bias)
                    for t in others
                ],
                args.share,
            )
            line = [f"{name}: threshold {chosen:.3f}"]
            for label, f in (("shipped", fitted), ("chosen", dataclasses.replace(fitted, threshold=chosen))):
                counts = rates([decide(t, scores(t, f.coef, f.bias, cols), f) for t in tables])
                totals[label] = [a + b for a, b in zip(totals[label], counts, strict=True)]
                line.append(f"{label} {(counts[0] + counts[2]) / max(1, counts[1] + counts[3]):.3f}")
            print(", ".join(line))
        for label, counts in totals.items():
            print(f"all sets, {label}: {summary(counts, args.judge_share)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
