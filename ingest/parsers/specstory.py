"""SpecStory / Cursor markdown chat transcripts: `_**User**_` and `_**Assistant**_` turns.

A user turn that contains an error, paired with the assistant turn(s) that answer it, is one
candidate. Turns without an error (how do I start? how do I read parquet?) make none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.parsers.base import Candidate
from ingest.parsers.common import has_error, title_for

TURN_RE = re.compile(r"^_\*\*(?P<who>User|Assistant)\b[^*]*\*\*_\s*$")
SEPARATOR_RE = re.compile(r"^\s*---+\s*$")


@dataclass(frozen=True)
class Turn:
    who: str
    start: int  # 1-based line of the marker
    end: int  # last line before the next marker
    body_start: int
    body_end: int
    text: str


def looks_like_specstory(text: str) -> bool:
    return sum(1 for line in text.splitlines() if TURN_RE.match(line)) >= 2


def split_turns(lines: list[str]) -> list[Turn]:
    marks = [(i, m.group("who")) for i, line in enumerate(lines) if (m := TURN_RE.match(line))]
    turns: list[Turn] = []
    for k, (i, who) in enumerate(marks):
        end = marks[k + 1][0] - 1 if k + 1 < len(marks) else len(lines) - 1
        body = list(range(i + 1, end + 1))
        # Trim blank lines and the `---` separator around the body.
        while body and (not lines[body[0]].strip()):
            body.pop(0)
        while body and (not lines[body[-1]].strip() or SEPARATOR_RE.match(lines[body[-1]])):
            body.pop()
        text = "\n".join(lines[j] for j in body)
        bs, be = (body[0], body[-1]) if body else (i, i)
        turns.append(Turn(who=who, start=i + 1, end=end + 1, body_start=bs + 1, body_end=be + 1, text=text))
    return turns


def parse_specstory(text: str) -> list[Candidate]:
    lines = text.splitlines()
    turns = split_turns(lines)
    out: list[Candidate] = []
    for k, turn in enumerate(turns):
        if turn.who != "User" or not has_error(turn.text, turn.body_start - 1):
            continue
        answers: list[Turn] = []
        for nxt in turns[k + 1 :]:
            if nxt.who == "User":
                break
            answers.append(nxt)
        remedy = "\n\n".join(a.text for a in answers).strip()
        end = answers[-1].end if answers else turn.end
        # The span ends at the answer's last line of content (the separator belongs to no one).
        while end > turn.start and (not lines[end - 1].strip() or SEPARATOR_RE.match(lines[end - 1])):
            end -= 1
        out.append(
            Candidate(
                title=title_for(turn.text),
                problem_text=turn.text,
                remedy_markdown=remedy,
                line_start=turn.start,
                line_end=end,
                problem_start=turn.body_start,
                problem_end=turn.body_end,
            )
        )
    return out
