from __future__ import annotations

import numpy as np

from triage.entry_table import Doc, TableBuilder


def doc(pk: int, text: tuple[str, ...], fingerprint: str = "0123456789abcdef") -> Doc:
    return Doc(
        id=pk,
        exc_type="ValueError",
        pattern="",
        kind="exception",
        fingerprint=fingerprint,
        framework="vllm",
        frames=("vllm.engine:step", "vllm.worker:run"),
        msg_tokens=text[:3],
        ctx_tokens=text[3:4],
        text_tokens=text,
        family=("cuda", frozenset({"kernel", "image"})),
        origin="pack",
        has_fix=False,
    )


def test_raw_text_scores_are_those_bm25s_gives():
    import bm25s

    texts = [["cuda", "error", "no", "kernel", "image"], ["cuda", "oom", "cuda"], [], ["max", "tokens", "error"]]
    builder = TableBuilder()
    for pk, words in enumerate(texts, start=1):
        builder.add(doc(pk, ("cuda",)), words)
    table = builder.build()
    reference = bm25s.BM25()
    reference.index([t or ["<empty>"] for t in texts], show_progress=False)
    for query in (["cuda", "error"], ["tokens"], ["cuda", "kernel", "oom", "max"]):
        cols = [table.vocab[w] for w in query]
        ours = table.raw.scores(cols, [1.0] * len(cols))
        assert np.allclose(ours, reference.get_scores(query), rtol=1e-5)


def test_an_entry_reads_back_as_it_was_added():
    builder = TableBuilder()
    first = doc(3, ("kernel", "image", "cuda", "launch", "kernel"))
    odd = doc(9, ("max", "tokens"), fingerprint="not-a-hex-digest")
    builder.add(first, ["a"])
    builder.add(odd, [])
    table = builder.build()
    back = table.doc(table.position(3) or 0)
    assert back == Doc(**{**first.__dict__, "text_tokens": ("kernel", "image", "cuda", "launch")})
    assert table.doc(1).fingerprint == "not-a-hex-digest" and table.with_fingerprint("not-a-hex-digest") == [9]
    assert table.with_fingerprint(first.fingerprint) == [3] and table.position(4) is None
