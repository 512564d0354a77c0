"""Judge the triage ranker on failures it has never seen, and fit the shipped one.

    .venv/bin/python bench/grouped_cv.py            # grouped-CV figures for dev, dev-long, train, train-long
    .venv/bin/python bench/grouped_cv.py --write    # the same, then fit on everything and write the weights

Every query of the shared benchmarks is triaged once with all candidates kept (bench/benchsets.py).
Cross-validation is grouped by problem: the problems are split into folds; for each fold the
ranker's weights, its match threshold and its "possibly related" floor are fitted on the other
folds only — and the training rows that compare a query with an entry of a held-out problem are
dropped, so a problem's reports and its entry never sit on both sides. The held-out fold is then
ranked and decided with what was fitted without it. Every figure printed comes from that.

The match threshold is chosen for dev and train's mix of queries (about 9% failures nobody
documented), on their out-of-fold answer confidences together with every gathered set's queries
(bench/data/fresh*, problems dev and train do not have; never judged here), the gathered sets'
undocumented failures weighted down to that share (`fit_all`'s `threshold_tables`). Dev and train
alone hold 36 undocumented failures, and one of them read differently had moved the threshold by a
few hundredths. `--threshold-alone` chooses it on dev and train alone, as before.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _django import ROOT, setup_throwaway
from benchsets import GATHERED, RUNS, QueryTable, collect, collect_pairs
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from triage.ranking import AGAINST, ANSWER_FEATURES, FEATURES, MODEL_FEATURES, answer_features

# Collected per candidate: the candidate model's features, then what only the answer model reads.
COLUMNS = FEATURES + tuple(k for k in ANSWER_FEATURES if k not in FEATURES and k not in ("logit_top", "gap"))

SETS = ("dev", "dev-long", "train", "train-long", *(f"{g}{s}" for g in GATHERED for s in ("", "-long")), "pack")
MAX_SHOWN = 5
UNKNOWN_WEIGHT = 1.0
FLOOR_LOSS = 0.02  # the floor may hide the right entry from at most this share of known queries
NO_EVIDENCE_MARGIN = 1.001  # the floor is just above what a candidate with no evidence scores


@dataclass(frozen=True)
class Fitted:
    coef: np.ndarray
    bias: float
    threshold: float  # on the answer probability
    floor: float
    answer_coef: np.ndarray
    answer_bias: float


def answer_row(t: QueryTable, s: np.ndarray) -> np.ndarray:
    """The answer model's features for a query whose candidates scored `s` (triage/ranking.py)."""
    if not len(s):
        return np.array([answer_features([], {})[k] for k in ANSWER_FEATURES])
    order = np.argsort(-s, kind="stable")
    top = dict(zip(COLUMNS, t.X[order[0], : len(COLUMNS)], strict=True))  # columns past these: experiments'
    feats = answer_features([float(s[i]) for i in order[:2]], top)
    return np.array([feats[k] for k in ANSWER_FEATURES])


def answer_features_extend(names: Sequence[str]) -> None:
    """An experiment: the answer model also reads these features of the first candidate."""
    global ANSWER_FEATURES
    import triage.ranking

    unknown = [n for n in names if n not in COLUMNS]
    if unknown:
        raise SystemExit(f"not a candidate feature: {', '.join(unknown)} (one of {', '.join(COLUMNS)})")
    ANSWER_FEATURES = triage.ranking.ANSWER_FEATURES = (*ANSWER_FEATURES, *names)


def set_unknown_weight(weight: float) -> None:
    """An experiment: a refused undocumented failure counts `weight` times when the threshold is chosen."""
    global UNKNOWN_WEIGHT
    UNKNOWN_WEIGHT = weight


def answer_probability(row: np.ndarray, coef: np.ndarray, bias: float) -> float:
    return float(1 / (1 + np.exp(-np.clip(row @ coef + bias, -30, 30))))


