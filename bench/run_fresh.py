"""The gathered sets through the public API, scored by the shared benchmark's own script.

    .venv/bin/python bench/run_fresh.py fresh|fresh-long|fresh2|... --project . --python .venv/bin/python --no-baselines

`../shared/bench/run_bench.py` knows only the shared sets; this adds each gathered set's two (their
corpus beside the knowledge base `bench/benchsets.py` lays out for them) and hands over to its
`main`, so ingest, token, server and scoring are exactly the outside sets' own.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from benchsets import GATHERED, RUNS

SCRIPT = Path(__file__).resolve().parents[2] / "shared" / "bench" / "run_bench.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("run_bench", SCRIPT)
    run_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_bench)
    for gathered in [g for g in GATHERED if g in RUNS]:
        dirs, span_files, query_sets = RUNS[gathered]
        for name, queries in query_sets:
            run_bench.RUNS[name] = (dirs, span_files, queries)
    run_bench.main()


if __name__ == "__main__":
    main()
