"""Annotated notes: each `# ` heading is a remedy, the log lines below it are the problem.

A heading with no log is still a candidate (a hang described in words): its problem text is
the heading itself. Error lines above the first heading become "needs a fix" candidates.
"""

from __future__ import annotations

import re

from ingest.parsers.base import Candidate
from ingest.parsers.reports import first_line, has_error, title_for
from kb.logclean import log_lines

HEADING_RE = re.compile(r"^#{1,3}\s+(?P<text>\S.*)$")


def looks_like_notes(text: str) -> bool:
    for line in text.splitlines():
        if line.strip():
            return bool(HEADING_RE.match(line))
    return False


def parse_notes(text: str) -> list[Candidate]:
    lines = log_lines(text)
    heads = [i for i, line in enumerate(lines) if HEADING_RE.match(line)]
    out: list[Candidate] = []
    if heads and heads[0] > 0:
        pre = "\n".join(lines[: heads[0]])
        if has_error(pre):
            out.append(_candidate(lines, None, 0, heads[0] - 1))
    for k, h in enumerate(heads):
        end = heads[k + 1] - 1 if k + 1 < len(heads) else len(lines) - 1
        out.append(_candidate(lines, h, h + 1, end))
    return out


def _candidate(lines: list[str], heading: int | None, body_start: int, body_end: int) -> Candidate:
    body_idx = [j for j in range(body_start, body_end + 1)]
    while body_idx and not lines[body_idx[0]].strip():
        body_idx.pop(0)
    while body_idx and not lines[body_idx[-1]].strip():
        body_idx.pop()
    body = "\n".join(lines[j] for j in body_idx)
    remedy = ""
    if heading is not None:
        m = HEADING_RE.match(lines[heading])
        remedy = m.group("text").strip() if m else ""
    start = heading if heading is not None else (body_idx[0] if body_idx else body_start)
    end = body_idx[-1] if body_idx else start
    problem = body if body.strip() else remedy
    p_start, p_end = (body_idx[0] + 1, body_idx[-1] + 1) if body_idx else (start + 1, start + 1)
    title = title_for(body, fallback=first_line(remedy)) if body.strip() else title_for("", fallback=remedy)
    return Candidate(
        title=title,
        problem_text=problem,
        remedy_markdown=remedy,
        line_start=start + 1,
        line_end=end + 1,
        problem_start=p_start,
        problem_end=p_end,
    )
