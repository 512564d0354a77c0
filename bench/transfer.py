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
`--cache FILE` keeps the collected tables (FILE and FILE.transfer) for the next run.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
from pathlib import Path

from _django import setup_throwaway
from benchsets import QueryTable, collect
from grouped_cv import COLUMNS, FEATURES, commit, decide, fit_all, load_tables, print_table, report, scores

from triage.ranking import MODEL_FEATURES

JUDGED = ("dev", "dev-long", "dev@train-kb", "dev-long@train-kb")


def transfer_tables(cache: str | None) -> list[QueryTable]:
    """dev's queries asked against train's knowledge base, read from `cache`.transfer if it exists."""
    path = Path(f"{cache}.transfer") if cache else None
    if path and path.exists():
        with open(path, "rb") as fh:
            return pickle.load(fh)  # noqa: S301 - a file this script wrote
    tables = collect("dev-in-train", COLUMNS)
    if path:
        with open(path, "wb") as fh:
            pickle.dump(tables, fh)
    return tables


def main() -> None:
    """1. Collect (or read) the tables; 2. fit on train + train-long; 3. judge the four dev sets."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", help="pickle of collected tables: read if it exists, else written")
    ap.add_argument("--folds", type=int, default=5, help="inner grouped folds of the threshold's fit")
    args = ap.parse_args()
    tmp = setup_throwaway()
    try:
        tables = load_tables(args.cache, COLUMNS) + transfer_tables(args.cache)
        cols = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
        fitted = fit_all([t for t in tables if t.set_name in ("train", "train-long")], set(), cols, 1.0, args.folds)
        outs = [decide(t, scores(t, fitted.coef, fitted.bias, cols), fitted) for t in tables if t.set_name in JUDGED]
        print(f"fitted on train + train-long, judged on dev's problems, commit {commit()}")
        print_table([report(s, [o for o in outs if o.table.set_name == s]) for s in JUDGED] + [report("all", outs)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
