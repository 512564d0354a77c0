"""Log scan throughput and peak memory on a generated training log (default 1 GB).

    .venv/bin/python bench/scan_throughput.py [--size-mb 1024] [--keep PATH] [--harmless-every N] [--realistic]

Prints MB/s on one core and the peak RSS of the process. Goals: >= 50 MB/s, < 300 MB.
`--harmless-every 100` puts a healthy line with an error-ish word every 100 lines (trigger
density 1/100); `--realistic` builds the log from the real healthy lines of the samples.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen_log import write_log
from ingest.parsers.stream import open_log, scan_stream
from kb.rootcause import dedupe_blocks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--keep", type=Path, default=None, help="Reuse or keep the generated log here.")
    parser.add_argument("--harmless-every", type=int, default=0)
    parser.add_argument("--realistic", action="store_true")
    args = parser.parse_args()
    path = args.keep or Path(tempfile.mkdtemp()) / "train.log"
    if not path.exists():
        t = time.perf_counter()
        buried = write_log(path, args.size_mb << 20, harmless_every=args.harmless_every, realistic=args.realistic)
        print(f"generated {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f}s")
    else:
        buried = []
    size = path.stat().st_size
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    with open_log(path) as fh:
        blocks = dedupe_blocks(tuple(scan_stream(fh)))
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    errors = [b for b in blocks if b.kind != "warning"]
    print(f"scanned {size / 1e6:.0f} MB in {elapsed:.1f}s: {size / 1e6 / elapsed:.0f} MB/s on one core")
    print(f"peak RSS {peak:.0f} MB (before scanning {rss_before:.0f} MB)")
    print(f"distinct errors found: {len(errors)}")
    for b in errors:
        print(f"  line {b.line_start}: {(b.short_type or b.pattern)}: {b.message[:90]}")
    missing = [line for line in buried if not any(line.rsplit(": ", 1)[-1][:25] in b.message for b in errors)]
    if missing:
        print("MISSED:", missing)
        raise SystemExit(1)
    if args.keep is None:
        path.unlink()


if __name__ == "__main__":
    main()
