"""How many of the benchmarks' known problems the parsers turn into no entry at all.

    .venv/bin/python bench/span_entries.py [--show]

Each corpus (../shared/bench dev and train, the samples, every gathered set under bench/data) lists
where each problem's first report sits (spans.json). A problem whose span no parsed entry overlaps is
lost before triage starts: every later report of it can only be refused or answered wrong. This
parses each corpus file as `manage.py ingest` does and counts those spans, per corpus.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _django import setup_throwaway
from benchsets import BENCH, DATA, GATHERED, SAMPLES


def corpora() -> list[tuple[str, Path, Path]]:
    """(name, corpus folder, spans file) for every labelled corpus here."""
    out = [(name, BENCH / name / "corpus", BENCH / name / "spans.json") for name in ("dev", "train")]
    out.append(("samples", SAMPLES, BENCH / "samples-spans.json"))
    out += [(g, DATA / g / "corpus", DATA / g / "spans.json") for g in GATHERED if (DATA / g / "spans.json").exists()]
    return [c for c in out if c[2].exists()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", action="store_true", help="name each problem that makes no entry")
    args = ap.parse_args()
    setup_throwaway()
    from ingest.parsers import decode_document, parse_document

    total = lost = 0
    print("| corpus | problems | with no entry |\n|---|---|---|")
    for name, folder, spans_file in corpora():
        n = missing = 0
        for fname, spans in json.loads(spans_file.read_text()).items():
            _, cands = parse_document(decode_document((folder / fname).read_bytes()))
            for start, end, problem in spans:
                n += 1
                if not any(c.line_start <= int(end) and c.line_end >= int(start) for c in cands):
                    missing += 1
                    if args.show:
                        print(f"  {name}: {problem} ({fname}:{start}-{end})")
        print(f"| {name} | {n} | {missing} |")
        total, lost = total + n, lost + missing
    print(f"| all | {total} | {lost} |")


if __name__ == "__main__":
    main()
