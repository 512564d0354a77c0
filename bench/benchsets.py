"""Labelled triage benchmarks as the shared folder lays them out, turned into candidate tables.

A *run* is one knowledge base plus the query sets asked against it:
  dev    = ../shared/bench/dev/corpus + ../shared/samples,      queries dev, dev-long
  train  = ../shared/bench/train/corpus + dev/corpus + samples, queries train, train-long
  fresh  = bench/data/fresh/corpus + train's knowledge base,      queries fresh, fresh-long
  fresh2 = bench/data/fresh2/corpus + fresh's knowledge base,     queries fresh2, fresh2-long
  pack   = the starter pack alone,                               queries its second reports
(the same corpora `../shared/bench/run_bench.py` ingests). Every query is triaged with every
candidate kept, so fitting and grouped cross-validation can re-rank offline.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _django import ROOT

SHARED = ROOT.parent / "shared"
BENCH = SHARED / "bench"
SAMPLES = SHARED / "samples"
DATA = ROOT / "bench" / "data"
# Sets gathered after the ranker's fit (bench/fresh_build.py), in the order they were gathered.
GATHERED = (
    "fresh",
    "fresh2",
    "fresh3",
    "fresh4",
    "fresh5",
    "fresh6",
    "fresh7",
    "fresh8",
    "fresh9",
    "fresh10",
    "fresh11",
    "fresh12",
    "fresh13",
    "fresh14",
    "fresh15",
    "fresh16",
    "fresh17",
    "fresh18",
    "fresh19",
    "fresh20",
    "fresh21",
    "fresh22",
    "fresh23",
    "fresh24",
    "fresh25",
    "fresh26",
    "fresh27",
    "fresh28",
    "fresh29",
    "fresh30",
    "fresh31",
    "fresh32",
    "fresh33",
    "fresh34",
    "fresh35",
    "fresh36",
    "fresh37",
    "fresh38",
    "fresh39",
    "fresh40",
    "fresh41",
    "fresh42",
)

RUNS: dict[str, tuple[list[Path], list[Path], list[tuple[str, Path]]]] = {
    "dev": (
        [BENCH / "dev" / "corpus", SAMPLES],
        [BENCH / "dev" / "spans.json", BENCH / "samples-spans.json"],
        [("dev", BENCH / "dev" / "queries.jsonl"), ("dev-long", BENCH / "dev-long" / "queries.jsonl")],
    ),
    "train": (
        [BENCH / "train" / "corpus", BENCH / "dev" / "corpus", SAMPLES],
        [BENCH / "train" / "spans.json", BENCH / "dev" / "spans.json", BENCH / "samples-spans.json"],
        [("train", BENCH / "train" / "queries.jsonl"), ("train-long", BENCH / "train-long" / "queries.jsonl")],
    ),
    # dev's queries against train's knowledge base (5x the entries, dev's own among them): how a
    # model fitted on one wave of problems carries over to another, in a larger knowledge base.
    "dev-in-train": (
        [BENCH / "train" / "corpus", BENCH / "dev" / "corpus", SAMPLES],
        [BENCH / "train" / "spans.json", BENCH / "dev" / "spans.json", BENCH / "samples-spans.json"],
        [
            ("dev@train-kb", BENCH / "dev" / "queries.jsonl"),
            ("dev-long@train-kb", BENCH / "dev-long" / "queries.jsonl"),
        ],
    ),
}


def _gathered_run(name: str) -> tuple[list[Path], list[Path], list[tuple[str, Path]]]:
    """A gathered set asked against the largest knowledge base: its own first reports among the
    earlier gathered sets', train's, dev's and the samples' entries."""
    kb = [DATA / name, *[DATA / g for g in GATHERED[: GATHERED.index(name)]]]
    return (
        [d / "corpus" for d in kb] + [BENCH / "train" / "corpus", BENCH / "dev" / "corpus", SAMPLES],
        [d / "spans.json" for d in kb]
        + [BENCH / "train" / "spans.json", BENCH / "dev" / "spans.json", BENCH / "samples-spans.json"],
        [(name, DATA / name / "queries.jsonl"), (f"{name}-long", DATA / f"{name}-long" / "queries.jsonl")],
    )


RUNS.update({name: _gathered_run(name) for name in GATHERED if (DATA / name / "queries.jsonl").exists()})


@dataclass
class QueryTable:
    """One query's candidates as the triage pipeline scored them."""

    set_name: str  # dev, dev-long, train, train-long
    qid: str
    problem: str  # the problem id; a query with no known match is its own problem
    known: bool
    entry_ids: np.ndarray
    entry_problems: list[frozenset[str]]  # the problems each candidate's sources overlap
    X: np.ndarray  # candidates × features
    y: np.ndarray  # 1 where the candidate is the right entry
    factor: np.ndarray  # what triage multiplies a candidate's probability by (rules on top of the model)
    latency_ms: float
    qvec: np.ndarray | None = None  # the query's compact-signature embedding
    evecs: np.ndarray | None = None  # candidates × dim: the entries' embeddings
    too_little: bool = False  # triage's rule: never a confident match (hardly a telling word)
    qtext: str = ""  # the query's compact signature, the text that is embedded
    etexts: tuple[str, ...] = ()  # the candidates' compact signatures
    train_only: bool = False  # reports against reports (collect_pairs): training rows, never judged


