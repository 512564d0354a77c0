"""How well the candidate model tells a right first answer from a wrong one, whatever the threshold.

    .venv/bin/python bench/separation.py [--cache FILE] [--fresh] [--repeats N]

Abstention can only be as good as the scores it thresholds. This asks whether the limit is the
model or the evidence: grouped 5-fold CV by problem (N random fold assignments), each held-out
query's first candidate scored by models fitted on the other folds:
  - `linear`: the shipped candidate model (its features, weights kept to their signs);
  - `linear + dense`: the same with the cosine of the MiniLM vectors of the two compact signatures;
  - `linear + framework conflict`: the same with "both name a framework, different ones";
  - `boosted trees`: gradient-boosted trees (scikit-learn) over every computed feature.
For each: Hit@1; the ROC AUC of the first candidate's score, known queries whose first candidate
is right against the rest (unknown failures, and known queries whose first candidate is wrong);
and the answered-right of the best single threshold on those scores (chosen on the scores it
judges, so an upper bound for that model). `--cache` and `--fresh` as in bench/grouped_cv.py.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable

import numpy as np
from _django import setup_throwaway
from benchsets import QueryTable
from grouped_cv import COLUMNS, FEATURES, commit, load_tables, signed_logistic, train_rows

from kb.signature import FRAMEWORK_ORDER, MESSAGE_FRAMEWORK_HINTS
from triage.ranking import AGAINST, MODEL_FEATURES

FRAMEWORKS = {name for _, name in FRAMEWORK_ORDER} | {name for name, _ in MESSAGE_FRAMEWORK_HINTS}
Scorer = Callable[[QueryTable], np.ndarray]


def framework_of(compact: str) -> str:
    """The framework a compact signature names: its last part, when that is a framework's name."""
    last = compact.rsplit(" | ", 1)[-1].strip() if " | " in compact else ""
    return last if last in FRAMEWORKS else ""


def with_extra_columns(tables: list[QueryTable]) -> None:
    """Append the two experiment columns (dense cosine, framework conflict) to every table."""
    for t in tables:
        n = len(t.y)
        dense = t.evecs @ t.qvec if n and t.evecs is not None and t.qvec is not None else np.zeros(n)
        qf = framework_of(t.qtext)
        conflict = np.array(
            [float(bool(qf) and framework_of(e) not in ("", qf)) for e in t.etexts]
            if len(t.etexts) == n
            else np.zeros(n)
        )
        t.X = np.hstack([t.X[:, : len(COLUMNS)], dense.reshape(-1, 1), conflict.reshape(-1, 1)])


def linear(cols: list[int]) -> Callable[[list[QueryTable], set[str]], Scorer]:
    def fit(train: list[QueryTable], held: set[str]) -> Scorer:
        X, y = train_rows(train, held, cols)
        signs = [-1 if (i < len(FEATURES) and FEATURES[i] in AGAINST) or i == len(COLUMNS) + 1 else 1 for i in cols]
        w, b = signed_logistic(X, y, 1.0, signs)
        return lambda t: (1 / (1 + np.exp(-np.clip(t.X[:, cols] @ w + b, -30, 30)))) * t.factor

    return fit


def boosted(cols: list[int]) -> Callable[[list[QueryTable], set[str]], Scorer]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    def fit(train: list[QueryTable], held: set[str]) -> Scorer:
        X, y = train_rows(train, held, cols)
        model = HistGradientBoostingClassifier(
            max_iter=200, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40, random_state=0
        ).fit(X, y)
        return lambda t: model.predict_proba(t.X[:, cols])[:, 1] * t.factor

    return fit


def firsts(tables: list[QueryTable], fit: Callable, seed: int) -> list[tuple[float, bool]]:
    """(first candidate's score, is it right) of every query, its problem held out."""
    rng = np.random.RandomState(seed)
    fold = {p: rng.randint(5) for p in sorted({t.problem for t in tables})}
    out: list[tuple[float, bool]] = [(0.0, False)] * len(tables)
    for k in range(5):
        held = {p for p, f in fold.items() if f == k}
        scorer = fit([t for t in tables if t.problem not in held], held)
        for i, t in enumerate(tables):
            if t.problem in held and len(t.y):
                s = scorer(t)
                j = int(np.argmax(s))
                out[i] = (float(s[j]), bool(t.y[j]) and t.known)
    return out


def figures(tables: list[QueryTable], firsts_: list[tuple[float, bool]]) -> tuple[float, float, float]:
    from sklearn.metrics import roc_auc_score

    known = [f for t, f in zip(tables, firsts_, strict=True) if t.known]
    hit1 = sum(ok for _, ok in known) / len(known)
    labels = [ok for _, ok in firsts_]
    scores = [s for s, _ in firsts_]
    auc = float(roc_auc_score(labels, scores))
    best = max(
        sum(1 for s, ok in firsts_ if ok and s >= th)
        + sum(1 for t, (s, _) in zip(tables, firsts_, strict=True) if not t.known and s < th)
        for th in [*sorted(set(scores)), 1.1]
    )
    return hit1, auc, best / len(tables)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", help="pickle of collected tables, as bench/grouped_cv.py writes it")
    ap.add_argument("--fresh", action="store_true", help="also the gathered sets (bench/data/fresh*)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = setup_throwaway()
    try:
        tables = [t for t in load_tables(args.cache, COLUMNS, with_fresh=args.fresh) if not t.train_only]
        with_extra_columns(tables)
        shipped = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
        dense, conflict = len(COLUMNS), len(COLUMNS) + 1
        models = {
            "linear (shipped features)": linear(shipped),
            "linear + dense": linear([*shipped, dense]),
            "linear + framework conflict": linear([*shipped, conflict]),
            "boosted trees, every feature": boosted(list(range(len(FEATURES)))),
        }
        print(
            f"grouped 5-fold CV by problem, mean of {args.repeats} fold assignments, commit {commit()}, "
            f"{len(tables)} queries on {len({t.problem for t in tables})} problems"
        )
        print("| model | Hit@1 | AUC of the first score | answered right, best threshold |")
        print("|---|---|---|---|")
        for name, fit in models.items():
            rows = [figures(tables, firsts(tables, fit, seed)) for seed in range(args.repeats)]
            h, a, r = np.mean(rows, axis=0)
            print(f"| {name} | {h:.3f} | {a:.3f} | {r:.3f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
