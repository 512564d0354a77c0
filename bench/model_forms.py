"""Would another form of either model tell undocumented look-alikes from other users' reports?

    .venv/bin/python bench/model_forms.py --cache FILE [--forms shipped,answer-rich] [--repeats N]

With dev, train and every gathered set (thousands of queries, over a thousand problems) there is far
more to fit than the 394 queries the shipped forms were chosen on. This judges, by the same grouped CV
(5 folds by problem over all the sets, GroupKFold's own assignment or, with `--repeats N`, N random
ones pooled; the answer model and its threshold fitted on inner out-of-fold scores, as
bench/grouped_cv.py does):
  shipped       the signed logistic candidate model, the answer model on the best logit and the lead;
  answer-rich   the answer model on every feature of the first candidate, its lead over the second in
                each, the second's logit and the dense cosine (standardised logistic regression);
  answer-trees  the same features in gradient-boosted trees;
  cand-trees    gradient-boosted trees as the candidate model (each feature's direction kept as the
                signed model keeps it), the shipped answer model on its scores.
Beside answered right and its parts, each row gives the known reports answered right when the threshold
refuses a given share of the undocumented failures (K@U): a form that separates the two better has the
higher K at every U, whatever threshold a benchmark's share of undocumented failures calls for.
`--cache` is the file `bench/grouped_cv.py --fresh --cache FILE` keeps.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable, Sequence

import numpy as np
from _django import setup_throwaway
from benchsets import QueryTable
from grouped_cv import (
    COLUMNS,
    FEATURES,
    answer_row,
    choose_threshold,
    fit_weights,
    load_tables,
    scores,
    top,
    train_rows,
)
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from triage.ranking import AGAINST, MODEL_FEATURES

MODEL_COLS = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
REFUSED_SHARES = (0.70, 0.75, 0.80, 0.85)
Scorer = Callable[[QueryTable], np.ndarray]


def rich_row(t: QueryTable, s: np.ndarray) -> np.ndarray:
    """The first candidate's logit, lead, every computed feature and its lead over the second's,
    the second's logit, the dense cosine and how many candidates score within one logit of it."""
    width = len(COLUMNS)
    if not len(s):
        return np.zeros(4 + 2 * width + 2)
    order = np.argsort(-s, kind="stable")
    p = np.clip(s[order], 1e-6, 1 - 1e-6)
    logit = np.log(p / (1 - p))
    first = t.X[order[0], :width]
    second = t.X[order[1], :width] if len(order) > 1 else np.zeros(width)
    dense = float(t.qvec @ t.evecs[order[0]]) if t.qvec is not None and t.evecs is not None else 0.0
    return np.concatenate(
        [
            [logit[0], p[0] - (p[1] if len(p) > 1 else 0.0), logit[1] if len(p) > 1 else -14.0, float(t.too_little)],
            first,
            first - second,
            [dense, float((logit > logit[0] - 1.0).sum())],
        ]
    )


def trees() -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(
        max_iter=150, learning_rate=0.1, max_leaf_nodes=15, min_samples_leaf=50, l2_regularization=1.0, random_state=0
    )


def candidate_scorer(form: str, train: Sequence[QueryTable], held: set[str]) -> Scorer:
    """The candidate model fitted without the held-out problems, as a function of a query's table."""
    if form != "cand-trees":
        coef, bias = fit_weights(train, held, MODEL_COLS, 1.0)
        return lambda t: scores(t, coef, bias, MODEL_COLS)
    X, y = train_rows(train, held, MODEL_COLS)
    signs = [-1 if FEATURES[c] in AGAINST else 1 for c in MODEL_COLS]
    model = trees().set_params(monotonic_cst=signs).fit(X, y)
    return lambda t: model.predict_proba(t.X[:, MODEL_COLS])[:, 1] * t.factor if len(t.y) else np.zeros(0)


def answer_model(form: str) -> tuple[Callable[[QueryTable, np.ndarray], np.ndarray], object]:
    if form == "answer-rich":
        return rich_row, make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000))
    if form == "answer-trees":
        return rich_row, trees()
    return answer_row, LogisticRegression(max_iter=2000)


