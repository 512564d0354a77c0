"""Plain logs with no remedy: one "needs a fix" candidate per distinct failure in the log."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from pathlib import Path

from ingest.parsers.base import Candidate
from ingest.parsers.reports import title_for
from ingest.parsers.stream import Window, iter_windows, open_log
from kb.logclean import log_lines
from kb.logscan import ErrorBlock, scan_log
from kb.normalize import mask_message
from kb.rootcause import dedupe_blocks, select_root

CONTEXT_LINES = 3


def parse_rawlog(text: str) -> list[Candidate]:
    """Candidates of a log held in memory: the same windows around failures as a streamed file,
    so a log gives the same entries whatever its size."""
    return _candidates_of_windows(iter_windows(io.BytesIO(text.encode("utf-8"))))


def _window_candidates(text: str, offset: int = 0) -> list[Candidate]:
    """Candidates of one window of a log; `offset` shifts line numbers to the whole file's."""
    lines = log_lines(text)
    blocks = dedupe_blocks(scan_log(text))
    # Each informative failure is a candidate; symptoms and warnings are context of one.
    primary = [b for b in blocks if b.kind in ("traceback", "exception_line", "error_line", "metric") and not b.symptom]
    primary = [b for b in primary if not _reported_again(b, primary)]
    if not primary:
        root = select_root(blocks).root
        primary = [root] if root is not None and root.kind != "warning" else []
    out: list[Candidate] = []
    last_end = 0
    for block in primary:
        start = max(block.line_start - CONTEXT_LINES, last_end + 1, 1)
        end = block.line_end
        problem = "\n".join(lines[start - 1 : end])
        out.append(
            Candidate(
                title=title_for(problem),
                problem_text=problem,
                remedy_markdown="",
                line_start=start + offset,
                line_end=end + offset,
                problem_start=start + offset,
                problem_end=end + offset,
            )
        )
        last_end = end
    return out


def candidates_from_stream(path: Path, on_progress: Callable[[int], None] | None = None) -> list[Candidate]:
    """Candidates of a log of any size: windows around failures, one candidate per distinct one."""
    with open_log(path) as fh:

        def progress() -> None:
            if on_progress is not None:
                on_progress(fh.tell() if hasattr(fh, "tell") else 0)

        return _candidates_of_windows(iter_windows(fh), progress)


def _candidates_of_windows(
    windows: Iterable[Window], after_window: Callable[[], None] | None = None
) -> list[Candidate]:
    seen: set[str] = set()
    out: list[Candidate] = []
    for window in windows:
        for cand in _window_candidates(window.text, offset=window.first_line - 1):
            key = mask_message(cand.title).lower()
            if key in seen:
                continue
            seen.add(key)
            out.append(cand)
        if after_window is not None:
            after_window()
    return out


def _reported_again(block: ErrorBlock, blocks: list[ErrorBlock]) -> bool:
    """An exception with no message of its own whose type a block with a message already names:
    the driver's copy of a worker's failure (Ray's `RayTaskError(OutOfMemoryError): ray::…` is
    where it ran), not a failure of its own."""
    short = block.exc_type.rsplit(".", 1)[-1]
    return (
        bool(short)
        and not block.message.strip()
        and any(b is not block and b.message.strip() and b.exc_type.rsplit(".", 1)[-1] == short for b in blocks)
    )
