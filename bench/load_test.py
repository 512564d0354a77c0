"""Serve Fixbase with gunicorn as docker-compose.yml does and triage under concurrent clients.

    .venv/bin/python bench/load_test.py [--clients 16] [--requests 480] [--workers 2]

A fresh data directory (SQLite, FAISS files) gets the dev corpus and the samples through
`manage.py ingest` with the real model; gunicorn serves it on a free loopback port; `--clients`
threads then post the dev queries (long and short) to POST /api/v1/triage/ until `--requests`
answers have come back (bounded in count, and each request in time). Prints throughput, latency
percentiles and errors. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from _served import ROOT, free_port, fresh_env, manage

SHARED = ROOT.parent / "shared"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=480)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    env = fresh_env("fixbase-load-", DJANGO_DEBUG="0", DJANGO_ALLOWED_HOSTS="127.0.0.1")
    env.setdefault("DJANGO_SECRET_KEY", "load-test-only")
    env.setdefault("FIXBASE_MODEL_THREADS", "1")  # as docker-compose.yml runs the web workers
    manage(env, "migrate", "-v0")
    manage(env, "ingest", str(SHARED / "bench" / "dev" / "corpus"), str(SHARED / "samples"))
    token = manage(env, "apitoken", "load").split()[-1]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(args.workers), "--timeout", "120"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    logs = [
        json.loads(line)["log"] for q in ("dev", "dev-long") for line in (SHARED / "bench" / q / "queries.jsonl").open()
    ]

    def ask(log: str) -> float:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/triage/",
            data=json.dumps({"log": log, "top_k": 5}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
        )
        start = time.perf_counter()
        with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - loopback
            resp.read()
        return (time.perf_counter() - start) * 1000

    try:
        for _ in range(120):
            try:
                ask(logs[0])
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(1)
        for _ in range(2 * args.workers):  # every worker loads the model before the clock starts
            ask(logs[0])
        lat: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        counter = iter(range(args.requests))

        def client() -> None:
            for k in counter:
                try:
                    ms = ask(logs[k % len(logs)])
                    with lock:
                        lat.append(ms)
                except Exception as exc:
                    with lock:
                        errors.append(repr(exc)[:120])

        start = time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)
    lat.sort()
    print(
        f"gunicorn {args.workers} workers, {args.clients} clients, {len(lat)} answers in {elapsed:.1f} s: "
        f"{len(lat) / elapsed:.1f} requests/s, p50 {statistics.median(lat):.0f} ms, "
        f"p95 {lat[round(0.95 * (len(lat) - 1))]:.0f} ms, errors {len(errors)}"
    )
    for e in errors[:5]:
        print("  error:", e)


if __name__ == "__main__":
    main()
