"""End-to-end ingest speed through `manage.py ingest` (fake embedder: parsing, redaction, storage).

    .venv/bin/python bench/ingest_throughput.py [--size-mb 200] [--distinct 20000]

1. A realistic training log (real healthy lines of the samples, five failures buried in it):
   MB/s from start to finish of `manage.py ingest`, and that process's peak RSS.
2. A raw log of `--distinct` different failures: distinct failures (entries) per second.
Each run uses a fresh data directory (SQLite, FAISS files), so nothing else is measured.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen_log import write_log

ROOT = Path(__file__).resolve().parent.parent
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "sigma",
    "omega",
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
    "scheduler",
    "planner",
    "adapter",
    "router",
    "gather",
    "scatter",
    "pinned",
    "offload",
]


def ingest(path: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, last output line) of `manage.py ingest path` in a fresh data dir."""
    data = tempfile.mkdtemp(prefix="fixbase-ingest-bench-")
    env = {**os.environ, "FIXBASE_DATA_DIR": data, "FIXBASE_EMBEDDER": "fake", "FIXBASE_LOG_LEVEL": "WARNING"}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    start = time.perf_counter()
    out = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "manage.py", "ingest", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed = time.perf_counter() - start
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    return elapsed, (int(rss.group(1)) / 1024 if rss else float("nan")), last


def write_distinct(path: Path, n: int, seed: int = 0) -> None:
    """A log of `n` failures that differ in their words (numbers alone would be masked alike)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(n):
            words = " ".join(rng.sample(WORDS, 5))
            fh.write(f"step {k} INFO training\n")
            fh.write(f"ValueError: invalid {words} configuration for {rng.choice(WORDS)}_{rng.choice(WORDS)}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--distinct", type=int, default=20000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fixbase-ingest-logs-"))
    big = tmp / "training.log"
    write_log(big, args.size_mb << 20, realistic=True)
    size = big.stat().st_size / 1e6
    secs, rss, last = ingest(big)
    print(
        f"realistic log {size:.0f} MB: {secs:.1f} s end to end, {size / secs:.1f} MB/s, peak RSS {rss:.0f} MB ({last})"
    )
    distinct = tmp / "distinct.log"
    write_distinct(distinct, args.distinct)
    secs, rss, last = ingest(distinct)
    print(f"{args.distinct} distinct failures: {secs:.1f} s end to end, {args.distinct / secs:.0f} failures/s ({last})")
    big.unlink()
    distinct.unlink()


if __name__ == "__main__":
    main()
