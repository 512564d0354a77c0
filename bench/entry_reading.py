"""What reading a job-log entry by its error region costs when the ranking copy is built.

    .venv/bin/python bench/entry_reading.py

Each of train-long's 170 pastes (real reports inside whole job logs, about 110 lines) stands for an
entry whose problem text is a job log: its words read whole (`raw_tokens`), against its error
region found first (`entry_raw_text`, what the ranking copy does from ENTRY_REGION_MIN_LINES
lines). Short entries are read whole, as before. Prints milliseconds per entry.
"""

from __future__ import annotations

import json
import shutil
import time

from _django import setup_throwaway
from benchsets import BENCH


def per_entry_ms(fn, texts: list[str], rounds: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for t in texts:
            fn(t)
        best = min(best, time.perf_counter() - start)
    return best / len(texts) * 1000


def main() -> None:
    tmp = setup_throwaway()
    try:
        from kb.services.entries import EXCERPT_LIMIT
        from triage.lexical import ENTRY_REGION_MIN_LINES, entry_raw_text, raw_tokens

        path = BENCH / "train-long" / "queries.jsonl"
        texts = [json.loads(line)["log"][:EXCERPT_LIMIT] for line in path.read_text().splitlines()]
        long = [t for t in texts if t.count("\n") >= ENTRY_REGION_MIN_LINES]
        lines = sum(t.count("\n") + 1 for t in long) / len(long)
        print(f"{len(long)} job-log entries of {ENTRY_REGION_MIN_LINES}+ lines (mean {lines:.0f} lines)")
        print(f"read whole:               {per_entry_ms(raw_tokens, long):.2f} ms/entry")
        print(f"read by its error region: {per_entry_ms(lambda t: raw_tokens(entry_raw_text(t)), long):.2f} ms/entry")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
