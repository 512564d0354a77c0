"""Decode an uploaded document, detect its format and run the matching parser."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

from ingest.parsers.base import Candidate, ParseError
from ingest.parsers.issuemd import looks_like_issue, parse_issue_markdown
from ingest.parsers.jsonchat import json_kind, load_json, parse_chatgpt, parse_claude, parse_github
from ingest.parsers.notes import looks_like_notes, parse_notes
from ingest.parsers.plainchat import looks_like_plainchat, parse_plainchat
from ingest.parsers.rawlog import parse_rawlog
from ingest.parsers.specstory import looks_like_specstory, parse_specstory

PARSERS: dict[str, Callable[[str], list[Candidate]]] = {
    "specstory": parse_specstory,
    "chatgpt": parse_chatgpt,
    "claude": parse_claude,
    "github": parse_github,
    "issue": parse_issue_markdown,
    "chat": parse_plainchat,
    "notes": parse_notes,
    "log": parse_rawlog,
}
FORMATS = tuple(PARSERS)
MAX_DECOMPRESSED = 2 << 30


def gunzip(data: bytes) -> bytes:
    try:
        out = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise ParseError(f"The gzip file is damaged: {exc}.") from exc
    if len(out) > MAX_DECOMPRESSED:
        raise ParseError("The gzip file expands to more than 2 GB.")
    return out


def looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls > max(8, len(sample) // 100)


def decode_document(data: bytes) -> str:
    """Text of an uploaded file (gzip is opened); binary files are refused with a clear error."""
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data)
    if not data.strip():
        raise ParseError("The file is empty.")
    if looks_binary(data[:65536]):
        raise ParseError("This looks like a binary file, not a log or a transcript; upload text (or .gz of text).")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n")


def detect_format(text: str) -> str:
    head = text.lstrip()[:1]
    if head in ("[", "{"):
        try:
            kind = json_kind(load_json(text))
        except ParseError:
            kind = ""
        if kind:
            return kind
    if looks_like_specstory(text):
        return "specstory"
    if looks_like_issue(text):
        return "issue"
    if looks_like_notes(text):
        return "notes"
    if looks_like_plainchat(text):
        return "chat"
    return "log"


def parse_document(text: str, fmt: str = "") -> tuple[str, list[Candidate]]:
    fmt = fmt or detect_format(text)
    if fmt not in PARSERS:
        raise ParseError(f"Unknown format {fmt!r}; expected one of {', '.join(FORMATS)}.")
    return fmt, PARSERS[fmt](text)
