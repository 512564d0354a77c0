"""What every document parser returns: problem→fix candidates with their source lines."""

from __future__ import annotations

from dataclasses import dataclass

from kb.textdecode import DocumentError


@dataclass(frozen=True)
class Candidate:
    """One problem→fix pair found in a document.

    `line_start`/`line_end` are 1-based and inclusive: the whole block the pair came from
    (a notes heading and its log, or a user turn with the assistant's answer).
    `problem_start`/`problem_end` cover only the problem's lines.
    """

    title: str
    problem_text: str
    remedy_markdown: str
    line_start: int
    line_end: int
    problem_start: int
    problem_end: int

    @property
    def needs_fix(self) -> bool:
        return not self.remedy_markdown.strip()


# A document that cannot be read or parsed: one error for decoding (kb.textdecode) and parsing.
ParseError = DocumentError
