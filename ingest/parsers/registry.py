"""Detect an uploaded document's format and run the matching parser (decoding it is
kb.textdecode's: triage reads uploads too)."""

from __future__ import annotations

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
