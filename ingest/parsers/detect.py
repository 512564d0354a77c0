"""Decode an uploaded document, detect its format and run the matching parser."""

from __future__ import annotations

from collections.abc import Callable

from ingest.parsers.base import Candidate, ParseError
from ingest.parsers.notes import looks_like_notes, parse_notes
from ingest.parsers.rawlog import parse_rawlog
from ingest.parsers.specstory import looks_like_specstory, parse_specstory

PARSERS: dict[str, Callable[[str], list[Candidate]]] = {
    "specstory": parse_specstory,
    "notes": parse_notes,
    "log": parse_rawlog,
}
FORMATS = tuple(PARSERS)


def decode_document(data: bytes) -> str:
    """Text of an uploaded file; binary files are refused with a clear error."""
    if not data.strip():
        raise ParseError("The file is empty.")
    sample = data[:65536]
    if b"\x00" in sample:
        raise ParseError("This looks like a binary file (it contains NUL bytes); upload a text log or transcript.")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        text = data.decode("latin-1")
    controls = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\n\r\t\x1b\x0c")
    if controls > max(8, len(text[:65536]) // 100):
        raise ParseError(
            "This looks like a binary file (too many control characters); upload a text log or transcript."
        )
    return text.replace("\r\n", "\n")


def detect_format(text: str) -> str:
    if looks_like_specstory(text):
        return "specstory"
    if looks_like_notes(text):
        return "notes"
    return "log"


def parse_document(text: str, fmt: str = "") -> tuple[str, list[Candidate]]:
    fmt = fmt or detect_format(text)
    if fmt not in PARSERS:
        raise ParseError(f"Unknown format {fmt!r}; expected one of {', '.join(FORMATS)}.")
    return fmt, PARSERS[fmt](text)
