"""Generate a realistic GRPO training log of a given size with a few failures buried in it."""

from __future__ import annotations

import random
from pathlib import Path

HEALTHY = [
    "{{'loss': {loss:.4f}, 'grad_norm': {gn:.4f}, 'learning_rate': 1e-06, 'reward': {r:.3f}, 'reward_std': {rs:.4f}, "
    "'frac_reward_zero_std': {fz:.2f}, 'completions/mean_length': {ml:.1f}, 'completions/clipped_ratio': {cr:.3f}, "
    "'kl': {kl:.5f}, 'epoch': {ep:.2f}, 'global_step/max_steps': '{s}/100000'}}",
    "Train:  {p}%|#####     | {s}/100000 [12:{m:02d}<40:00, 1.{m:02d}s/it]",
    "[INFO:swift] rollout batch {s}: 64 prompts, 512 completions, mean reward {r:.3f}",
    "(WorkerDict pid={pid}) INFO {d} [block_pool.py:280] Successfully reset prefix cache",
    'INFO:     127.0.0.1:{port} - "POST /infer/ HTTP/1.1" 200 OK',
    "[2025-10-09 12:{m:02d}:31,035] [INFO] [logging.py:128:log_dist] [Rank 0] step={s}, skipped=0, lr=[1e-06]",
    "(main_task pid={pid})           'ppo_micro_batch_size_per_gpu': 8,",
]
FAILURES = [
    "[rank{r}]: Traceback (most recent call last):\n"
    '[rank{r}]:   File "/opt/conda/lib/python3.11/site-packages/vllm/sampling_params.py", line 397, in _verify_args\n'
    "[rank{r}]:     raise ValueError(\n"
    "[rank{r}]: ValueError: max_tokens must be at least 1, got -{n}.",
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2726, in broadcast\n'
    "    work = group.broadcast([tensor], opts)\n"
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.20.5",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU 0 has a total capacity of 79.15 GiB",
    "./run_grpo.sh: line 14: actor_rollout_ref.rollout.n=8: command not found",
    "OSError: [Errno 28] No space left on device",
]


# Healthy lines that contain an error-ish word, as real training logs print them.
HARMLESS = [
    "(WorkerDict pid={pid}) INFO {d} [metrics.py:118] step {s}: retried 0 requests, 0 ERROR responses",
    "[2025-10-09 12:{m:02d}:31,035] [INFO] [engine.py:211] raise_on_error=False, error_threshold=0.05",
    "(main_task pid={pid})           'log_prob_error_tolerance': 0.001,",
    "NCCL INFO comm 0x55d1 rank {s} nRanks 8 - Init COMPLETE, no Error",
    "wandb: ERROR Error while calling W&B API: retrying ({s} attempts)",
]


def real_healthy_lines() -> list[str]:
    """Lines of the real logs in samples/ and ../shared/samples/ that belong to no failure: start-up
    output, NCCL INFO, vLLM and Ray warnings, wandb retries, metric dicts, config dumps."""
    from kb.logscan import scan_log

    root = Path(__file__).resolve().parent.parent
    sources = [root / "samples" / "raw_train.log", *sorted((root.parent / "shared" / "samples").glob("*"))]
    out: list[str] = []
    for src in sources:
        if not src.is_file():
            continue
        lines = src.read_text(encoding="utf-8", errors="replace").splitlines()
        bad: set[int] = set()
        for b in scan_log("\n".join(lines)):
            if b.kind != "warning":
                bad.update(range(b.line_start - 3, b.line_end + 4))
        out.extend(line for n, line in enumerate(lines, 1) if n not in bad and line.strip())
    return out


def write_log(
    path: Path, size_bytes: int, seed: int = 0, harmless_every: int = 0, realistic: bool = False
) -> list[str]:
    """Write the log; return the failure lines buried in it (for checking the scan found them).

    `harmless_every`: one healthy line containing an error-ish word every that many lines;
    `realistic`: the healthy lines are real ones from the samples instead of generated ones."""
    rng = random.Random(seed)
    pool = real_healthy_lines() if realistic else []
    buried: list[str] = []
    plan = sorted(rng.randrange(size_bytes) for _ in FAILURES)
    written = 0
    step = 0
    with open(path, "w", encoding="utf-8") as fh:
        buf: list[str] = []
        for failure in FAILURES:
            target = plan[len(buried)]
            while written < target:
                step += 1
                line = pool[step % len(pool)] if pool else _generated_line(rng, step, harmless_every)
                buf.append(line)
                written += len(line) + 1
                if len(buf) >= 4096:
                    fh.write("\n".join(buf) + "\n")
                    buf.clear()
            text = "\n".join(failure.format(r=k, n=1000 + step % 9000) for k in range(2) if k == 0 or "rank" in failure)
            buf.append(text)
            written += len(text) + 1
            buried.append(text.splitlines()[-1])
        while written < size_bytes:
            step += 1
            line = pool[step % len(pool)] if pool else _generated_line(rng, step, harmless_every)
            buf.append(line)
            written += len(line) + 1
            if len(buf) >= 4096:
                fh.write("\n".join(buf) + "\n")
                buf.clear()
        fh.write("\n".join(buf) + "\n")
    return buried


def _generated_line(rng: random.Random, step: int, harmless_every: int) -> str:
    templates = HARMLESS if harmless_every and step % harmless_every == 0 else HEALTHY
    return rng.choice(templates).format(
        loss=rng.random() * 0.1,
        gn=rng.random(),
        r=rng.random(),
        rs=0.1 + rng.random() * 0.3,
        fz=rng.random() * 0.3,
        ml=300 + rng.random() * 500,
        cr=rng.random() * 0.2,
        kl=rng.random() / 100,
        ep=step / 1e5,
        s=step,
        p=step % 100,
        m=step % 60,
        pid=4000 + step % 7,
        d="10-09 12:00:00",
        port=30000 + step % 999,
    )
