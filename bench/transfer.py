"""How the ranker carries over: fitted on one wave of problems, judged on another, in a larger
knowledge base.

    .venv/bin/python bench/transfer.py [--cache FILE]

Grouped CV (bench/grouped_cv.py) mixes dev's and train's problems in its folds. This asks the
question the outside benchmark asks in one go: both models, the threshold and the floor are fitted
on train and train-long only (as `make fit-ranker` fits them, inner grouped CV included), and then
dev's queries, from problems gathered in another wave, are judged twice:
  - against dev's own knowledge base (dev corpus + samples), as `make evaluate` asks them;
  - against train's knowledge base (train + dev corpora + samples: 5x the entries, the right
    ones among them), where every train entry is one more look-alike.
With `--fresh [NAME]`, a set of problems gathered after the last fit (bench/data/NAME, default
`fresh`; bench/fresh_build.py) is judged instead, against the largest knowledge base (its corpus,
the earlier gathered sets', train's and dev's corpora and the samples), by
models fitted as `make fit-ranker` fits the shipped ones: on dev, dev-long, train and train-long, with
the threshold chosen on those and on every other gathered set's queries (never on NAME's own;
`--threshold-alone`: on the four alone).
`--cache FILE` keeps the collected tables (FILE and FILE.transfer or FILE.NAME) for the next run.
`--answer-add F` (an experiment, as in bench/grouped_cv.py) has the answer model read the first
candidate's feature F as well.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
from pathlib import Path

from _django import setup_throwaway
from benchsets import GATHERED, RUNS, QueryTable, collect
from grouped_cv import (
    COLUMNS,
    FEATURES,
    answer_features_extend,
    commit,
    decide,
    fit_all,
    load_tables,
    print_misses,
    print_table,
    report,
    scores,
)

from triage.ranking import MODEL_FEATURES

JUDGED = ("dev", "dev-long", "dev@train-kb", "dev-long@train-kb")
FITTED = ("train", "train-long")
FRESH_FITTED = ("dev", "dev-long", "train", "train-long")


def transfer_tables(cache: str | None, run: str = "dev-in-train", suffix: str = "transfer") -> list[QueryTable]:
    """The run's tables (dev's queries against train's knowledge base, or the fresh problems),
    read from `cache`.`suffix` if it exists."""
    path = Path(f"{cache}.{suffix}") if cache else None
    if path and path.exists():
        with open(path, "rb") as fh:
            return pickle.load(fh)  # noqa: S301 - a file this script wrote
    tables = collect(run, COLUMNS)
    if path:
        with open(path, "wb") as fh:
            pickle.dump(tables, fh)
    return tables


def main() -> None:
    """1. Collect (or read) the tables; 2. fit (on train + train-long, or on all four shared sets
    with `--fresh`); 3. judge the four dev sets (or the two fresh ones)."""
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--fresh", nargs="?", const="fresh", help="judge the gathered set bench/data/NAME, fitted on the shared sets"
    )
    ap.add_argument(
        "--gathered",
        action="store_true",
        help="with --fresh: the other gathered sets as training rows of the candidate model too (as shipped)",
    )
    ap.add_argument(
        "--threshold-alone",
        action="store_true",
        help="with --fresh: the threshold chosen on the shared sets alone, not with the other gathered sets",
    )
    ap.add_argument("--show", action="store_true", help="list the queries answered wrong")
    ap.add_argument("--cache", help="pickle of collected tables: read if it exists, else written")
    ap.add_argument("--folds", type=int, default=5, help="inner grouped folds of the threshold's fit")
    ap.add_argument(
        "--answer-add",
        action="append",
        default=[],
        help="an experiment: the answer model also reads this feature of the first candidate",
    )
    args = ap.parse_args()
    if args.answer_add:
        answer_features_extend(args.answer_add)
    tmp = setup_throwaway()
    try:
        if args.fresh:
            name = args.fresh
            extra, fitted_on, judged = transfer_tables(args.cache, name, name), FRESH_FITTED, (name, f"{name}-long")
        else:
            extra, fitted_on, judged = transfer_tables(args.cache), FITTED, JUDGED
        tables = load_tables(args.cache, COLUMNS) + extra
        if args.fresh and args.gathered:
            others = [g for g in GATHERED if g != args.fresh and g in RUNS]
            for g in others:
                rows = transfer_tables(args.cache, g, g)
                for t in rows:
                    t.train_only = True
                tables += rows
            fitted_on = (*fitted_on, *others, *(f"{g}-long" for g in others))
        cols = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
        threshold_tables = (
            [t for g in GATHERED if g != args.fresh and g in RUNS for t in transfer_tables(args.cache, g, g)]
            if args.fresh and not args.threshold_alone
            else []
        )
        fitted = fit_all([t for t in tables if t.set_name in fitted_on], set(), cols, 1.0, args.folds, threshold_tables)
        outs = [decide(t, scores(t, fitted.coef, fitted.bias, cols), fitted) for t in tables if t.set_name in judged]
        shared = [s for s in fitted_on if s.removesuffix("-long") not in GATHERED]
        also = len(fitted_on) - len(shared)
        print(
            f"fitted on {' + '.join(shared)}"
            + (f" (and {also // 2} other gathered sets, short and long, as candidate-model rows)" if also else "")
            + (
                f", threshold also on {len(threshold_tables)} queries of the other gathered sets"
                if threshold_tables
                else ""
            )
            + f", judged on {' + '.join(judged)}, commit {commit()}"
        )
        rows = [report(s, [o for o in outs if o.table.set_name == s]) for s in judged] + [report("all", outs)]
        print_table(rows)
        if args.show:
            print_misses(outs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
