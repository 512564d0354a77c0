"""Reads of ingested documents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EXCERPT_CONTEXT = 20  # lines shown above and below the asked range
EXCERPT_LIMIT = 400  # lines of the asked range shown at most


@dataclass(frozen=True)
class Excerpt:
    """Lines `first`..`last` of a stored document (numbered as ingest numbered them: only a newline
    ends a line), the asked range among them, and whether the document goes on past them."""

    lines: tuple[tuple[int, str], ...]
    start: int
    end: int
    more_below: bool


def document_excerpt(path: Path | str, start: int, end: int, context: int = EXCERPT_CONTEXT) -> Excerpt:
    """The lines `start`..`end` of the document's stored text with `context` lines around them.

    Read as bytes and split on newlines only, so a progress bar's lone carriage return does not
    shift the numbers; a huge log is read only up to the last line shown."""
    start = max(1, start)
    end = max(start, min(end, start + EXCERPT_LIMIT - 1))
    first, last = max(1, start - context), end + context
    out: list[tuple[int, str]] = []
    more_below = False
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if number > last:
                more_below = True
                break
            if number >= first:
                out.append((number, raw.rstrip(b"\r\n").decode("utf-8", "replace")))
    return Excerpt(tuple(out), start, end, more_below)