def _spans(span_files: list[Path]) -> dict[str, list[tuple[int, int, str]]]:
    out: dict[str, list[tuple[int, int, str]]] = {}
    for sf in span_files:
        for fname, lst in json.loads(sf.read_text()).items():
            out.setdefault(fname, []).extend((int(s), int(e), str(p)) for s, e, p in lst)
    return out


def _reset_kb() -> None:
    from ingest.models import Document
    from kb.models import Entry, KbState
    from kb.services import index_rebuild

    Entry.objects.all().delete()
    Document.objects.all().delete()
    KbState.bump()
    index_rebuild()


def collect(run: str, features: tuple[str, ...]) -> list[QueryTable]:
    """Ingest the run's corpus into the (throwaway) knowledge base and triage every query."""
    from django.core.management import call_command

    from kb.models import Occurrence

    _reset_kb()
    source_problems: dict[int, list[frozenset[str]]] = {}
    if run == "pack":
        # The starter pack alone; its second reports are the queries, each right for its entry.
        from kb.models import Entry
        from kb.pack import pack_load, pack_reports

        pack_load()
        for pk, pack_id in Entry.objects.filter(origin="pack").values_list("pk", "pack_id"):
            source_problems[pk] = [frozenset({f"pack:{pack_id}"})]
        query_sets = [("pack", [{**q, "case": f"pack:{q['case']}"} for q in pack_reports()])]
    else:
        dirs, span_files, query_files = RUNS[run]
        for d in dirs:
            call_command("ingest", str(d), stdout=io.StringIO())
        spans = _spans(span_files)
        # An entry is right for a problem when one of its sources overlaps that problem's span
        # and no other problem's (run_bench.py's rule); it stands for every problem any source
        # overlaps.
        for occ in Occurrence.objects.values("entry_id", "filename", "line_start", "line_end"):
            hits = frozenset(
                p
                for s, e, p in spans.get(Path(occ["filename"]).name, ())
                if s <= occ["line_end"] and occ["line_start"] <= e
            )
            source_problems.setdefault(occ["entry_id"], []).append(hits)
        query_sets = [(name, [json.loads(line) for line in qf.read_text().splitlines()]) for name, qf in query_files]
    return _triage_all(query_sets, source_problems, features)


