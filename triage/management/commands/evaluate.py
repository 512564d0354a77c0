"""Measure triage on a labelled query set, in a throwaway data directory.

The outer call creates a temporary FIXBASE_DATA_DIR (SQLite + FAISS files) and runs itself
again inside it, so the user's own knowledge base is never touched. The inner call ingests
the corpus and sends every query through POST /api/v1/triage/.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

INNER_FLAG = "FIXBASE_EVALUATE_INNER"


class Command(BaseCommand):
    help = "Evaluate triage: Hit@1, Hit@5, MRR, no-match rates and latency on labelled queries."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", required=True, help="Folder of documents to ingest.")
        parser.add_argument("--queries", required=True, action="append", help="queries.jsonl (repeatable).")
        parser.add_argument("--baselines", action="store_true", help="Also measure raw BM25 and naive dense.")
        parser.add_argument("--show", action="store_true", help="Print every query's outcome.")

    def handle(self, *args: Any, **opts: Any) -> None:
        corpus = Path(opts["corpus"]).resolve()
        queries = [Path(q).resolve() for q in opts["queries"]]
        for p in [corpus, *queries]:
            if not p.exists():
                raise CommandError(f"No such file or folder: {p}")
        if os.environ.get(INNER_FLAG) != "1":
            self._spawn(corpus, queries, opts)
            return
        self._inner(corpus, queries, opts)

    def _spawn(self, corpus: Path, queries: list[Path], opts: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory(prefix="fixbase-eval-") as tmp:
            env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
            env.update({INNER_FLAG: "1", "FIXBASE_DATA_DIR": tmp, "FIXBASE_LOG_LEVEL": "WARNING"})
            cmd = [sys.executable, sys.argv[0], "evaluate", "--corpus", str(corpus)]
            for q in queries:
                cmd += ["--queries", str(q)]
            if opts["baselines"]:
                cmd.append("--baselines")
            if opts["show"]:
                cmd.append("--show")
            code = subprocess.call(cmd, env=env)
            if code:
                raise CommandError(f"evaluation failed (exit {code})")

    def _inner(self, corpus: Path, queries: list[Path], opts: dict[str, Any]) -> None:
        from django.contrib.auth import get_user_model
        from django.test import Client
        from rest_framework.authtoken.models import Token

        from triage.evaluation import format_report, load_queries, outcome_of, summarize

        call_command("migrate", verbosity=0)
        t0 = time.perf_counter()
        call_command("ingest", str(corpus), stdout=io.StringIO())
        self.stdout.write(f"ingested {corpus} in {time.perf_counter() - t0:.1f}s")
        user, _ = get_user_model().objects.get_or_create(username="evaluate")
        token, _ = Token.objects.get_or_create(user=user)
        client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")

        def post(log: str) -> dict[str, Any]:
            resp = client.post("/api/v1/triage/", {"log": log, "top_k": 5}, content_type="application/json")
            if resp.status_code != 200:
                raise CommandError(f"triage API answered {resp.status_code}: {resp.content[:200]!r}")
            return resp.json()

        post("warm-up: RuntimeError: CUDA out of memory")
        for qpath in queries:
            items = load_queries(qpath)
            outcomes = []
            for q in items:
                start = time.perf_counter()
                data = post(q.log)
                outcomes.append(outcome_of(q, data, (time.perf_counter() - start) * 1000))
            self.stdout.write(format_report(f"fixbase  {qpath.parent.name}/{qpath.name}", summarize(outcomes)))
            if opts["show"]:
                for o in outcomes:
                    mark = "ok " if (o.hit_rank == 1 if o.query.has_match else o.verdict != "match") else "MISS"
                    self.stdout.write(
                        f"  {mark} {o.query.id:55s} verdict={o.verdict:8s} rank={o.hit_rank} top={o.top_title[:70]!r}"
                    )
            if opts["baselines"]:
                self._baselines(items)

    def _baselines(self, items: list[Any]) -> None:
        import numpy as np

        from kb.embedding import get_embedder
        from kb.models import Entry
        from triage.baselines import RawBM25, naive_dense_rank
        from triage.evaluation import QueryOutcome, format_report, is_hit, summarize

        entries = list(Entry.objects.prefetch_related("occurrences"))
        sources = {
            e.pk: [
                {"filename": o.filename, "line_start": o.line_start, "line_end": o.line_end}
                for o in e.occurrences.all()
            ]
            for e in entries
        }
        bm25 = RawBM25([(e.pk, e.problem_excerpt) for e in entries])
        embedder = get_embedder()
        ids = [e.pk for e in entries]
        model = getattr(embedder, "model", None)
        if model is not None:
            model.max_seq_length = 256  # the naive baseline embeds raw text with the model's full window
        doc_vecs = embedder.encode([e.problem_excerpt for e in entries])
        for name, ranker in (
            ("bm25-raw", lambda log: bm25.rank(log)),
            ("dense-raw", lambda log: naive_dense_rank(doc_vecs, ids, embedder.encode([log])[0])),
        ):
            outcomes = []
            for q in items:
                start = time.perf_counter()
                ranked = ranker(q.log)
                ms = (time.perf_counter() - start) * 1000
                rank = next((i for i, pk in enumerate(ranked, 1) if is_hit(sources[pk], q)), None)
                outcomes.append(QueryOutcome(q, "match", rank, ms))
            self.stdout.write(format_report(f"{name:8s}", summarize(outcomes)) + "  (no abstention)")
        del np
