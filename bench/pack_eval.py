"""How the starter pack answers, with the shipped ranker and the real model.

    .venv/bin/python bench/pack_eval.py [--show]

The knowledge base is the pack alone (as `make run` on a fresh clone, before any team document).
1. Self-consistency: every entry's own report (the log it was made from) triaged back.
2. Second reports (other users' reports of the same problems, never stored): Hit@1, Hit@5,
   verdicts. These are what issue 11 is judged on (Hit@1 >= 0.85, no_match <= 0.10).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import time

from _django import ROOT, setup_throwaway


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", action="store_true", help="print every miss")
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    tmp = setup_throwaway(args.embedder)
    try:
        from kb.models import Entry
        from kb.pack import pack_entries, pack_load, pack_reports
        from triage.services import triage_log

        out = pack_load()
        ids = dict(Entry.objects.filter(origin="pack").values_list("pack_id", "pk"))
        entries = pack_entries()
        own_hits = 0
        by_pk = {pk: pid for pid, pk in ids.items()}
        for p in entries:
            res = triage_log(p.reports[0][0])
            own = bool(res.matches) and res.matches[0].entry_id == ids[p.id]
            own_hits += own
            if args.show and not own:
                got = by_pk.get(res.matches[0].entry_id) if res.matches else None
                print(f"  own report of {p.id} answered by {got} ({res.verdict})")
        reports = pack_reports()
        hit1 = hit5 = 0
        verdicts: dict[str, int] = {"match": 0, "possible": 0, "no_match": 0}
        lat = []
        for r in reports:
            t = time.perf_counter()
            res = triage_log(r["log"])
            lat.append((time.perf_counter() - t) * 1000)
            ranked = [m.entry_id for m in res.matches]
            want = ids[r["case"]]
            hit1 += bool(ranked) and ranked[0] == want
            hit5 += want in ranked[:5]
            verdicts[res.verdict] += 1
            if args.show and (not ranked or ranked[0] != want):
                print(f"  miss {r['id']:60s} verdict={res.verdict:8s} got={ranked[:1]} want={want}")
        n = max(1, len(reports))
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"starter pack v{out.version}, commit {sha}: {len(entries)} entries, {len(reports)} second reports")
        print(f"self-consistency: {own_hits}/{len(entries)} entries' own reports triage back to them first")
        print(
            f"second reports: Hit@1 {hit1 / n:.3f}, Hit@5 {hit5 / n:.3f}, match {verdicts['match'] / n:.3f}, "
            f"possible {verdicts['possible'] / n:.3f}, no_match {verdicts['no_match'] / n:.3f}; "
            f"p50 {statistics.median(lat) if lat else 0:.0f} ms"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
