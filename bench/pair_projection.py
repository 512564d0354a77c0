"""Does a projection of the MiniLM vectors, trained on pairs of reports, help the ranker?

    .venv/bin/python bench/pair_projection.py [--lam 0.001] [--repeats 5] [--cache FILE] [--fresh]

Issue 7 asked for "same problem?" learnt from pairs, as Sentry did for similar issues with
embeddings trained on such pairs. At the scale of this data (a few hundred reports) that is a
linear map W over the 384-d vectors of the compact signatures, fitted with a contrastive loss:
each training query is pulled towards its right entry and the other reports of its problem,
away from the wrong candidates triage gathered for it; `lam` pulls W towards the identity.
cos(Wq, We) is then added to the candidate model as one more feature.

Judged like everything else, by grouped CV (bench/grouped_cv.py): in each fold W is fitted
without the held-out problems. The script prints the figures without the feature, with the
plain cosine, and with the projected one.
"""

from __future__ import annotations

import argparse
import copy
import shutil

import numpy as np
from _django import setup_throwaway
from benchsets import QueryTable
from grouped_cv import COLUMNS, FEATURES, cv_options, load_tables, print_runs

from triage.ranking import MODEL_FEATURES

TAU = 0.05  # temperature of the contrastive loss
LR = 0.01


def pairs(tables: list[QueryTable], held: set[str]) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Anchors (training queries), their positives (right entry, other reports of the problem)
    and negatives (the wrong candidates), none touching a held-out problem."""
    reports: dict[str, list[np.ndarray]] = {}
    for t in tables:
        if t.known and t.problem not in held and t.qvec is not None:
            reports.setdefault(t.problem, []).append(t.qvec)
    anchors, positives, negatives = [], [], []
    for t in tables:
        if not t.known or t.problem in held or not len(t.y) or t.evecs is None or t.qvec is None:
            continue
        keep = [not (ep & held) and bool(np.any(t.evecs[i])) for i, ep in enumerate(t.entry_problems)]
        pos = [t.evecs[i] for i in range(len(t.y)) if t.y[i] and keep[i]]
        pos += [v for v in reports[t.problem] if v is not t.qvec]
        neg = [t.evecs[i] for i in range(len(t.y)) if not t.y[i] and keep[i]]
        if pos and neg:
            anchors.append(t.qvec)
            positives.append(np.array(pos))
            negatives.append(np.array(neg))
    return np.array(anchors), positives, negatives


def padded(rows: list[np.ndarray], dim: int):  # type: ignore[no-untyped-def]
    import torch

    out = torch.zeros(len(rows), max(len(r) for r in rows), dim)
    mask = torch.zeros(out.shape[:2], dtype=torch.bool)
    for k, r in enumerate(rows):
        out[k, : len(r)] = torch.from_numpy(r)
        mask[k, : len(r)] = True
    return out, mask


def fit_projection(tables: list[QueryTable], held: set[str], lam: float, epochs: int) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    anchors, positives, negatives = pairs(tables, held)
    dim = anchors.shape[1]
    a0 = torch.from_numpy(anchors)
    pos, pos_mask = padded(positives, dim)
    neg, neg_mask = padded(negatives, dim)
    eye = torch.eye(dim)
    w = torch.nn.Parameter(torch.eye(dim))
    opt = torch.optim.Adam([w], lr=LR)
    for _ in range(epochs):
        opt.zero_grad()
        a = F.normalize(a0 @ w, dim=1)
        sp = torch.einsum("kmd,kd->km", F.normalize(pos @ w, dim=2), a) / TAU
        sn = torch.einsum("kmd,kd->km", F.normalize(neg @ w, dim=2), a) / TAU
        sp, sn = sp.masked_fill(~pos_mask, -1e9), sn.masked_fill(~neg_mask, -1e9)
        nce = -(torch.logsumexp(sp, 1) - torch.logsumexp(torch.cat([sp, sn], 1), 1)).mean()
        loss = nce + lam * ((w - eye) ** 2).sum()
        loss.backward()
        opt.step()
    return w.detach().numpy()


def with_cosine(tables: list[QueryTable], w: np.ndarray | None) -> list[QueryTable]:
    """Every table with one more column: cos(Wq, We), or the plain cosine when `w` is None."""
    out = []
    for t in tables:
        t2 = copy.copy(t)
        col = np.zeros(len(t.y))
        if len(t.y) and t.qvec is not None and t.evecs is not None:
            q, e = (t.qvec, t.evecs) if w is None else (t.qvec @ w, t.evecs @ w)
            col = (e @ q) / ((np.linalg.norm(e, axis=1) + 1e-9) * (np.linalg.norm(q) + 1e-9))
        t2.X = np.hstack([t.X, col[:, None]])
        out.append(t2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lam", type=float, default=0.001, help="pull of W towards the identity")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--fresh", action="store_true", help="also the gathered sets (bench/data/fresh*) in fitting and CV")
    cv_options(ap, repeats=5)
    args = ap.parse_args()
    tmp = setup_throwaway()
    try:
        tables = load_tables(args.cache, COLUMNS, with_fresh=args.fresh)
        cols = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
        extra = [len(COLUMNS)]
        runs = {
            "without a dense feature": None,
            "with the plain cosine": lambda ts, held: (with_cosine(ts, None), extra),
            f"with the projected cosine (lam {args.lam})": lambda ts, held: (
                with_cosine(ts, fit_projection(ts, held, args.lam, args.epochs)),
                extra,
            ),
        }
        print_runs(tables, cols, runs, args.folds, args.repeats)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
