"""Triage latency through POST /api/v1/triage/ for pastes of 20, 100 and 300 lines (warm model).

    .venv/bin/python bench/triage_latency.py

Knowledge base: the project's samples/ plus the dev benchmark corpus when it is beside the
project. Pastes: each dev query padded with real start-up noise (samples/raw_train.log) to the
target length, error at the end. Goal: p50 < 50 ms and p95 < 150 ms for up to 300 lines.
"""

from __future__ import annotations

import io
import json
import shutil
import statistics
import time

from _django import ROOT, setup_throwaway


def main() -> None:
    tmp = setup_throwaway()
    try:
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.test import Client
        from rest_framework.authtoken.models import Token

        dev = ROOT.parent / "shared" / "bench" / "dev"
        for folder in (ROOT / "samples", dev / "corpus"):
            if folder.exists():
                call_command("ingest", str(folder), stdout=io.StringIO())
        queries = (
            [json.loads(line)["log"] for line in (dev / "queries.jsonl").read_text().splitlines()]
            if dev.exists()
            else []
        )
        queries += [
            json.loads(line)["log"] for line in (ROOT / "tests/data/hard_cases/cases.jsonl").read_text().splitlines()
        ]
        noise = [line for line in (ROOT / "samples" / "raw_train.log").read_text().splitlines()[:55]]
        user, _ = get_user_model().objects.get_or_create(username="bench")
        client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")

        def post(log: str) -> float:
            start = time.perf_counter()
            resp = client.post("/api/v1/triage/", {"log": log}, content_type="application/json")
            assert resp.status_code == 200, resp.content[:200]
            return (time.perf_counter() - start) * 1000

        post("warm-up RuntimeError: CUDA out of memory")
        for target in (20, 100, 300):
            times = []
            for q in queries:
                lines = q.splitlines()
                pad = (noise * (target // len(noise) + 1))[: max(0, target - len(lines))]
                times.append(post("\n".join(pad + lines)))
            times.sort()
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            print(
                f"{target:3d}-line pastes: n={len(times)} p50={statistics.median(times):.1f} ms p95={p95:.1f} ms max={times[-1]:.1f} ms"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
