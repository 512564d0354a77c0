"""Find error blocks in a log: tracebacks (chained, Ray-wrapped, rank-prefixed) and error lines.

Pure Python, no Django. Input is text; output is a tuple of frozen `ErrorBlock`s with 1-based
line spans relative to the text that was scanned.

This module holds the order of the scan and the scanner's single-line check; the readers it calls
are `kb.tracebacks` (Python tracebacks), `kb.errorlines` (lines outside a traceback) and
`kb.exceptionlines` (the exception line both end at), sharing a `kb.scanstate.ScanState`.
"""

from __future__ import annotations

from kb.errorblock import ErrorBlock, Frame
from kb.errorlines import ANY_ERROR_LINE_RE, exception_in_prose, identity, read_line
from kb.exceptionlines import exception_after_header, match_exception
from kb.logclean import clean_line, log_lines
from kb.logpatterns import (
    ARGPARSE_RE,
    CHAIN_CAUSE_RE,
    CHAIN_DURING_RE,
    CODE_LINE_RE,
    DEBUGGER_EXC_RE,
    FRAME_RE,
    HTTP_ERROR_RE,
    IPYTHON_HEAD_RE,
    METRIC_KV_RE,
    METRIC_RE,
    QUIET_LINE_RE,
    RAY_SECTION_RE,
    RICH_HEAD_RE,
    TB_HEAD_RE,
    WARNING_RE,
    metric_anomaly,
)
from kb.scanstate import ScanState
from kb.tracebacks import read_traceback, rich_traceback, starts_traceback

__all__ = ["ErrorBlock", "Frame", "identity", "line_may_start_failure", "metric_anomaly", "scan_log"]


def line_may_start_failure(raw: str) -> bool:
    """Could the scanner report a failure starting on this line? A cheap, single-line check with
    the scanner's own patterns, so a log's healthy lines that merely contain an error-ish word
    (an INFO line saying "0 errors", a config dump with `error_rate`) and warnings are rejected
    without scanning the lines around them. When in doubt, True."""
    cl = clean_line(raw)
    t = cl.text
    s = t.strip()
    if not s:
        return False
    if TB_HEAD_RE.match(t) or FRAME_RE.match(t) or RAY_SECTION_RE.match(t) or IPYTHON_HEAD_RE.match(t):
        return True
    if RICH_HEAD_RE.match(t):
        return True
    if DEBUGGER_EXC_RE.match(t) or CHAIN_CAUSE_RE.match(t) or CHAIN_DURING_RE.match(t):
        return True
    if match_exception(t, module_named=True):
        return True
    if METRIC_RE.search(t):
        values = {m.group("key"): m.group("val") for m in METRIC_KV_RE.finditer(t)}
        try:
            return bool(metric_anomaly({k: float(v) for k, v in values.items()}))
        except ValueError:
            return True
    if HTTP_ERROR_RE.search(t):
        return True
    # A warning alone is never a failure of a log (it is context of one), so it opens no window.
    if WARNING_RE.search(t) or cl.level in ("INFO", "DEBUG", "WARNING") or QUIET_LINE_RE.match(s):
        return False
    if cl.level in ("ERROR", "CRITICAL", "FATAL"):
        return True
    if not t.startswith(" ") and exception_in_prose(t):
        return True
    if CODE_LINE_RE.match(t):
        return bool(ARGPARSE_RE.match(s))
    return bool(ANY_ERROR_LINE_RE.search(t)) or bool(ARGPARSE_RE.match(s)) or bool(exception_after_header(s))


def scan_log(text: str, offset: int = 0) -> tuple[ErrorBlock, ...]:
    """All error blocks in `text`, in order, with line numbers shifted by `offset`.

    A chain marker ("The above exception was the direct cause…") says how the next traceback
    relates to the block before it; a traceback, or rich's box, is read whole; any other line on
    its own."""
    lines = log_lines(text)
    scan = ScanState(lines, offset)
    i = 0
    n = len(scan.logical)
    pending_relation = ""
    while i < n:
        t = scan.text(i)
        if CHAIN_CAUSE_RE.match(t):
            pending_relation = "cause"
            i += 1
            continue
        if CHAIN_DURING_RE.match(t):
            pending_relation = "during_handling"
            i += 1
            continue
        if starts_traceback(scan, i):
            i = read_traceback(scan, i, pending_relation)
            pending_relation = ""
            continue
        if RICH_HEAD_RE.match(t):
            i = rich_traceback(scan, i)
            continue
        i = read_line(scan, i)
    return tuple(scan.blocks)
