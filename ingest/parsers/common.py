"""Helpers shared by the parsers: is there an error in this text, and what to call it."""

from __future__ import annotations

import re

from kb.logscan import scan_log
from kb.normalize import strip_boilerplate
from kb.rootcause import select_root

# Failures that print no error: a user describes them in words.
SILENT_FAILURE_RE = re.compile(
    r"\b(?:hangs?|hanging|hung|stuck|freez(?:e|es|ing)|frozen|deadlock(?:ed)?|no progress|not progressing|"
    r"nan loss|loss (?:is|becomes|goes to) nan|diverg(?:e|es|ed|ing))\b|卡住|卡死|卡在|没有反应|无响应|不动了|一直不动",
    re.I,
)


def describes_failure(text: str) -> bool:
    return bool(SILENT_FAILURE_RE.search(text))


def has_error(text: str, offset: int = 0) -> bool:
    return any(b.kind != "warning" for b in scan_log(text, offset))


def title_for(text: str, fallback: str = "") -> str:
    """A one-line title: the root error as printed (exception and message), else the fallback."""
    root = select_root(scan_log(text)).root
    if root is None or (root.kind == "warning" and fallback):
        return _shorten(fallback or first_line(text))
    if root.kind == "truncated_traceback":
        frame = root.frames[-1]
        return _shorten(fallback or f"Traceback in {frame.function} ({frame.path.rsplit('/', 1)[-1]})")
    head = root.exc_type.rsplit(".", 1)[-1] if root.exc_type else ""
    message = strip_boilerplate(root.message)
    return _shorten(f"{head}: {message}" if head else message)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _shorten(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