def judge(
    form: str, tables: list[QueryTable], folds: int, seed: int | None = None
) -> list[tuple[QueryTable, bool, float, float]]:
    """(table, first candidate right, answer probability, threshold) of every query, its problem held
    out; with a seed, the problems are dealt into folds at random."""
    out = []
    groups = [t.problem for t in tables]
    splitter = GroupKFold(n_splits=folds, shuffle=seed is not None, random_state=seed)
    for tr, te in splitter.split(np.zeros(len(tables)), groups=groups):
        held = {tables[i].problem for i in te}
        train = [tables[i] for i in tr]
        inner: list[tuple[QueryTable, np.ndarray, bool]] = []
        for tr2, te2 in GroupKFold(n_splits=folds - 1).split(np.zeros(len(train)), groups=[t.problem for t in train]):
            score = candidate_scorer(form, [train[i] for i in tr2], held | {train[i].problem for i in te2})
            inner += [(train[i], s, top(train[i], s)[0]) for i in te2 for s in [score(train[i])]]
        row, model = answer_model(form)
        A = np.array([row(t, s) for t, s, _ in inner])
        labels = np.array([1.0 if t.known and ok else 0.0 for t, _, ok in inner])
        # The threshold is chosen on answer probabilities the answer model did not see fitted.
        probs = np.zeros(len(A))
        for tr3, te3 in GroupKFold(n_splits=folds - 1).split(A, groups=[t.problem for t, _, _ in inner]):
            probs[te3] = answer_model(form)[1].fit(A[tr3], labels[tr3]).predict_proba(A[te3])[:, 1]  # type: ignore[attr-defined]
        threshold = choose_threshold([(ok, p, t.known) for (t, _, ok), p in zip(inner, probs, strict=True)])
        model.fit(A, labels)  # type: ignore[attr-defined]
        score = candidate_scorer(form, train, held)
        for i in te:
            t = tables[i]
            s = score(t)
            p = float(model.predict_proba(row(t, s)[None])[0, 1])  # type: ignore[attr-defined]
            if (len(s) and t.factor[int(np.argmax(s))] < 1) or t.too_little:
                p = 0.0  # the family-conflict rule and the too-little rule, as triage applies them
            out.append((t, top(t, s)[0], p, threshold))
    return out


def summary(form: str, outs: list[tuple[QueryTable, bool, float, float]]) -> str:
    known = [(ok, p, th) for t, ok, p, th in outs if t.known]
    refused = [p < th for t, _, p, th in outs if not t.known]
    unknown = [p for t, _, p, _ in outs if not t.known]
    k = float(np.mean([ok and p >= th for ok, p, th in known]))
    u = float(np.mean(refused))
    right = (sum(ok and p >= th for ok, p, th in known) + sum(refused)) / len(outs)
    cuts = {share: float(np.quantile(unknown, share)) for share in REFUSED_SHARES}
    at = " ".join(f"{share:.2f}: {np.mean([ok and p > cut for ok, p, _ in known]):.3f}" for share, cut in cuts.items())
    hit1 = float(np.mean([ok for ok, _, _ in known]))
    return f"| {form} | {hit1:.3f} | {k:.3f} | {u:.3f} | {right:.3f} | {at} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True, help="the tables bench/grouped_cv.py --fresh --cache FILE keeps")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--forms", default="shipped,answer-rich,answer-trees,cand-trees")
    ap.add_argument(
        "--repeats", type=int, default=1, help="random fold assignments (seeds 0, 1, ...) pooled; 1: GroupKFold's own"
    )
    args = ap.parse_args()
    tmp = setup_throwaway()
    try:
        tables = [t for t in load_tables(args.cache, COLUMNS, with_fresh=True) if t.set_name != "pack"]
        print(f"{len(tables)} queries, {len({t.problem for t in tables})} problems")
        print("| form | Hit@1 | known answered right | undocumented refused | answered right | K@U |")
        print("|---|---|---|---|---|---|")
        for form in args.forms.split(","):
            seeds = list(range(args.repeats)) if args.repeats > 1 else [None]
            outs = [o for seed in seeds for o in judge(form, tables, args.folds, seed)]
            print(summary(form, outs), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
