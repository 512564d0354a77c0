"""Entries for the tests of pages and the API, written through kb.services with no document parser
in between: a parser change does not move what those tests see (the parsers have golden files and
end-to-end tests of their own)."""

from __future__ import annotations

from kb.models import Entry
from kb.services import NewEntry, entries_ingest

SM120 = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."
)
SM120_FIX = "Install a PyTorch build made for CUDA 12.8 (`cu128`): older wheels have no kernels for sm_120."
COMMAND_NOT_FOUND = "./scripts/train_tiny_zero.sh: line 6: data.val_batch_size=1312: command not found"
COMMAND_NOT_FOUND_FIX = "A line of the launch script lost its trailing backslash: end every continued line with `\\`."
CUDA_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.32 GiB. "
    "GPU 0 has a total capacity of 23.55 GiB of which 520.69 MiB is free."
)
CUDA_OOM_FIX = "Lower `ppo_micro_batch_size_per_gpu` or turn on gradient checkpointing and parameter offload."
# A failure that prints no error: its entry's signature is empty, as a report in words makes it.
HANG = "Training hangs after the first rollout step and GPU utilisation drops to zero on every rank."
HANG_FIX = "The rollout workers wait on a dead vLLM engine: set `NCCL_P2P_DISABLE=1` on PCIe-only nodes."


def entry_make(problem: str, remedy: str, filename: str = "notes.md", line_start: int = 1) -> Entry:
    """One entry for the problem as pasted, with its fix, seen in `filename` from `line_start`."""
    lines = max(1, len(problem.splitlines()))
    outcome = entries_ingest(
        [
            NewEntry(
                title=problem.splitlines()[0][:200],
                problem_text=problem,
                remedy_markdown=remedy,
                filename=filename,
                document_id=None,
                line_start=line_start,
                line_end=line_start + lines,
                problem_start=line_start,
                problem_end=line_start + lines - 1,
            )
        ]
    )
    return Entry.objects.get(pk=(outcome.created or outcome.grouped)[0])


def known_failures() -> list[Entry]:
    """Four known failures, each with its fix: no kernel image for sm_120, a launch script's
    `command not found`, a CUDA out-of-memory error, and a hang told in words."""
    return [
        entry_make(SM120, SM120_FIX, "chat.md", 82),
        entry_make(COMMAND_NOT_FOUND, COMMAND_NOT_FOUND_FIX, "chat.md", 200),
        entry_make(CUDA_OOM, CUDA_OOM_FIX, "notes.md", 1),
        entry_make(HANG, HANG_FIX, "notes.md", 20),
    ]