def collect_pairs(features: tuple[str, ...]) -> list[QueryTable]:
    """Reports asked against reports (issue 7, item 2: learn "same problem?" from pairs).

    The knowledge base is every short report of dev and train, one document each; every query
    (short and long) is then triaged against it with the entries made from its own report left
    out, so each other report of its problem is a right answer and the rest are look-alikes.
    These tables only ever add training rows to the candidate model; no figure is computed on them.
    """
    import tempfile

    from django.core.management import call_command

    from kb.models import Occurrence

    _reset_kb()
    folder = Path(tempfile.mkdtemp(prefix="fixbase-pairs-"))
    origin: dict[str, tuple[str, str]] = {}  # file name -> (report key, problem)
    query_sets: list[tuple[str, list[dict]]] = []
    for base in ("dev", "train"):
        reports = [json.loads(line) for line in (BENCH / base / "queries.jsonl").read_text().splitlines()]
        for n, q in enumerate(reports):
            name = f"{base}-{n:04d}.log"
            (folder / name).write_text(q["log"], encoding="utf-8")
            origin[name] = (f"{base}:{q['id']}", q.get("case") or f"unknown:{q['id']}")
        for set_name in (base, f"{base}-long"):
            queries = [json.loads(line) for line in (BENCH / set_name / "queries.jsonl").read_text().splitlines()]
            query_sets.append((f"pairs:{set_name}", queries))
    call_command("ingest", str(folder), stdout=io.StringIO())
    source_problems: dict[int, list[frozenset[str]]] = {}
    reports_of: dict[int, set[str]] = {}
    for occ in Occurrence.objects.values("entry_id", "filename"):
        key, problem = origin[Path(occ["filename"]).name]
        source_problems.setdefault(occ["entry_id"], []).append(frozenset({problem}))
        reports_of.setdefault(occ["entry_id"], set()).add(key)

    def own_entries(set_name: str, q: dict) -> frozenset[int]:
        key = f"{set_name.removeprefix('pairs:').removesuffix('-long')}:{q['id']}"
        return frozenset(pk for pk, keys in reports_of.items() if key in keys)

    return _triage_all(query_sets, source_problems, features, own_entries)


def _triage_all(
    query_sets: list[tuple[str, list[dict]]],
    source_problems: dict[int, list[frozenset[str]]],
    features: tuple[str, ...],
    exclude_of: Callable[[str, dict], frozenset[int]] | None = None,
) -> list[QueryTable]:
    """Triage every query with every candidate kept (never the entries `exclude_of` names for it)."""
    from kb.embedding import get_embedder
    from kb.models import Entry
    from kb.signature import compact_text
    from triage.ranking_cache import get_snapshot
    from triage.services import triage_log

    out: list[QueryTable] = []
    for set_name, queries in query_sets:
        for q in queries:
            exclude = exclude_of(set_name, q) if exclude_of else frozenset()
            start = time.perf_counter()
            res = triage_log(q["log"], top_k=1000, min_score=0.0, exclude=exclude)
            ms = (time.perf_counter() - start) * 1000
            ids = np.array([m.entry_id for m in res.matches], dtype=np.int64)
            srcs = [source_problems.get(int(i), []) for i in ids]
            eprobs = [frozenset().union(*s) for s in srcs]
            case = q.get("case")
            y = np.array([1.0 if case and any(sp == {case} for sp in s) else 0.0 for s in srcs])
            X = np.array([[m.features.get(f, 0.0) for f in features] for m in res.matches]).reshape(-1, len(features))
            factor = np.array([m.features.get("rule_factor", 1.0) for m in res.matches])
            snap, embedder = get_snapshot(), get_embedder()
            zero = np.zeros(embedder.dim, dtype=np.float32)
            stored = snap.vectors_of([int(i) for i in ids])
            evecs = np.array([stored.get(int(i), zero) for i in ids], dtype=np.float32)
            etext_of = dict(Entry.objects.filter(pk__in=[int(i) for i in ids]).values_list("pk", "signature_text"))
            out.append(
                QueryTable(
                    set_name=set_name,
                    qid=q["id"],
                    problem=case or f"unknown:{q['id']}",
                    known=bool(q["expect"]),
                    entry_ids=ids,
                    entry_problems=eprobs,
                    X=X,
                    y=y,
                    factor=factor,
                    latency_ms=ms,
                    qvec=embedder.encode([compact_text(res.signature)])[0],
                    evecs=evecs.reshape(len(ids), embedder.dim),
                    too_little=res.too_little,
                    train_only=exclude_of is not None,
                    qtext=compact_text(res.signature),
                    etexts=tuple(etext_of.get(int(i), "") for i in ids),
                )
            )
    return out
