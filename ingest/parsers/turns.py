"""Conversations of any origin, as turns; a user turn with an error plus its answer is a candidate.

Every chat format (SpecStory markdown, plain `User:`/`Assistant:` text, ChatGPT and Claude JSON
exports) is reduced to `Turn`s with their line spans in the original file; `pair_turns` does
the rest the same way for all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.parsers.base import Candidate
from ingest.parsers.reports import reports_problem, title_for

SEPARATOR_RE = re.compile(r"^\s*---+\s*$")


@dataclass(frozen=True)
class Turn:
    who: str  # "user" or "assistant"
    text: str
    start: int  # 1-based first line of the turn (its marker)
    end: int  # 1-based last line of the turn
    body_start: int
    body_end: int


def pair_turns(turns: list[Turn]) -> list[Candidate]:
    """A user turn that reports a problem, with the assistant turns that follow it as the remedy.

    A turn reports a problem when it holds an error or a warning, describes a silent failure in
    words (a hang, a NaN loss), or says that something failed; questions like "how do I start?"
    make no candidate.
    """
    out: list[Candidate] = []
    for k, turn in enumerate(turns):
        if turn.who != "user" or not reports_problem(turn.text):
            continue
        answers: list[Turn] = []
        for nxt in turns[k + 1 :]:
            if nxt.who == "user":
                break
            answers.append(nxt)
        remedy = "\n\n".join(a.text for a in answers if a.text.strip()).strip()
        out.append(
            Candidate(
                title=title_for(turn.text),
                problem_text=turn.text,
                remedy_markdown=remedy,
                line_start=turn.start,
                line_end=max(turn.end, answers[-1].body_end if answers else turn.end),
                problem_start=turn.body_start,
                problem_end=turn.body_end,
            )
        )
    return out


def turns_from_markers(lines: list[str], marker: re.Pattern[str], role_of: dict[str, str]) -> list[Turn]:
    """Split text on lines that start a turn; `marker` has a group `who` (and may have `rest`,
    text on the marker line itself)."""
    marks: list[tuple[int, str, str]] = []
    for i, line in enumerate(lines):
        m = marker.match(line)
        if m and m.group("who").lower() in role_of:
            rest = m.groupdict().get("rest") or ""
            marks.append((i, role_of[m.group("who").lower()], rest))
    turns: list[Turn] = []
    for k, (i, who, rest) in enumerate(marks):
        end = marks[k + 1][0] - 1 if k + 1 < len(marks) else len(lines) - 1
        body = ([i] if rest.strip() else []) + list(range(i + 1, end + 1))
        while body and not lines[body[0]].strip():
            body.pop(0)
        while body and (not lines[body[-1]].strip() or SEPARATOR_RE.match(lines[body[-1]])):
            body.pop()
        texts = [rest if j == i else lines[j] for j in body]
        bs, be = (body[0], body[-1]) if body else (i, i)
        turns.append(Turn(who=who, text="\n".join(texts), start=i + 1, end=be + 1, body_start=bs + 1, body_end=be + 1))
    return turns
