"""Choosing the root error of a log: the one that explains the failure, not its consequences."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.exceptionlines import is_symptom
from kb.logscan import ErrorBlock
from kb.normalize import frame_key, mask_message

# Tiers for root-error selection, lower is better.
SPECIFIC_ERROR_LINES = frozenset(
    {
        "cuda_oom",
        "command_not_found",
        "nccl_warn",
        "nccl_error",
        "disk_full",
        "state_dict_mismatch",
        "host_oom",
        "job_time_limit",
        "scheduler_error",
        "watchdog_timeout",
        "segfault",
        "killed_by_signal",
        "cuda_error",
        "dependency_conflict",
        "argparse_error",
        "compiler_error",
        "test_failed",
        "test_timeout",
        "ci_cancelled",
        "cmake_error",
        "git_error",
        "registry_error",
        "credentials_error",
        "rate_limited",
        "lint_error",
        "ci_error",
        "linker_error",
        "gpu_fault",
        "ci_agent_error",
    }
)


@dataclass(frozen=True)
class RootChoice:
    root: ErrorBlock | None
    secondary: tuple[ErrorBlock, ...]
    notes: tuple[str, ...]

    @property
    def blocks(self) -> tuple[ErrorBlock, ...]:
        """The root first, then the secondary errors; none when nothing was recognised."""
        return (self.root, *self.secondary) if self.root else ()


def informative(block: ErrorBlock) -> bool:
    """Whether the error's message has words to tell it by (a bare `AssertionError` has none)."""
    return len(re.findall(r"[A-Za-z\u4e00-\u9fff]{2,}", block.message)) >= 2


DEPRECATION_TYPES = frozenset({"FutureWarning", "DeprecationWarning", "PendingDeprecationWarning"})


def deprecation_notice(block: ErrorBlock) -> bool:
    return block.exc_type in DEPRECATION_TYPES


def _tier(block: ErrorBlock) -> int:
    if block.weak:
        return 5  # below a logger's error line: a logger may print this shape as well
    if block.from_prose:
        # As sure as a generic error line, the earlier one winning: a report's sentence that names
        # an exception says more than another of its sentences with an error word ("I can't find …").
        return 4
    if block.from_repr:
        return 3  # the exception as a logger summed it up: the traceback it prints under it is surer
    if block.kind in ("traceback", "exception_line"):
        return 0 if informative(block) and not block.symptom else 3
    if block.kind == "error_line":
        return 1 if block.pattern in SPECIFIC_ERROR_LINES and not block.symptom else 4
    if block.kind == "metric":
        return 2
    if block.kind == "truncated_traceback":
        return 5
    if deprecation_notice(block):
        return 7  # a deprecation notice explains nothing; another warning may
    return 6


# Error lines ranked as symptoms because they are generic (a logger's `ERROR:` line, an error named in
# a sentence), not because they say that something else failed: no note sends the user elsewhere.
GENERIC_ERROR_LINES = frozenset({"log_error", "error_phrase", "os_error"})


def reports_another_failure(block: ErrorBlock) -> bool:
    """Whether a symptom says that another process, step or server failed (its cause is elsewhere)."""
    return block.symptom and (block.pattern not in GENERIC_ERROR_LINES or is_symptom(block.message))


def block_key(block: ErrorBlock) -> tuple[str, str, tuple[str, ...]]:
    return (
        block.short_type or block.pattern,
        mask_message(block.message).lower(),
        tuple(frame_key(f) for f in block.frames[-4:]),
    )


def dedupe_blocks(blocks: tuple[ErrorBlock, ...]) -> tuple[ErrorBlock, ...]:
    """Keep the first of blocks that repeat (the same traceback printed by several ranks)."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    out: list[ErrorBlock] = []
    for block in blocks:
        key = block_key(block)
        if block.kind == "truncated_traceback":
            key = ("", "", tuple(frame_key(f) for f in block.frames))
        if key in seen:
            continue
        seen.add(key)
        out.append(block)
    return tuple(out)


def select_root(blocks: tuple[ErrorBlock, ...]) -> RootChoice:
    """Pick the error that explains the failure.

    1. Drop repeats (multi-rank output).
    2. Prefer, in order: an informative exception that is not a known symptom, a specific
       error line (OOM, NCCL WARN, command not found, disk full...), a metrics anomaly, a
       symptom exception, generic error lines (and an exception a sentence names), a traceback
       with no exception, a warning.
    3. Within a tier the earliest wins: the first error in a log (and the innermost cause of
       a chain, which Python prints first) explains the ones after it.
    """
    unique = dedupe_blocks(blocks)
    ranked = sorted(enumerate(unique), key=lambda ib: (_tier(ib[1]), ib[0]))
    if not ranked:
        return RootChoice(root=None, secondary=(), notes=())
    root = ranked[0][1]
    secondary = tuple(b for _, b in ranked[1:] if b.kind != "warning")[:6]
    notes: list[str] = []
    if reports_another_failure(root):
        notes.append(
            "This error is a symptom: it reports that another process or server failed. "
            "That process's own log (the rollout server, the Ray worker, the other rank) holds the cause."
        )
    if root.kind == "truncated_traceback" and not root.message:
        notes.append(
            "The traceback stops before its last line, the exception (“ValueError: …”) that says what "
            "failed, so it is matched by its frames alone: paste it to the end for a surer answer."
        )
    if root.kind == "metric" and root.pattern == "grpo_zero_loss_expected":
        notes.append(
            "A GRPO loss of 0 in the first steps is expected while rewards vary (reward_std > 0): "
            "with one policy update per batch the ratio is 1 and the advantages average to 0, "
            "so only the KL term moves the loss. Watch reward and reward_std instead."
        )
    later_symptoms = [b for b in secondary if b.symptom and b.line_start > root.line_start]
    if later_symptoms and _tier(root) < 3:
        first = later_symptoms[0]
        notes.append(
            f"Later errors (line {first.line_start}: {first.short_type or first.pattern.replace('_', ' ')}) "
            "are consequences of this one."
        )
    return RootChoice(root=root, secondary=secondary, notes=tuple(notes))
