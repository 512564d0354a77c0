"""Triage on large knowledge bases (fake embedder: ranking and Python overhead alone).

    .venv/bin/python bench/scale.py [--sizes 10000 100000 1000000] [--keep DIR] [--no-recall] [--sweep]

For each size, a knowledge base is built in a fresh data directory (or in DIR/<size>, reused
when it is there: building a million entries takes tens of minutes) from mutations of the real
failures of the shared benchmarks (their root errors with other frames, numbers, paths, words and
library versions), ingested through `manage.py ingest` as raw logs. Then, in one process:
warm triage p50/p95 for short pastes (a real query) and for 300-line pastes (the same inside
real job-log noise), the first triage after a write, how long until the written entry is matched,
the first triage after an edit of an entry of the full build and after a deletion of one,
the process's peak RSS, and recall@5 of the ranking against exact ranking (every BM25 list
summed, dense neighbours by brute force) on the same queries.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "bench"
WORDS = [
    "actor",
    "critic",
    "rollout",
    "reward",
    "buffer",
    "shard",
    "tensor",
    "kernel",
    "stream",
    "bucket",
    "sampler",
    "worker",
    "engine",
]
MODULES = [
    "verl",
    "trl",
    "vllm",
    "deepspeed",
    "torch",
    "transformers",
    "ray",
    "accelerate",
    "peft",
    "swift",
    "openrlhf",
    "sglang",
]


def real_roots() -> list[tuple[str, str]]:
    """(exception type, message) of the root errors of every benchmark query."""
    sys.path.insert(0, str(ROOT))
    from kb.signature import signature_from_text

    out = []
    for qfile in (SHARED / "train" / "queries.jsonl", SHARED / "dev" / "queries.jsonl"):
        for line in qfile.read_text().splitlines():
            sig, _ = signature_from_text(json.loads(line)["log"])
            if sig.exc_type and sig.raw_message:
                out.append((sig.exc_type, sig.raw_message[:300]))
    return out


def mutated_failure(rng: random.Random, roots: list[tuple[str, str]], k: int) -> str:
    exc, message = rng.choice(roots)
    words = message.split()
    for _ in range(3):  # other words, numbers and names than the real report had
        if words:
            words[rng.randrange(len(words))] = f"{rng.choice(WORDS)}_{k % 997}_{rng.choice(WORDS)}"
    frames = "\n".join(
        f'  File "/opt/conda/lib/python3.11/site-packages/{rng.choice(MODULES)}/{rng.choice(WORDS)}_{k % 53}.py", '
        f"line {rng.randrange(20, 2000)}, in {rng.choice(WORDS)}_{rng.choice(WORDS)}\n    x = f(y)"
        for _ in range(rng.randrange(1, 5))
    )
    return f"Traceback (most recent call last):\n{frames}\n{exc}: {' '.join(words)} (v{k % 7}.{k % 11}.{k % 5})"


def build(size: int, data: Path, env: dict[str, str]) -> float:
    rng = random.Random(size)
    roots = real_roots()
    log = data / "kb.log"
    with open(log, "w", encoding="utf-8") as fh:
        for k in range(size):
            fh.write(f"step {k} INFO\n{mutated_failure(rng, roots, k)}\n\n")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "ingest", str(log)], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return time.perf_counter() - start


def measure(size: int, keep: Path | None = None, no_recall: bool = False, sweep: bool = False) -> None:
    """Build a knowledge base of `size` entries (or reuse the one kept in `keep`), then measure."""
    data = keep / str(size) if keep else Path(tempfile.mkdtemp(prefix=f"fixbase-scale-{size}-"))
    data.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "FIXBASE_DATA_DIR": str(data), "FIXBASE_EMBEDDER": "fake", "FIXBASE_LOG_LEVEL": "WARNING"}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    built = data / "ingest-seconds"
    if built.exists():
        secs = float(built.read_text())
    else:
        secs = build(size, data, env)
        built.write_text(str(secs))
    cmd = [
        sys.executable,
        __file__,
        "--inner",
        str(size),
        *(["--no-recall"] if no_recall else []),
        *(["--sweep"] if sweep else []),
    ]
    out = subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    print(f"{size} entries: ingested in {secs:.0f} s ({size / secs:.0f}/s); {' '.join(out.stdout.split())}")


def sample_queries() -> tuple[list[str], list[str]]:
    """Real queries (the first 60 of train), and the same inside 280 lines of a real job log."""
    queries = [json.loads(line)["log"] for line in (SHARED / "train" / "queries.jsonl").read_text().splitlines()]
    noise = (ROOT / "samples" / "raw_train.log").read_text().splitlines()[:280]
    return queries[:60], ["\n".join(noise) + "\n" + q for q in queries[:60]]


def inner(size: int, recall: bool = True, lexical_sweep: bool = False) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    if lexical_sweep:
        sweep(size)
        return
    from kb.models import Entry
    from kb.services import NewEntry, entries_ingest
    from triage.services import triage_log

    queries, long_queries = sample_queries()
    start = time.perf_counter()
    triage_log(queries[0])
    cold = time.perf_counter() - start

    def timed(texts: list[str]) -> tuple[float, float]:
        lat = []
        for text in texts:
            t = time.perf_counter()
            triage_log(text)
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        return statistics.median(lat), lat[round(0.95 * (len(lat) - 1))]

    short = timed(queries)
    long = timed(long_queries)
    after, visible = [], []
    run = "".join(random.choices(string.ascii_lowercase, k=8))
    for k in range(3):
        # Letters of its own each run (numbers are masked), so a kept knowledge base gets a new entry.
        probe = f"KeyError: 'scale_probe_{'xyz'[k]}_{run}'"
        entries_ingest([NewEntry(f"probe {k}", probe, "fix", "probe.log", None, 1, 1, 1, 1)])
        t = time.perf_counter()
        found = triage_log(probe).matches[:1]
        after.append((time.perf_counter() - t) * 1000)
        while not found or found[0].title != f"probe {k}":  # until the rebuilt copy is in place
            time.sleep(0.05)
            found = triage_log(probe).matches[:1]
        visible.append(time.perf_counter() - t)
    # An edit of an entry of the full build (layered, not a rebuild, unless too much changed).
    from kb.services import entry_update
    from triage.ranking_cache import get_snapshot

    built = Entry.objects.order_by("pk").first()
    assert built is not None
    entry_update(built, title=f"{built.title} (edited {run})", remedy_markdown=built.remedy_markdown)
    t = time.perf_counter()
    triage_log(queries[1])
    edit_ms = (time.perf_counter() - t) * 1000
    layered = get_snapshot().base is not None
    # A deletion of a built entry: the first triage after it compares pks (one read of the column);
    # the next write's does not.
    from kb.models import KbState

    Entry.objects.order_by("pk")[1].delete()  # (the product never deletes an entry: merges hide one)
    KbState.bump()
    t = time.perf_counter()
    triage_log(queries[2])
    delete_ms = (time.perf_counter() - t) * 1000
    entries_ingest(
        [NewEntry("probe after delete", f"KeyError: 'scale_probe_d_{run}'", "fix", "probe.log", None, 1, 1, 1, 1)]
    )
    t = time.perf_counter()
    triage_log(queries[3])
    after_delete_ms = (time.perf_counter() - t) * 1000
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{Entry.objects.count()} in the KB; cold start {cold:.1f} s; warm triage p50/p95 {short[0]:.0f}/{short[1]:.0f} ms "
        f"short, {long[0]:.0f}/{long[1]:.0f} ms 300-line; first triage after a write {statistics.median(after):.0f} ms, "
        f"the new entry matched after {statistics.median(visible):.1f} s; "
        f"first triage after an edit {edit_ms:.0f} ms ({'layered' if layered else 'not layered'}); "
        f"after a deletion {delete_ms:.0f} ms, after the next write {after_delete_ms:.0f} ms; "
        f"peak RSS {rss:.0f} MB;",
        flush=True,
    )
    if recall:
        r_short, r_short_better, r_long, r_long_better = recall_at_5(queries, long_queries)
        print(
            f"recall@5 against exact ranking {r_short:.3f} short, {r_long:.3f} 300-line; counting a "
            f"better-scoring entry in place of a missed one as held {r_short_better:.3f}, {r_long_better:.3f}"
        )


Ranked = list[tuple[int, float]]  # a triage's first five entries with their scores


def top5(text: str) -> Ranked:
    from triage.services import triage_log

    return [(m.entry_id, m.score) for m in triage_log(text, top_k=5, min_score=0.0).matches]


def share(got: list[Ranked], exact: list[Ranked], or_better: bool = False) -> float:
    """The mean share of the exact first five that the scaled first five hold. With `or_better`,
    an entry missing from the scaled five counts as held when every scaled entry scores at least
    as well: the exact path's pools are cut at 30 too (by exact BM25 and by brute-force vector
    distance), so the scaled path may gather a better entry that the exact one never saw."""
    shares = []
    for mine, best in zip(got, exact, strict=True):
        if not best:
            continue
        ids = {pk for pk, _ in mine}
        floor = min((score for _, score in mine), default=float("inf")) if len(mine) >= len(best) else float("inf")
        held = sum(1 for pk, score in best if pk in ids or (or_better and score <= floor))
        shares.append(held / len(best))
    return statistics.mean(shares) if shares else 1.0


def sweep(size: int) -> None:
    """Recall@5 and latency of the lexical shortcut's settings (triage.lexical READ_BUDGET and
    RERANK) on the same knowledge base, in one process: how they were chosen."""
    from triage import lexical

    queries, long_queries = sample_queries()
    for q in queries[:20]:
        top5(q)  # warm
    runs = []
    for budget, rerank in ((250_000, 50), (1_000_000, 50), (250_000, 400), (1_000_000, 400), (10**12, 10**9)):
        lexical.READ_BUDGET, lexical.RERANK = budget, rerank
        row = []
        for qs in (queries, long_queries):
            lat, got = [], []
            for q in qs:
                t = time.perf_counter()
                got.append(top5(q))
                lat.append((time.perf_counter() - t) * 1000)
            lat.sort()
            row.append((got, statistics.median(lat), lat[round(0.95 * (len(lat) - 1))]))
        runs.append((budget, rerank, row))
    exact = exact_top5(queries, long_queries)
    for budget, rerank, row in runs:
        label = "every list summed" if budget > 10**9 else f"READ_BUDGET {budget:,} RERANK {rerank}"
        print(
            f"{size} entries, {label}: recall@5 {share(row[0][0], exact[0]):.3f} short, "
            f"{share(row[1][0], exact[1]):.3f} 300-line; p50/p95 {row[0][1]:.0f}/{row[0][2]:.0f} ms short, "
            f"{row[1][1]:.0f}/{row[1][2]:.0f} ms 300-line",
            flush=True,
        )


def recall_at_5(*query_sets: list[str]) -> list[float]:
    """Per query set: recall@5, then recall@5 counting a better-scoring substitute as held."""
    """Share of the exact ranking's first five entries that the scaled path also ranks in its first
    five. Run after the RSS is read: the exact path holds every vector."""
    scaled = [[top5(q) for q in queries] for queries in query_sets]
    exact = exact_top5(*query_sets)
    return [share(got, best, or_better) for got, best in zip(scaled, exact, strict=True) for or_better in (False, True)]


def exact_top5(*query_sets: list[str]) -> list[list[Ranked]]:
    """The first five entries of the exact ranking: every BM25 posting list summed, and dense
    neighbours by brute force over every stored vector (not the approximate index)."""
    from dataclasses import replace

    import numpy as np

    from kb.embedding import get_embedder
    from kb.models import Embedding
    from triage import ranking_cache, services

    embedder = get_embedder()
    rows = Embedding.objects.filter(model_name=embedder.name, dim=embedder.dim).values_list("entry_id", "vector")
    ids, chunks = [], []
    for pk, vec in rows.iterator(chunk_size=5000):
        ids.append(pk)
        chunks.append(bytes(vec))
    matrix = np.frombuffer(b"".join(chunks), dtype=np.float32).reshape(len(ids), embedder.dim)
    id_array = np.asarray(ids, dtype=np.int64)

    class ExactVectors:
        def search(self, vector: np.ndarray, k: int, model_name: str) -> list[tuple[int, float]]:
            scores = matrix @ np.asarray(vector, dtype=np.float32)
            best = np.argpartition(-scores, k - 1)[:k]
            return [(int(id_array[i]), float(scores[i])) for i in best[np.argsort(-scores[best])]]

    snap = ranking_cache.get_snapshot()
    index = services.get_index
    ranking_cache._current = replace(snap, corpus=snap.corpus.with_exact(True))
    services.get_index = ExactVectors  # type: ignore[assignment]
    try:
        return [[top5(q) for q in queries] for queries in query_sets]
    finally:
        ranking_cache._current, services.get_index = snap, index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[10000, 100000])
    ap.add_argument("--inner", type=int)
    ap.add_argument("--keep", type=Path, help="keep each knowledge base in KEEP/<size> and reuse it when there")
    ap.add_argument("--no-recall", action="store_true", help="skip recall@5 against exact ranking")
    ap.add_argument(
        "--sweep", action="store_true", help="instead: recall and latency of the lexical shortcut's settings"
    )
    args = ap.parse_args()
    if args.inner:
        inner(args.inner, recall=not args.no_recall, lexical_sweep=args.sweep)
        return
    for size in args.sizes:
        measure(size, args.keep, args.no_recall, args.sweep)


if __name__ == "__main__":
    main()
