#!/usr/bin/env python3
"""Check starter-pack files: python3 starter_pack/validate.py [FILE...] (default: every entries/*.json).

Each file is a JSON list of entries:
{
  "id": "verl-vllm-sm120-no-kernel-image",          # unique, lowercase, [a-z0-9-]
  "title": "vLLM rollout fails on RTX 50xx: no kernel image for sm_120",
  "frameworks": ["verl", "vllm", "pytorch"],
  "versions": "torch < 2.7 (cu124 builds)",          # "" when it does not matter
  "category": "cuda",                                 # one of CATEGORIES below
  "error": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
  "cause": "…in our own words…",
  "fix": "…markdown, our own words: exact config keys, commands, versions…",
  "references": ["https://github.com/…/issues/123", "https://docs…"],
  "checked": "2026-11-23",
  "reports": [                                        # real pastes, verbatim, each with its source
    {"log": "Traceback (most recent call last):\\n …", "source": "https://github.com/…/issues/123"},
    {"log": "…another user's report of the same problem…", "source": "https://github.com/…/issues/456"}
  ]
}
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

CATEGORIES = {
    "cuda",
    "oom",
    "nccl",
    "distributed",
    "ray",
    "config",
    "install",
    "version",
    "api-change",
    "data",
    "tokenizer",
    "checkpoint",
    "rollout",
    "reward",
    "numerics",
    "hub",
    "logging",
    "shell",
    "storage",
    "network",
    "performance",
    "hang",
    "other",
}
KEYS = {
    "id",
    "title",
    "frameworks",
    "versions",
    "category",
    "error",
    "cause",
    "fix",
    "references",
    "checked",
    "reports",
}
URL_RE = re.compile(r"^https?://\S+$")


def problems(entry: dict, seen: set[str]) -> list[str]:
    out = []
    missing = KEYS - set(entry)
    if missing:
        out.append(f"missing keys {sorted(missing)}")
    eid = str(entry.get("id", ""))
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{2,80}", eid):
        out.append(f"bad id {eid!r}")
    if eid in seen:
        out.append(f"duplicate id {eid!r}")
    seen.add(eid)
    if entry.get("category") not in CATEGORIES:
        out.append(f"category {entry.get('category')!r} not in {sorted(CATEGORIES)}")
    for k in ("title", "error", "cause", "fix"):
        if not str(entry.get(k, "")).strip():
            out.append(f"empty {k}")
    if not entry.get("frameworks") or not all(isinstance(f, str) for f in entry.get("frameworks", [])):
        out.append("frameworks must be a non-empty list of strings")
    refs = entry.get("references", [])
    if not refs or not all(URL_RE.match(str(r)) for r in refs):
        out.append("references must be a non-empty list of URLs")
    reports = entry.get("reports", [])
    if not reports:
        out.append("needs at least one report")
    for i, r in enumerate(reports):
        if not str(r.get("log", "")).strip():
            out.append(f"report {i}: empty log")
        if not URL_RE.match(str(r.get("source", ""))):
            out.append(f"report {i}: source must be a URL")
        if len(str(r.get("log", ""))) > 20000:
            out.append(f"report {i}: log over 20,000 characters; keep the failing part")
    if len({r.get("source") for r in reports}) != len(reports):
        out.append("each report must come from a different source URL")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(entry.get("checked", ""))):
        out.append("checked must be YYYY-MM-DD")
    return out


def main(paths: list[str]) -> int:
    files = [Path(p) for p in paths] or sorted((Path(__file__).parent / "entries").glob("*.json"))
    seen: set[str] = set()
    bad = total = second = 0
    for f in files:
        try:
            entries = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            print(f"{f}: {exc}")
            bad += 1
            continue
        for e in entries:
            total += 1
            second += len(e.get("reports", [])) > 1
            for p in problems(e, seen):
                print(f"{f.name}: {e.get('id')}: {p}")
                bad += 1
    print(f"{total} entries, {second} with a second report, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
