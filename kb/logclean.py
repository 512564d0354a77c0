"""Clean one line of a log before it is scanned: ANSI codes, progress redraws, the prefixes
launchers, loggers and CI runners put in front of it, JSON log records, markdown around it.

Pure Python, no Django.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from kb.logpatterns import (
    ANSI_RE,
    DISPLAY_NOISE_RE,
    PREFIX_RES,
    PROCESS_TAG_RE,
    SPACED_ANSI_RE,
    TB_HEAD_RE,
    TQDM_RE,
)


@dataclass(frozen=True)
class CleanLine:
    text: str  # without ANSI codes, progress bars and launcher prefixes
    prefix: str
    level: str = ""  # log level taken off with a prefix (vLLM's "WARNING 08-10 21:22:23 file.py:12]")


MAX_LINE = 4096  # longer lines (data dumps) are cut: nothing that identifies an error sits past this


def log_lines(text: str) -> list[str]:
    """A log's lines as `grep -n`, editors and ingest (which reads files line by line) number them:
    only a newline ends a line. A lone carriage return is a progress bar's redraw, kept inside its
    line for `clean_line`; `str.splitlines` would also break there, and at form feeds and other
    separators, and every line number after one would then point past the user's own."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":  # the newline that ends the last line starts no line of its own
        lines.pop()
    return lines


@lru_cache(maxsize=4096)  # a triage reads each line of a paste three or four times (scan, region, words)
def clean_line(raw: str) -> CleanLine:
    text = raw if len(raw) <= MAX_LINE else raw[:MAX_LINE]
    if text.startswith("{") and text.rstrip().endswith("}"):
        structured = _structured_line(text)
        if structured is not None:
            return structured
    if "\r" in text:
        text = text.rsplit("\r", 1)[-1] or text.replace("\r", "")
    if ANSI_RE.search(text):
        text = ANSI_RE.sub("", SPACED_ANSI_RE.sub("", text))
    if "%|" in text:
        text = TQDM_RE.sub("", text)
    prefix_parts = []
    level = ""
    changed = True
    while changed:
        changed = False
        for rx in PREFIX_RES:
            m = rx.match(text)
            if m and m.end() > 0:
                prefix_parts.append(m.group(0).strip())
                level = m.groupdict().get("level") or level
                text = text[m.end() :]
                changed = True
    text = text.rstrip()
    if QUOTE_PREFIX in prefix_parts:
        text = text.removesuffix("`").rstrip()
    if text.startswith("**") and text[2:3].strip():
        # Markdown bold around a pasted error line in a chat ("**TypeError: ... 'beta'**"); checked
        # here rather than as one more prefix pattern, which every line of a log would pay for.
        text = text[2:].removesuffix("**").rstrip()
    if "```" in text:  # a markdown fence closed (or opened) on the error's own line
        cut = FENCE_TAIL_RE.sub("", text)
        if cut != text and cut.startswith("```"):
            # Opened and closed on one line, "```FileNotFoundError: …```" is inline code, not a fence.
            cut = cut[3:]
        text = cut
    return CleanLine(text=text, prefix=" ".join(prefix_parts), level=level)


# The prefix clean_line gives a line a person opened with a backtick: quoted as code in a sentence.
QUOTE_PREFIX = "`"


def quoted_as_code(prefix: str) -> bool:
    """Whether a cleaned line's prefix says a person quoted the line as code (an opening backtick)."""
    return QUOTE_PREFIX in prefix.split()


def process_tag(prefix: str) -> str:
    """The tags in a line's prefix that Ray ("(WorkerDict pid=4123)") and torchrun ("[rank0]:")
    put on every line a process prints; "" for a line no launcher tagged."""
    return " ".join(m.strip() for m in PROCESS_TAG_RE.findall(prefix))


def line_stream(raw: str) -> str:
    """The tag of the process that printed a raw log line (`process_tag`); "" for an untagged line."""
    return process_tag(clean_line(raw).prefix)


def for_display(text: str) -> str:
    """An error line as a title shows it: without progress bars of any width or a logger's header."""
    return DISPLAY_NOISE_RE.sub(" ", text).strip()


JSON_MESSAGE_KEYS = ("msg", "message", "error", "err", "event")
JSON_EXCEPTION_KEYS = ("exception", "exc_info", "exc_text", "traceback", "stack_trace")


def _structured_line(text: str) -> CleanLine | None:
    """A JSON log record (structlog, python-json-logger, a cluster's log shipper): its message,
    or the last line of the traceback it carries, is the line; its level is the line's level."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    level = str(record.get("level") or record.get("levelname") or record.get("severity") or "").upper()
    for key in JSON_EXCEPTION_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return CleanLine(text=value.strip().splitlines()[-1].strip(), prefix="{json}", level=level)
    for key in JSON_MESSAGE_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return CleanLine(text=" ".join(value.split()), prefix="{json}", level=level)
    return None


FENCE_TAIL_RE = re.compile(r"(?<=\S)\s*```[\w+-]*\s*$")


def split_squashed_frames(text: str) -> list[str]:
    """Pastes sometimes lose newlines: 'Traceback (...):  File "a.py", line 1, in f    x()  File ...'."""
    if text.count('File "') < 2 and not TB_HEAD_RE.match(text):
        return [text]
    parts = re.split(r'(?<=\S)\s{2,}(?=File "|\S)', text)
    out: list[str] = []
    for part in parts:
        head = TB_HEAD_RE.match(part)
        if head and head.group("rest"):
            out.append("Traceback (most recent call last):")
            out.append(head.group("rest"))
        else:
            out.append(part)
    return out if len(out) > 1 else [text]
