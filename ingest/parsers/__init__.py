"""Document parsers: bytes in, problem→fix candidates out. Pure Python."""

from __future__ import annotations

from ingest.parsers.base import Candidate, ParseError
from ingest.parsers.registry import FORMATS, detect_format, parse_document
from kb.textdecode import decode_document

__all__ = ["FORMATS", "Candidate", "ParseError", "decode_document", "detect_format", "parse_document"]
