"""GitHub issue threads saved as markdown: the report, then comments, one of which holds the fix."""

from __future__ import annotations

import re

from ingest.parsers.base import Candidate
from ingest.parsers.jsonchat import resolving_comment
from ingest.parsers.reports import has_error, title_for
from kb.logclean import log_lines

# "### @alice commented on Mar 3, 2025", "**alice** commented", "alice commented on 2025-03-03"
COMMENT_RE = re.compile(
    r"^(?:#{1,4}\s+)?(?:\*\*)?@?(?P<who>[\w-]+)(?:\*\*)?\s+commented(?:\s+on\s+.+)?(?:\s*[\(\[].*)?$",
    re.I,
)
ROLE_RE = re.compile(r"\b(Owner|Member|Collaborator|Contributor|Maintainer)\b", re.I)


def looks_like_issue(text: str) -> bool:
    return sum(1 for line in text.splitlines() if COMMENT_RE.match(line.strip())) >= 1


def parse_issue_markdown(text: str) -> list[Candidate]:
    lines = log_lines(text)
    marks = [i for i, line in enumerate(lines) if COMMENT_RE.match(line.strip())]
    if not marks:
        return []
    body = "\n".join(lines[: marks[0]])
    if not has_error(body):
        return []
    comments = []
    for k, i in enumerate(marks):
        end = marks[k + 1] if k + 1 < len(marks) else len(lines)
        role = ROLE_RE.search(lines[i])
        comments.append(
            {
                "body": "\n".join(lines[i + 1 : end]).strip(),
                "author_association": "MEMBER" if role and role.group(1).lower() != "contributor" else "",
                "start": i + 1,
                "end": end,
            }
        )
    fix = resolving_comment(comments)
    first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    heading = lines[first].lstrip("# ").strip() if lines[first].startswith("#") else ""
    return [
        Candidate(
            title=title_for(body, fallback=heading),
            problem_text=body,
            remedy_markdown=str(fix["body"]) if fix else "",
            line_start=first + 1,
            line_end=int(fix["end"]) if fix else marks[0],
            problem_start=first + 1,
            problem_end=marks[0],
        )
    ]
