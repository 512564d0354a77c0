"""Plain logs with no remedy: one "needs a fix" candidate per distinct failure in the log."""

from __future__ import annotations

from ingest.parsers.base import Candidate
from ingest.parsers.common import title_for
from kb.logscan import scan_log
from kb.signature import dedupe_blocks, select_root

CONTEXT_LINES = 3


def parse_rawlog(text: str) -> list[Candidate]:
    lines = text.splitlines()
    blocks = dedupe_blocks(scan_log(text))
    # Each informative failure is a candidate; symptoms and warnings are context of one.
    primary = [b for b in blocks if b.kind in ("traceback", "exception_line", "error_line", "metric") and not b.symptom]
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
                line_start=start,
                line_end=end,
                problem_start=start,
                problem_end=end,
            )
        )
        last_end = end
    return out