def train_rows(tables: Sequence[QueryTable], held_out: set[str], cols: list[int]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for t in tables:
        if not len(t.y) or t.problem in held_out:
            continue
        keep = np.array([not (ep & held_out) for ep in t.entry_problems], dtype=bool)
        xs.append(t.X[keep][:, cols])
        ys.append(t.y[keep])
    return np.vstack(xs), np.concatenate(ys)


def fit_weights(
    tables: Sequence[QueryTable], held_out: set[str], cols: list[int], c: float
) -> tuple[np.ndarray, float]:
    """The candidate model: L2-regularised logistic regression whose weights keep their signs
    (triage.ranking.AGAINST counts against a candidate, every other feature for it)."""
    X, y = train_rows(tables, held_out, cols)
    # Columns past FEATURES are experiments' (bench/pair_projection.py): counted for a candidate.
    signs = [-1 if i < len(FEATURES) and FEATURES[i] in AGAINST else 1 for i in cols]
    return signed_logistic(X, y, c, signs)


def signed_logistic(X: np.ndarray, y: np.ndarray, c: float, signs: Sequence[int]) -> tuple[np.ndarray, float]:
    """Minimise the log loss plus |w|²/2C with each weight bounded to its sign (L-BFGS-B);
    the objective is sklearn's LogisticRegression's, which has no bounds."""
    d = X.shape[1]

    def loss(wb: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = wb[:d], wb[d]
        z = X @ w + b
        p = 1 / (1 + np.exp(-np.clip(z, -30, 30)))
        value = float(np.sum(np.logaddexp(0, z) - y * z) + 0.5 / c * w @ w)
        return value, np.append(X.T @ (p - y) + w / c, np.sum(p - y))

    bounds = [(0.0, None) if s > 0 else (None, 0.0) for s in signs] + [(None, None)]
    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds)
    return res.x[:d], float(res.x[d])


def scores(t: QueryTable, coef: np.ndarray, bias: float, cols: list[int]) -> np.ndarray:
    if not len(t.y):
        return np.zeros(0)
    z = np.clip(t.X[:, cols] @ coef + bias, -30, 30)
    return (1 / (1 + np.exp(-z))) * t.factor


def top(t: QueryTable, s: np.ndarray) -> tuple[bool, float, int | None]:
    """(best is right, best score, 1-based rank of the right entry among all candidates)."""
    if not len(s):
        return False, 0.0, None
    order = np.argsort(-s, kind="stable")
    right = [k + 1 for k, i in enumerate(order) if t.y[i]]
    return bool(t.y[order[0]]), float(s[order[0]]), (right[0] if right else None)


def choose_threshold(rows: list[tuple[bool, float, bool]], share: float | None = None) -> float:
    """The threshold that answers most queries right: a known query by a match on the right
    entry, an unknown one by not claiming a match; an unknown query counts UNKNOWN_WEIGHT times
    (a wrong fix presented as the answer costs more than none). With `share`, the unknown rows are
    weighted so that they make up that share of the whole (as if the rows held it). Midpoint of
    the widest best interval."""
    n_known = sum(1 for r in rows if r[2])
    n_unknown = len(rows) - n_known
    weight = UNKNOWN_WEIGHT
    if share is not None and n_known and n_unknown:
        weight *= share / (1 - share) * n_known / n_unknown
    cands = np.array(sorted({0.0, 1.0, *(p for _, p, _ in rows)}))
    mids = (cands[:-1] + cands[1:]) / 2
    # Counted for every midpoint at once (thousands of rows with the gathered sets'): known rows
    # answered right at or above it, unknown rows below it.
    right_known = np.sort([p for ok, p, known in rows if ok and known])
    unknown = np.sort([p for _, p, known in rows if not known])
    rights = (len(right_known) - np.searchsorted(right_known, mids, side="left")) + weight * np.searchsorted(
        unknown, mids, side="left"
    )
    best, best_iv = -1.0, (0.0, 1.0)
    for lo, hi, right in zip(cands[:-1], cands[1:], rights, strict=True):
        if right > best + 1e-9 or (abs(right - best) <= 1e-9 and hi - lo > best_iv[1] - best_iv[0]):
            best, best_iv = float(right), (float(lo), float(hi))
    return (best_iv[0] + best_iv[1]) / 2


def choose_floor(right_scores: list[float], n_known: int) -> float:
    """The highest score below which hiding candidates costs at most FLOOR_LOSS of known queries
    the right entry they would otherwise have seen among the first five."""
    allowed = int(FLOOR_LOSS * n_known)
    ordered = sorted(right_scores)
    return ordered[allowed] * 0.999 if len(ordered) > allowed else 0.0


def fit_all(
    tables: Sequence[QueryTable],
    held_out: set[str],
    cols: list[int],
    c: float,
    folds: int,
    threshold_tables: Sequence[QueryTable] = (),
) -> Fitted:
    """1. Candidate weights on all `tables` (the reports-against-reports ones included).
    2. Out-of-fold candidate scores of the judged tables (inner grouped CV).
    3. The answer model on those scores: is the first candidate the fix?
    4. Its threshold (most answered right) and the candidates' floor, on the same scores.
    `threshold_tables` (queries of other problems than any in `tables`: the gathered sets) add
    their answer confidences under the fitted models to the threshold's choice, their undocumented
    failures weighted so that the whole holds the judged tables' own share of them: hundreds of
    rows where the judged tables have a few dozen undocumented ones, so that one query read
    differently no longer moves the threshold, for the mix of queries it was chosen for."""
    coef, bias = fit_weights(tables, held_out, cols, c)
    judged = [t for t in tables if not t.train_only]
    extra = [t for t in tables if t.train_only]
    oof = inner_oof(judged, extra, held_out, cols, c, folds)
    A = np.array([answer_row(t, s) for t, s, _ in oof])
    labels = np.array([1.0 if t.known and ok else 0.0 for t, _, (ok, _, _) in oof])
    answer = LogisticRegression(C=c, max_iter=2000).fit(A, labels)
    acoef, abias = answer.coef_[0], float(answer.intercept_[0])
    rows = [(ok, answer_probability(a, acoef, abias), t.known) for a, (t, _, (ok, _, _)) in zip(A, oof, strict=True)]
    right_scores = [p_right for t, _, (_, _, p_right) in oof if t.known and p_right is not None]
    n_known = sum(1 for t in judged if t.known)
    # A lead must score above a candidate that shares nothing with the paste (the bias alone, or
    # less with a negative margin): at or below that, a score is noise, whatever the right entries' spread.
    floor = max(choose_floor(right_scores, n_known), NO_EVIDENCE_MARGIN * float(1 / (1 + np.exp(-bias))))
    share = None
    if threshold_tables:
        share = (len(rows) - sum(1 for r in rows if r[2])) / max(1, len(rows))
        rows += [confidence_row(t, coef, bias, cols, acoef, abias) for t in threshold_tables]
    return Fitted(coef, bias, choose_threshold(rows, share), floor, acoef, abias)


def confidence_row(
    t: QueryTable, coef: np.ndarray, bias: float, cols: list[int], acoef: np.ndarray, abias: float
) -> tuple[bool, float, bool]:
    """(first candidate right, the answer model's confidence in it, known), read as the judged
    tables' out-of-fold rows are."""
    s = scores(t, coef, bias, cols)
    ok, _, _ = top(t, s)
    return ok, answer_probability(answer_row(t, s), acoef, abias), t.known


def inner_oof(
    tables: Sequence[QueryTable],
    extra: Sequence[QueryTable],
    held_out: set[str],
    cols: list[int],
    c: float,
    folds: int,
) -> list[tuple[QueryTable, np.ndarray, tuple[bool, float, float | None]]]:
    """Out-of-fold candidate scores, with (best right?, best score, score of the right entry if
    it is in the first five). `extra` tables only add training rows."""
    groups = [t.problem for t in tables]
    out = []
    for tr, te in GroupKFold(n_splits=folds).split(np.zeros(len(tables)), groups=groups):
        inner_held = held_out | {tables[i].problem for i in te}
        coef, bias = fit_weights([tables[i] for i in tr] + list(extra), inner_held, cols, c)
        for i in te:
            s = scores(tables[i], coef, bias, cols)
            ok, p, rank = top(tables[i], s)
            p_right = float(np.sort(s)[::-1][rank - 1]) if rank and rank <= MAX_SHOWN else None
            out.append((tables[i], s, (ok, p, p_right)))
    return out


@dataclass(frozen=True)
class Outcome:
    table: QueryTable
    verdict: str
    rank: int | None  # rank of the right entry among the shown candidates
    best: float = 0.0  # the best candidate's probability
    best_right: bool = False


def decide(t: QueryTable, s: np.ndarray, f: Fitted) -> Outcome:
    ok, _, rank = top(t, s)
    p = answer_probability(answer_row(t, s), f.answer_coef, f.answer_bias)
    if len(s) and t.factor[int(np.argmax(s))] < 1:
        p = 0.0  # the family-conflict rule: as triage does, never the answer
    if t.too_little:
        p = min(p, f.threshold * 0.99)  # as triage does: no error and hardly a word
    shown = int((s >= f.floor).sum()) if len(s) else 0
    verdict = "possible" if shown else "no_match"
    if shown and p >= f.threshold:
        verdict = "match"
    if rank is not None and rank > min(shown, MAX_SHOWN):
        rank = None
    return Outcome(t, verdict, rank, p, ok)


# Given every table and the held-out problems: every table with columns added from what was
# learned without the held-out problems, and the indexes of those columns.
FoldFeature = Callable[[list[QueryTable], set[str]], tuple[list[QueryTable], list[int]]]


def grouped_cv(
    tables: list[QueryTable],
    cols: list[int],
    c: float,
    folds: int,
    fold_feature: FoldFeature | None = None,
    repeats: int = 1,
    threshold_tables: Sequence[QueryTable] = (),
) -> list[Outcome]:
    """Every query's outcome when its problem was held out, once per repeat. With `repeats` > 1
    each repeat deals the problems into folds at random (seeds 0, 1, ...), and the outcomes of
    all repeats are returned together, so every rate computed from them is the mean over repeats:
    on 112 problems one split alone moves answered-right by about ±0.007. `threshold_tables`
    (other problems' queries, never judged) join each fold's choice of threshold (`fit_all`)."""
    if fold_feature is not None and threshold_tables:
        raise ValueError("a fold feature adds columns the threshold tables do not have")
    out: list[Outcome] = []
    for seed in range(repeats):
        out.extend(
            _grouped_cv_once(tables, cols, c, folds, fold_feature, seed if repeats > 1 else None, threshold_tables)
        )
    return out


def _grouped_cv_once(
    tables: list[QueryTable],
    cols: list[int],
    c: float,
    folds: int,
    fold_feature: FoldFeature | None,
    seed: int | None,
    threshold_tables: Sequence[QueryTable] = (),
) -> list[Outcome]:
    judged = [i for i, t in enumerate(tables) if not t.train_only]
    extra = [i for i, t in enumerate(tables) if t.train_only]
    groups = [tables[i].problem for i in judged]
    out: list[Outcome] = []
    splitter = GroupKFold(n_splits=folds, shuffle=seed is not None, random_state=seed)
    for tr, te in splitter.split(np.zeros(len(judged)), groups=groups):
        held = {tables[judged[i]].problem for i in te}
        fold_tables, fold_cols = tables, cols
        if fold_feature is not None:
            fold_tables, more = fold_feature(tables, held)
            fold_cols = cols + more
        train = [fold_tables[judged[i]] for i in tr] + [fold_tables[i] for i in extra]
        fitted = fit_all(train, held, fold_cols, c, folds - 1, threshold_tables)
        out.extend(
            decide(fold_tables[judged[i]], scores(fold_tables[judged[i]], fitted.coef, fitted.bias, fold_cols), fitted)
            for i in te
        )
    return out


def print_runs(
    tables: list[QueryTable], cols: list[int], runs: dict[str, FoldFeature | None], folds: int, repeats: int
) -> None:
    """The grouped-CV table of each run: the shipped candidate model plus what its fold feature adds."""
    for name, feature in runs.items():
        outs = grouped_cv(tables, cols, 1.0, folds, feature, repeats=repeats)
        print(f"{name}:")
        present = [s for s in SETS if any(o.table.set_name == s for o in outs)]
        print_table([report(s, [o for o in outs if o.table.set_name == s]) for s in present] + [report("all", outs)])


def report(name: str, outs: Sequence[Outcome]) -> dict[str, float]:
    known = [o for o in outs if o.table.known]
    unknown = [o for o in outs if not o.table.known]
    lat = sorted(o.table.latency_ms for o in outs)
    right = sum(1 for o in known if o.rank == 1 and o.verdict == "match") + sum(
        1 for o in unknown if o.verdict != "match"
    )
    return {
        "set": name,
        "known": len({(o.table.set_name, o.table.qid) for o in known}),  # queries, whatever the repeats
        "unknown": len({(o.table.set_name, o.table.qid) for o in unknown}),
        "hit@1": sum(1 for o in known if o.rank == 1) / max(1, len(known)),
        "hit@5": sum(1 for o in known if o.rank) / max(1, len(known)),
        "mrr": sum(1 / o.rank for o in known if o.rank) / max(1, len(known)),
        "no_match_known": sum(1 for o in known if o.verdict != "match") / max(1, len(known)),
        "no_match_unknown": sum(1 for o in unknown if o.verdict != "match") / max(1, len(unknown)),
        "answered_right": right / max(1, len(outs)),
        "p50_ms": statistics.median(lat) if lat else 0.0,
        "p95_ms": lat[round(0.95 * (len(lat) - 1))] if lat else 0.0,
    }


def print_table(rows: list[dict[str, float]]) -> None:
    cols = ("hit@1", "hit@5", "mrr", "no_match_known", "no_match_unknown", "answered_right", "p50_ms", "p95_ms")
    print("| set | known | unknown | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 3) + "|")
    for r in rows:
        vals = [f"{r[c]:.0f}" if c.endswith("_ms") else f"{r[c]:.3f}" for c in cols]
        print(f"| {r['set']} | {r['known']} | {r['unknown']} | " + " | ".join(vals) + " |")


def precision_coverage(outs: Sequence[Outcome]) -> None:
    """What a threshold on the out-of-fold best score would give: precision (of the queries
    answered "match", the share whose first entry is right) against coverage (the share of
    known queries answered "match") and no_match on unknown."""
    known = [o for o in outs if o.table.known]
    unknown = [o for o in outs if not o.table.known]
    print("| threshold | precision | coverage of known | no_match on unknown |")
    print("|---|---|---|---|")
    for t in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        answered = [o for o in outs if o.best >= t]
        good = sum(1 for o in answered if o.table.known and o.best_right)
        cov = sum(1 for o in known if o.best >= t) / max(1, len(known))
        abst = sum(1 for o in unknown if o.best < t) / max(1, len(unknown))
        print(f"| {t:.2f} | {good / max(1, len(answered)):.3f} | {cov:.3f} | {abst:.3f} |")


def print_ci_log_agreement() -> None:
    """The root error against the marked failing line of the project's real CI logs (issue 12)."""
    from kb.signature import signature_from_text

    cases = json.loads((ROOT / "tests" / "data" / "ci_logs" / "cases.json").read_text(encoding="utf-8"))
    hits = 0
    for case in cases:
        root = signature_from_text(case["log"])[1].root
        hits += root is not None and root.line_start <= case["failing_line"] <= root.line_end
    print(f"CI-log suite (tests/data/ci_logs): root error on the marked line in {hits}/{len(cases)}")


def commit() -> str:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "kb", "triage", "ingest"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    return sha.strip() + ("+dirty" if dirty.strip() else "")


def print_misses(outs: Sequence[Outcome]) -> None:
    """Each query answered wrong in any repeat, with how many repeats got it wrong."""
    seen: dict[tuple[str, str], list[Outcome]] = {}
    for o in outs:
        known, right_first = o.table.known, o.rank == 1 and o.verdict == "match"
        if (known and not right_first) or (not known and o.verdict == "match"):
            seen.setdefault((o.table.set_name, o.table.qid), []).append(o)
    for (set_name, qid), wrong in seen.items():
        o = wrong[0]
        print(f"  miss {set_name:10s} {qid:60s} verdict={o.verdict:8s} rank={o.rank} (x{len(wrong)})")


def ablate(
    tables: list[QueryTable],
    cols: list[int],
    c: float,
    folds: int,
    base: float,
    repeats: int,
    threshold_tables: Sequence[QueryTable] = (),
) -> None:
    """The CV figure without each feature of the model, with each computed feature it leaves out,
    then without the family-conflict rule."""

    def line(what: str, r: dict[str, float]) -> str:
        return (
            f"{what:26s} hit@1={r['hit@1']:.3f} answered_right={r['answered_right']:.3f} "
            f"(delta {r['answered_right'] - base:+.3f})"
        )

    for f in [FEATURES[i] for i in cols]:
        without = [i for i in cols if FEATURES[i] != f]
        print(
            line(
                f"without {f}",
                report(
                    "all", grouped_cv(tables, without, c, folds, repeats=repeats, threshold_tables=threshold_tables)
                ),
            )
        )
    for i in [i for i in range(len(FEATURES)) if i not in cols]:
        print(
            line(
                f"with {FEATURES[i]}",
                report(
                    "all",
                    grouped_cv(
                        tables, sorted([*cols, i]), c, folds, repeats=repeats, threshold_tables=threshold_tables
                    ),
                ),
            )
        )
    saved = [t.factor for t in [*tables, *threshold_tables]]
    for t in [*tables, *threshold_tables]:
        t.factor = np.ones_like(t.factor)
    print(
        line(
            "without the family rule",
            report("all", grouped_cv(tables, cols, c, folds, repeats=repeats, threshold_tables=threshold_tables)),
        )
    )
    for t, factor in zip([*tables, *threshold_tables], saved, strict=True):
        t.factor = factor


def write_weights(
    path: Path,
    tables: list[QueryTable],
    cols: list[int],
    c: float,
    folds: int,
    threshold_tables: Sequence[QueryTable] = (),
) -> None:
    """Fit on every query and write the shipped weights, threshold and floor."""
    fitted = fit_all(tables, set(), cols, c, folds, threshold_tables)
    data = {
        "weights": {FEATURES[i]: round(float(w), 4) for i, w in zip(cols, fitted.coef, strict=True)},
        "bias": round(fitted.bias, 4),
        "threshold": round(fitted.threshold, 4),
        "floor": round(fitted.floor, 4),
        "answer_weights": {k: round(float(w), 4) for k, w in zip(ANSWER_FEATURES, fitted.answer_coef, strict=True)},
        "answer_bias": round(fitted.answer_bias, 4),
        "meta": {
            "fitted_by": "bench/grouped_cv.py --write",
            "queries": len(tables),
            "problems": len({t.problem for t in tables}),
            "threshold_queries": len(tables) + len(threshold_tables),
            "C": c,
        },
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {path}: threshold {fitted.threshold:.4f}, floor {fitted.floor:.4f}")


def cv_options(ap: argparse.ArgumentParser, repeats: int) -> None:
    """The options every grouped-CV script takes: folds, fold assignments, the tables' cache."""
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--repeats", type=int, default=repeats, help="random fold assignments averaged (1: GroupKFold's own)"
    )
    ap.add_argument("--cache", help="pickle of collected tables: read if it exists, else written")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="fit on everything and write triage/ranker_weights.json")
    cv_options(ap, repeats=5)
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength of the logistic model")
    ap.add_argument("--drop", action="append", default=[], help="leave a feature of the model out")
    ap.add_argument("--add", action="append", default=[], help="add a computed feature the model leaves out")
    ap.add_argument("--ablate", action="store_true", help="also report the CV figures without each feature")
    ap.add_argument(
        "--answer-add",
        action="append",
        default=[],
        help="also give the answer model this feature of the first candidate",
    )
    ap.add_argument(
        "--unknown-weight",
        type=float,
        default=UNKNOWN_WEIGHT,
        help="how many known queries a refused undocumented failure counts for when the threshold is chosen",
    )
    ap.add_argument("--show", action="store_true", help="print every wrong answer")
    ap.add_argument("--curve", action="store_true", help="print the precision-coverage curve of the CV scores")
    ap.add_argument(
        "--pack",
        action="store_true",
        help="also the starter pack's second reports (KB: the pack alone) in fitting and CV",
    )
    ap.add_argument(
        "--fresh",
        action="store_true",
        help="also the sets gathered after the last fit (bench/data/fresh*) in fitting and CV",
    )
    ap.add_argument(
        "--fresh-train",
        action="store_true",
        help="the gathered sets as training rows of the candidate model only (judged: dev and train)",
    )
    ap.add_argument(
        "--threshold-alone",
        action="store_true",
        help="choose the threshold on dev and train alone (not with the gathered sets' queries)",
    )
    ap.add_argument(
        "--pairs",
        action="store_true",
        help="also train the candidate model on reports asked against reports (never judged on them)",
    )
    return ap.parse_args()


def print_figures(tables: list[QueryTable], outs: list[Outcome], args: argparse.Namespace) -> None:
    """The grouped-CV table per set and overall, the CI-log suite, and what was asked for besides."""
    judged = [t for t in tables if not t.train_only]
    print(
        f"grouped {args.folds}-fold CV by problem, mean of {args.repeats} random fold assignments, commit {commit()}, "
        f"{len(judged)} queries on {len({t.problem for t in judged})} problems"
        + "".join(
            f", {n} {what} in training only"
            for what, n in (
                ("report-against-report queries", sum(t.set_name.startswith("pairs:") for t in tables)),
                ("gathered queries", sum(t.train_only and not t.set_name.startswith("pairs:") for t in tables)),
            )
            if n
        )
    )
    present = [s for s in SETS if any(o.table.set_name == s for o in outs)]
    rows = [report(s, [o for o in outs if o.table.set_name == s]) for s in present] + [report("all", outs)]
    gathered = tuple(s for s in present if s.removesuffix("-long") in GATHERED)
    for extra, names in (("pack", ("pack",)), ("gathered sets", gathered)):
        if names and names[0] in present:
            rows.append(report(f"all but {extra}", [o for o in outs if o.table.set_name not in names]))
    print_table(rows)
    print_ci_log_agreement()
    if args.curve:
        precision_coverage(outs)
    if args.show:
        print_misses(outs)


def main() -> None:
    """1. Triage every query once (or read the cache); 2. grouped CV and its figures;
    3. optionally the ablation; 4. optionally fit on everything and write the weights."""
    args = parse_args()
    tmp = setup_throwaway()
    try:
        from triage.ranking import WEIGHTS_PATH

        # Judged on dev and train alone, the gathered sets' queries still join the threshold's choice.
        gathered_rows = not (args.fresh or args.fresh_train or args.threshold_alone)
        tables = load_tables(
            args.cache, COLUMNS, args.pack, args.pairs, args.fresh or args.fresh_train or gathered_rows
        )
        threshold_tables = [t for t in tables if gathered_rows and t.set_name.removesuffix("-long") in GATHERED]
        tables = [t for t in tables if not (gathered_rows and t.set_name.removesuffix("-long") in GATHERED)]
        if args.fresh_train:
            for t in tables:
                t.train_only = t.train_only or t.set_name.removesuffix("-long") in GATHERED
        if args.unknown_weight != UNKNOWN_WEIGHT:
            if args.write:
                raise SystemExit("--unknown-weight is an experiment; answered right counts both kinds once: no --write")
            set_unknown_weight(args.unknown_weight)
        if args.answer_add:
            if args.write:
                raise SystemExit("--answer-add is an experiment; triage reads only ANSWER_FEATURES: no --write")
            answer_features_extend(args.answer_add)
        cols = [i for i, f in enumerate(FEATURES) if (f in MODEL_FEATURES or f in args.add) and f not in args.drop]
        outs = grouped_cv(tables, cols, args.C, args.folds, repeats=args.repeats, threshold_tables=threshold_tables)
        if threshold_tables:
            print(
                f"the threshold is also chosen on {len(threshold_tables)} queries of the gathered sets (never judged)"
            )
        print_figures(tables, outs, args)
        if args.ablate:
            ablate(
                tables, cols, args.C, args.folds, report("all", outs)["answered_right"], args.repeats, threshold_tables
            )
        if args.write:
            write_weights(WEIGHTS_PATH, tables, cols, args.C, args.folds, threshold_tables)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_tables(
    cache: str | None,
    features: tuple[str, ...],
    with_pack: bool = False,
    with_pairs: bool = False,
    with_fresh: bool = False,
) -> list[QueryTable]:
    """The judged tables (and, with `with_pairs`, the reports-against-reports training tables),
    read from `cache` (pairs: `cache`.pairs) when it exists, else collected and written there."""
    import pickle

    def cached(path: str | None, make: Callable[[], list[QueryTable]]) -> list[QueryTable]:
        if path and Path(path).exists():
            with open(path, "rb") as fh:
                return pickle.load(fh)  # noqa: S301 - a file this script wrote
        tables = make()
        if path:
            with open(path, "wb") as fh:
                pickle.dump(tables, fh)
        return tables

    tables = cached(
        cache,
        lambda: (
            collect("dev", features) + collect("train", features) + (collect("pack", features) if with_pack else [])
        ),
    )
    if with_pairs:
        tables += cached(f"{cache}.pairs" if cache else None, lambda: collect_pairs(features))
    if with_fresh:
        for name in [g for g in GATHERED if g in RUNS]:
            tables += cached(f"{cache}.{name}" if cache else None, lambda name=name: collect(name, features))
    return tables


if __name__ == "__main__":
    main()
