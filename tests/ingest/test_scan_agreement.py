"""The windowed scan (files of any size, in chunks) finds the failures the full scan finds."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsers.stream import iter_windows
from kb.logscan import ErrorBlock, scan_log

HEALTHY = [
    "{'loss': 0.0123, 'grad_norm': 0.41, 'reward': 0.52, 'reward_std': 0.21, 'frac_reward_zero_std': 0.1}",
    "(WorkerDict pid=81) INFO 10-09 12:00:00 [block_pool.py:280] Successfully reset prefix cache",
    "(WorkerDict pid=81) INFO 10-09 12:00:01 [metrics.py:118] retried 0 requests, 0 ERROR responses",
    "(main_task pid=7)           'log_prob_error_tolerance': 0.001,",
    "wandb: ERROR Error while calling W&B API: retrying (3 attempts)",
    "NCCL INFO comm 0x55d1 rank 3 nRanks 8 - Init COMPLETE",
    "WARNING 10-09 12:00:02 [scheduler.py:1560] Sequence group 7 is preempted by PreemptionMode.RECOMPUTE",
    "/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py:230: UserWarning: sm_120 is not compatible",
    "Train:  12%|#####     | 1200/10000 [12:00<40:00, 1.20s/it]",
    "(WorkerDict pid=81) Retrying request after ConnectionError: Connection reset by peer",
    "Skipping sample 12 because of KeyError: 'answer'",
    "",
]
FAILURES = [
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/vllm/sampling_params.py", line 397, in _verify_args\n'
    "    raise ValueError(\n"
    "ValueError: max_tokens must be at least 1, got -2929.",
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB.",
    "./run.sh: line 14: actor_rollout_ref.rollout.n=8: command not found",
    "OSError: [Errno 28] No space left on device",
    "{'loss': 0.0, 'grad_norm': 0.0, 'reward': 1.0, 'reward_std': 0.0, 'frac_reward_zero_std': 1.0}",
    "/tmp/tmpab12/main.c:5:10: fatal error: Python.h: No such file or directory",
    "[E914 16:41:52.386 ProcessGroupNCCL.cpp:632] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)",
    "发生异常: ValueError\nYou are attempting to perform batched generation with padding_side='right'",
    "[16:10:33] stdout/INFO  triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304",
    '{"ts": "2025-01-01T10:00:00Z", "level": "error", "msg": "RuntimeError: CUDA error: an illegal memory access"}',
    "slurmstepd: error: *** JOB 4242 ON gpu-node-07 CANCELLED AT 2025-01-01T10:00:00 DUE TO TIME LIMIT ***",
    "ERROR:root:KeyError: 'prompt'",
    "(raylet) [2025-04-21 10:05:37,313 E 959680 959717] file_system_monitor.cc:116: /tmp/ray is over 95% full",
    "╭──── Traceback (most recent call last) ────╮\n│ /root/trl/scripts/grpo.py:88 in main      │\n"
    "│                                          │\n│ ❱ 88 │   trainer = GRPOTrainer(          │\n"
    "│                                          │\n│                                          │\n"
    "╰──────────────────────────────────────────╯\n"
    "TypeError: GRPOTrainer.__init__() got an unexpected keyword argument 'tokenizer'",
    "ERROR:src.ml.model_trainer:TensorBoardCallback requires tensorboard to be installed.\n"
    "Traceback (most recent call last):\n"
    '  File "/app/src/ml/model_trainer.py", line 231, in train_model\n'
    "    trainer = Trainer(",
    "wandb: ERROR Run initialization has timed out after 600 sec.",
    "CRITICAL:trainer:reward model checkpoint missing",
    "size mismatch for model.embed.weight: copying a param with shape torch.Size([8, 4]) from checkpoint",
    "(raylet) [2023-04-23 09:55:28,127 E 44 92] (raylet) file_system_monitor.cc:105: /tmp/ray is over 95% full",
    "pyarrow.lib.ArrowInvalid: Column 5 named input_ids expected length 1000 but got length 1096",
    "error   requests.exceptions.ReadTimeout: (ReadTimeoutError(\"HTTPSConnectionPool(host='cdn-lfs.hf.co', "
    "port=443): Read timed out.\"), '(Request ID: 96de49cd)')",
    "      raise RuntimeError(\n      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.",
    "register_finder(pkgutil.ImpImporter, find_on_path)\n                          ^^^^^^^^^^^^^^^^^^^\n"
    "      AttributeError: module 'pkgutil' has no attribute 'ImpImporter'.",
    "Using this command the vllm version installed was 0.10.1.1, and I kept getting errors when running it, "
    "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'model_hf_config'",
    "[2026-03-11 17:47:54] ray.exceptions.RayTaskError(NotImplementedError): ray::TaskRunner.run() (pid=29)\n"
    '[2026-03-11 17:47:54]   File "/appdata/verl/verl/workers/reward_manager/naive.py", line 89, in __call__',
]


def failures(blocks: tuple[ErrorBlock, ...] | list[ErrorBlock]) -> set[tuple[str, str, str, int]]:
    return {(b.kind, b.exc_type, b.message, b.line_start) for b in blocks if b.kind != "warning"}


def windowed(text: str, chunk_bytes: int) -> list[ErrorBlock]:
    out: list[ErrorBlock] = []
    for w in iter_windows(io.BytesIO(text.encode()), chunk_bytes=chunk_bytes):
        out.extend(scan_log(w.text, offset=w.first_line - 1))
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(HEALTHY), st.sampled_from(FAILURES)), min_size=1, max_size=400),
    st.sampled_from([64, 512, 4096, 1 << 20]),
)
def test_windowed_and_full_scans_find_the_same_failures(parts, chunk_bytes):
    text = "\n".join(parts) + "\n"
    assert failures(windowed(text, chunk_bytes)) == failures(scan_log(text))


def test_healthy_lines_with_error_words_open_no_window():
    text = "\n".join(HEALTHY * 50) + "\n"
    assert list(iter_windows(io.BytesIO(text.encode()))) == []
