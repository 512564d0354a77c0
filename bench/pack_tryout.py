"""Ten common public failures pasted into a fresh Fixbase that knows only the starter pack.

    .venv/bin/python bench/pack_tryout.py

As a new user would meet it after `make run` on a fresh clone: a new data directory, `migrate`,
`load_pack`, `runserver`, then each paste posted to `/api/v1/triage/`. The pastes are other users'
reports (the pack's second reports: real logs from public issue threads, never stored as entries).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

from _served import ROOT, free_port, fresh_env, manage, wait_for_port

TRIED = (
    "trl-import-top-k-top-p-filtering",
    "infer-vllm-free-memory-below-utilization",
    "verl-v100-bfloat16-rollout",
    "ds-mpi4py-missing-no-launcher",
    "dist-ray-oom-killer-node-memory",
    "env-disk-full-checkpoint-save",
    "torch-triton-no-c-compiler",
    "swift-cli-grpo-subcommand-keyerror",
    "env-conda-libstdcxx-glibcxx-not-found",
    "ds-op-build-nvcc-unsupported-arch",
)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    reports = {}
    for f in sorted((ROOT / "starter_pack" / "entries").glob("*.json")):
        for e in json.loads(f.read_text()):
            if e["id"] in TRIED:
                reports[e["id"]] = (e["title"], e["reports"][1]["log"], e["reports"][1]["source"])
    env = fresh_env("fixbase-tryout-")
    manage(env, "migrate", "-v0")
    print(manage(env, "load_pack").strip())
    token = manage(env, "apitoken", "tryout").split()[-1]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        print("| paste (another user's report) | verdict | first answer | right |")
        print("|---|---|---|---|")
        right = 0
        for pid in TRIED:
            title, log, source = reports[pid]
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/v1/triage/",
                data=json.dumps({"log": log, "top_k": 3}).encode(),
                headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
            )
            with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - our own test server
                body = json.load(resp)
            top = body["matches"][0]["title"] if body["matches"] else "—"
            ok = bool(body["matches"]) and body["matches"][0]["title"] == title
            right += ok
            first_line = next((ln for ln in reversed(log.splitlines()) if ln.strip()), "")[:70]
            print(f"| [`{first_line}`]({source}) | {body['verdict']} | {top[:70]} | {'yes' if ok else 'no'} |")
        print(f"{right}/{len(TRIED)} answered with the right entry first")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
