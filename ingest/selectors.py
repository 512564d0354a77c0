"""Reads of ingested documents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

EXCERPT_CONTEXT = 20  # lines shown above and below the asked range
EXCERPT_LIMIT = 400  # lines of the asked range shown at most
LINE_LIMIT = 4000  # characters of a line shown at most (a progress bar redrawn with \r is one line)


@dataclass(frozen=True)
class Excerpt:
    """Lines of a stored document (numbered as ingest numbered them: only a newline ends a line):
    the asked range `start`..`end` with context around it, whether the document goes on past
    them, and its last line number when it ended before them."""

    lines: tuple[tuple[int, str], ...]
    start: int
    end: int
    more_below: bool
    last_line: int


def document_excerpt(path: Path | str, start: int, end: int, context: int = EXCERPT_CONTEXT) -> Excerpt:
    """The lines `start`..`end` of the document's stored text with `context` lines around them.

    Read as bytes and split on newlines only, so a progress bar's lone carriage return does not
    shift the numbers; read only up to the last line shown, and a line longer than LINE_LIMIT is
    shown cut (its rest is skipped, not held)."""
    start = max(1, start)
    end = max(start, min(end, start + EXCERPT_LIMIT - 1))
    first, last = max(1, start - context), end + context
    out: list[tuple[int, str]] = []
    number = 0
    with open(path, "rb") as fh:
        while number < last:
            head, complete = _line(fh)
            if not head and not complete:
                return Excerpt(tuple(out), start, end, False, number)
            number += 1
            if number >= first:
                text = head.rstrip(b"\r\n").decode("utf-8", "replace")
                if not complete or len(text) > LINE_LIMIT:
                    text = f"{text[:LINE_LIMIT]} … (the line goes on)"
                out.append((number, text))
        more_below = bool(fh.read(1))
    return Excerpt(tuple(out), start, end, more_below, number if not more_below else 0)


def _line(fh: BinaryIO) -> tuple[bytes, bool]:
    """The next line's first LINE_LIMIT * 4 bytes, and whether that is all of it; the rest of a
    longer line is read past in pieces, never held whole. (b"", False) at the end of the file."""
    head = fh.readline(LINE_LIMIT * 4)
    if not head:
        return b"", False
    if head.endswith(b"\n"):
        return head, True
    cut = False
    while rest := fh.readline(1 << 20):
        cut = True
        if rest.endswith(b"\n"):
            break
    return head, not cut
