"""Embedding throughput of compact signature texts with the real model (entries/s on 2 cores).

    .venv/bin/python bench/embed_throughput.py [--n 2000]

The texts are the compact signatures Fixbase embeds (exception, masked message, key frames),
built from the tracebacks in samples/ and the dev benchmark, repeated to N.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    import django

    django.setup()
    from ingest.parsers import decode_document, parse_document
    from kb.embedding import get_embedder
    from kb.signature import compact_text, signature_from_text

    texts: list[str] = []
    for folder in (
        ROOT / "samples",
        ROOT.parent / "shared" / "bench" / "dev" / "corpus",
        ROOT / "bench" / "data" / "heldout" / "corpus",
    ):
        if not folder.exists():
            continue
        for path in sorted(folder.iterdir()):
            for cand in parse_document(decode_document(path.read_bytes()))[1]:
                texts.append(compact_text(signature_from_text(cand.problem_text)[0]))
    # Distinct texts (a number appended), so no cache can help.
    batch = [f"{texts[i % len(texts)]} #{i}" for i in range(args.n)]
    t = time.perf_counter()
    emb = get_embedder()
    emb.encode(["warm up"])
    load = time.perf_counter() - t
    tokens = [len(emb.tokenizer.encode(x).ids) for x in texts]  # type: ignore[attr-defined]
    t = time.perf_counter()
    emb.encode(batch)
    elapsed = time.perf_counter() - t
    print(
        f"model load {load:.1f}s; {len(texts)} distinct signature texts, mean {sum(tokens) / len(tokens):.0f} tokens, max {max(tokens)}"
    )
    print(f"embedded {args.n} compact signatures in {elapsed:.1f}s: {args.n / elapsed:.0f} entries/s")


if __name__ == "__main__":
    main()
