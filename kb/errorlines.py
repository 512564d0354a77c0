"""Lines read outside a traceback: an exception line on its own (also a debugger's or a notebook's
report), a metrics anomaly, a Python warning with its continuation, an HTTP error, and the error
lines named by a pattern or by the level a logger or CI runner gave them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from kb.errorblock import ErrorBlock
from kb.exceptionlines import continuation, exception_after_header, finish_exception, is_symptom, match_exception
from kb.logpatterns import (
    ABORT_RE,
    ARGPARSE_RE,
    ARGPARSE_USAGE_LINES,
    ARGPARSE_USAGE_RE,
    ARGPARSE_WORDING_RE,
    CARET_RE,
    CI_QUIET,
    CMAKE_ERROR_HEAD_RE,
    CMAKE_MESSAGE_LINES,
    CODE_LINE_RE,
    CODE_ONLY_ERROR_RE,
    DEBUGGER_EXC_RE,
    ERROR_LINE_PATTERNS,
    ERROR_MAPPING_HEAD_RE,
    ERROR_MAPPING_LINES,
    EXC_REPR_RE,
    FENCE_LINE_RE,
    FRAME_RE,
    HANDLED_RE,
    HTTP_ERROR_RE,
    IPYTHON_HEAD_RE,
    LABEL_LINE_RE,
    LOG_HEADER_MARK_RE,
    LOG_LINE_RE,
    METRIC_DESCRIPTIONS,
    METRIC_KEYS,
    METRIC_KV_RE,
    METRIC_RE,
    NOTE_LINE_RE,
    PIP_WRAPPER_RE,
    PROGRAM_WARNING_RE,
    PROSE_EXC_CLOSE,
    PROSE_EXC_OPEN_RE,
    PROSE_EXC_START_RE,
    QUIET_LINE_RE,
    QUOTED_ERROR_RE,
    WARNING_RE,
    WARNING_SOURCE_RE,
    WRAPPED_WARNING_RE,
    metric_anomaly,
)
from kb.scanstate import ScanState
from kb.tracebacks import ipython_traceback
from kb.trigger_search import compile_trigger


def read_line(scan: ScanState, i: int) -> int:
    """One line outside a traceback, read in order:
    1. an exception line (also behind a log header), a debugger's or a notebook's report;
    2. a metrics anomaly, a Python warning with its continuation, an HTTP error;
    3. unless the line is informational or source code: an error line, by pattern or by the
    level its logger or CI runner gave it, else a logged warning."""
    t = scan.text(i)
    s = t.strip()
    if not s:
        return i + 1
    after = _exception_at(scan, i, t, s)
    if after is not None:
        return after
    metric = METRIC_RE.search(t)
    if metric:
        _add_metric(scan, i, metric.group(0))
        return i + 1
    wm = WARNING_RE.search(t) or WRAPPED_WARNING_RE.match(s)
    if wm:
        return _python_warning(scan, i, wm)
    if CMAKE_ERROR_HEAD_RE.match(s):
        return _cmake_error(scan, i, s)
    if ERROR_MAPPING_HEAD_RE.match(s):
        return _error_mapping(scan, i, s)
    http = HTTP_ERROR_RE.search(t)
    if http:
        _add_error_line(scan, i, "http_error", s)
        return i + 1
    level = scan.levels[scan.logical[i][0]]
    quiet = level in ("INFO", "DEBUG", "WARNING") or level in CI_QUIET or bool(QUIET_LINE_RE.match(s))
    if not (quiet or CODE_LINE_RE.match(t) or LABEL_LINE_RE.match(s)):
        _error_line(scan, i, t, s, level)
    return i + 1


def _exception_at(scan: ScanState, i: int, t: str, s: str) -> int | None:
    """Where reading goes on after the exception that line `i` opens, or None if it opens none."""
    # An indented line is a traceback's source line, unless it stands under a `raise` or under the
    # carets that mark the failing expression (a traceback that pip or a notebook indented, pasted
    # from its last frame's source on).
    indented = t.startswith("    ") and not (i > 0 and _under_raise_or_carets(scan.text(i - 1)))
    exc = match_exception(t) if not indented else None
    if exc and (exc.group("msg") or exc.group("inner")):
        return finish_exception(scan, i, i, exc, [], [], "")
    exc = exception_after_header(s)
    if exc:
        return finish_exception(scan, i, i, exc, [], [], "")
    as_repr = EXC_REPR_RE.match(s) if not indented else None
    if as_repr:
        # A logger's line holding the exception object it caught, as its repr: ranked as a summary,
        # since the traceback a logger prints under it is surer.
        end = finish_exception(scan, i, i, as_repr, [], [], "")
        scan.blocks[-1] = replace(scan.blocks[-1], from_repr=True)
        return end
    # Weak roots, outranked by a logger's error line: a class named with its module and a message
    # (pyarrow.lib.ArrowInvalid: …; a logger prints the same shape), or an unmistakable class alone
    # on its line (a bare `AssertionError` under the `assert` a paste kept).
    if not t.startswith(" ") and scan.levels[scan.logical[i][0]] not in ("INFO", "DEBUG", "WARNING"):
        exc = match_exception(t, module_named=True)
        if exc:
            end = finish_exception(scan, i, i, exc, [], [], "")
            scan.blocks[-1] = replace(scan.blocks[-1], weak=True)
            return end
        # An exception named in a sentence ("…when running it, TypeError: EngineArgs.__init__() got
        # …", "错误显示：pydantic_core….ValidationError: 1 validation error …").
        exc = exception_in_prose(t)
        if exc:
            end = finish_exception(scan, i, i, exc, [], [], "")
            scan.blocks[-1] = replace(scan.blocks[-1], from_prose=True)
            return end
    dbg = DEBUGGER_EXC_RE.match(t)
    if dbg:
        return _debugger_exception(scan, i, dbg.group("type"))
    ipy = IPYTHON_HEAD_RE.match(t)
    if ipy:
        return ipython_traceback(scan, i, ipy.group("type"))
    return None


def is_warning_source(line: str) -> bool:
    return bool(WARNING_SOURCE_RE.match(line)) and not FRAME_RE.match(line)


def _python_warning(scan: ScanState, i: int, wm: re.Match[str]) -> int:
    end = continuation(scan, i, limit=3)
    msg = " ".join([wm.group("msg")] + [scan.text(k).strip() for k in range(i + 1, end)]).strip()
    _add_frameless(scan, i, end, "warning", wm.group("type"), msg)
    # A line in it that starts another warning (another process printing the same one) is read
    # again as that warning, so the lines under it are its message, never errors of their own. The
    # first one's message still reads on over it: in a job log a warning's next lines are as often
    # the report pasted under it, and cutting the message there loses such reports (grouped CV:
    # answered right 0.883 → 0.875).
    again = next((k for k in range(i + 1, end) if WARNING_RE.search(scan.text(k))), None)
    if again is not None:
        return again
    # Python ends a warning with the line of source that raised it: the lines after it are read again
    # on their own too (an error a progress bar's redraw glued under the warning).
    if end > i + 2 and is_warning_source(scan.text(i + 1)):
        return i + 2
    return max(end, i + 1)


def _add_frameless(scan: ScanState, i: int, end: int, kind: str, exc_type: str, message: str) -> None:
    """A block without frames from line `i` up to (not including) `end`: its message may go on
    below its first line."""
    scan.blocks.append(
        ErrorBlock(
            kind=kind,
            exc_type=exc_type,
            message=message,
            frames=(),
            line_start=scan.lineno(i),
            line_end=scan.end_lineno(max(i, end - 1)),
            prefix=scan.logical[i][2],
        )
    )


def _under_raise_or_carets(above: str) -> bool:
    return bool(re.match(r"\s*raise\b", above) or CARET_RE.match(above))


def _closing_quote(rest: str, mark: str) -> int:
    """Where the quote around an error closes in the rest of its line (-1: never). A straight
    double quote right before a word opens a string inside the message (`'message': "This model's
    …"`), so it closes nothing."""
    if mark != '"':
        return rest.find(mark)
    m = re.search(r'"(?!\w)', rest)
    return m.start() if m else -1


def exception_in_prose(t: str) -> re.Match[str] | None:
    """The exception a sentence names after a word, comma or colon, with a message after it; not
    a logger's line (a clock time or a level word before it), which narrates a retry as often, nor
    a sentence that says the program handled it ("Retrying after ConnectionError: …", "skipping
    sample 12 because of KeyError: …")."""
    if "Error" not in t and "Exception" not in t:
        return None
    for m in PROSE_EXC_START_RE.finditer(t):
        if HANDLED_RE.search(t[: m.start()]):
            return None
        rest = t[m.end() :]
        close = -1
        if m.group("open"):
            innermost = PROSE_EXC_OPEN_RE.findall(m.group("open"))[-1]
            close = _closing_quote(rest, PROSE_EXC_CLOSE[innermost])
            rest = rest[:close] if close > 0 else rest
        # A logger's header before it makes it a logger's narration, unless a person quoted it as
        # code: a collapsed paste keeps its log headers, and a logger never wraps what it prints in
        # backticks.
        as_code = close > 0 and "`" in m.group("open")
        if not as_code and LOG_HEADER_MARK_RE.search(t[: m.start()]):
            continue
        exc = match_exception(rest)
        if exc and exc.group("msg") and re.search(r"(?:Error|Exception)$", exc.group("type")):
            return exc
    return None


def _argparse_said(scan: ScanState, i: int, s: str) -> bool:
    """Whether a "prog: error: …" line is argparse's: in its own wording, or under its usage line."""
    if ARGPARSE_WORDING_RE.search(s):
        return True
    return any(ARGPARSE_USAGE_RE.match(scan.text(k)) for k in range(max(0, i - ARGPARSE_USAGE_LINES), i))


def _error_line(scan: ScanState, i: int, t: str, s: str, level: str) -> None:
    """A line that is neither informational nor code: argparse's error, an error line a
    pattern names, a line the CI runner or the logger marked as an error, or a logged warning."""
    if ARGPARSE_RE.match(s) and not LOG_LINE_RE.match(s) and _argparse_said(scan, i, s):
        _add_error_line(scan, i, "argparse_error", s)
        return
    # One pass says whether any pattern can match (most lines of a log match none).
    for name, rx in ERROR_LINE_PATTERNS if ANY_ERROR_LINE_RE.search(t) else ():
        m = rx.search(t)
        if m:
            if name == "log_error" and (
                re.search(r"\b(?:0 errors?|no errors?|errors?=0)\b", t, re.I) or PIP_WRAPPER_RE.match(t)
            ):
                continue
            _add_error_line(scan, i, name, s, identity(name, m, s))
            return
    if level == "error":  # the CI runner marked it ("##[error]…", "::error::…")
        _add_error_line(scan, i, "ci_error", s)
        return
    if level in ("ERROR", "CRITICAL", "FATAL"):  # the logger said so, in words no pattern knows
        _add_error_line(scan, i, "log_error", s)
        return
    quoted = QUOTED_ERROR_RE.search(s) if ("`" in s or '"' in s or "“" in s) else None  # most lines quote nothing
    said = (quoted.group("msg") or quoted.group("dmsg")).strip() if quoted else ""
    if " " in said:  # a sentence that quotes its error (not a bare name)
        _add_error_line(scan, i, "error_phrase", s, said)
        return
    if (
        re.match(r"^\s*(?:\[?WARN(?:ING)?\]?|\[WARNING[:\]])", s)
        or re.search(r"\bWARN(?:ING)?\b", s[:40])
        or PROGRAM_WARNING_RE.match(s)
    ):
        _add_frameless(scan, i, i + 1, "warning", "", s)


def _cmake_error(scan: ScanState, i: int, head: str) -> int:
    """CMake's error: its header, and what failed on the lines under it, which CMake indents (with
    blank lines between them). It ends at a fence, the call stack, or a line no deeper than the
    header once the message has begun (right under the header, a paste that lost the indent)."""
    depth = len(scan.text(i)) - len(scan.text(i).lstrip())
    said: list[str] = []
    j = end = i + 1  # `end`: after the last line of the message
    while j < len(scan.logical) and len(said) < CMAKE_MESSAGE_LINES:
        t = scan.text(j)
        line = t.strip()
        if not line:
            j += 1
            continue
        deeper = len(t) - len(line) > depth
        if FENCE_LINE_RE.match(line) or line.startswith("Call Stack") or ((said or j > end) and not deeper):
            break
        said.append(line)
        j = end = j + 1
    _add_error_line(scan, i, "cmake_error", head, " ".join([head, *said]), last=end - 1)
    return end


def _error_mapping(scan: ScanState, i: int, head: str) -> int:
    """An API's error body printed over several lines (`"error": {`, then `"message": "…"`, `"type": …`,
    one a line): one error whose message is the mapping, through the line that closes it. The key
    is written unquoted (`error: {`): every such body has it, so it names nothing (no slot)."""
    depth, said = 1, [head.replace('"', "").replace("'", "")]
    j = i + 1
    while j < len(scan.logical) and depth > 0 and len(said) <= ERROR_MAPPING_LINES:
        line = scan.text(j).strip()
        depth += line.count("{") + line.count("[") - line.count("}") - line.count("]")
        said.append(line)
        j += 1
    _add_error_line(scan, i, "error_mapping", head, " ".join(part for part in said if part), last=j - 1)
    return j


def _debugger_exception(scan: ScanState, i: int, exc_type: str) -> int:
    """ "Exception has occurred: ValueError" with the message on the lines below it."""
    end = continuation(scan, i)
    message = " ".join(scan.text(k).strip() for k in range(i + 1, end)).strip()
    _add_frameless(scan, i, end, "exception_line", exc_type, message)
    return max(end, i + 1)


def _add_error_line(
    scan: ScanState, i: int, pattern: str, text: str, message: str = "", last: int | None = None
) -> None:
    """An error line at `i` (through logical line `last` when its message continues below it)."""
    scan.blocks.append(
        ErrorBlock(
            kind="error_line",
            exc_type="",
            message=message or text,
            frames=(),
            line_start=scan.lineno(i),
            line_end=scan.end_lineno(i if last is None else last),
            pattern=pattern,
            symptom=is_symptom(text) or pattern in SYMPTOM_PATTERNS,
            prefix=scan.logical[i][2],
            weak=_weak_line(pattern, text),
        )
    )


def _weak_line(pattern: str, text: str) -> bool:
    """An abort (its reason is printed above it), a tool's note, or an error named only by its code:
    the root only when nothing else is."""
    if pattern == "segfault":
        return bool(ABORT_RE.search(text)) and "Segmentation fault" not in text
    if pattern in ("log_error", "ci_error"):
        return bool(CODE_ONLY_ERROR_RE.match(text))
    return pattern == "error_phrase" and bool(NOTE_LINE_RE.search(text))


def _add_metric(scan: ScanState, i: int, text: str) -> None:
    values: dict[str, float] = {}
    for m in METRIC_KV_RE.finditer(text):
        try:
            values[m.group("key")] = float(m.group("val"))
        except ValueError:
            continue
    pattern = metric_anomaly(values)
    if not pattern:
        return
    shown = ", ".join(f"{k} {values[k]:g}" for k in METRIC_KEYS.get(pattern, ()) if k in values)
    scan.blocks.append(
        ErrorBlock(
            kind="metric",
            exc_type="",
            message=f"{METRIC_DESCRIPTIONS[pattern]} ({shown})",
            frames=(),
            line_start=scan.lineno(i),
            line_end=scan.end_lineno(i),
            pattern=pattern,
            metrics=tuple(sorted(values.items())),
            prefix=scan.logical[i][2],
        )
    )


def identity(pattern: str, m: re.Match[str], text: str) -> str:
    """What names the same failure next time, for the kinds where the whole line would not: a
    test by its id (its path kept as a dotted module, so masking does not erase it), a compiler
    diagnostic without the build machine's directories and the line and column."""
    groups = m.groupdict()
    if pattern == "test_failed" and groups.get("test"):
        test = groups["test"].replace("/", ".")
        if groups.get("cls"):
            test = f"{groups['cls']}.{test}"
        msg = (groups.get("msg") or "").strip()
        return f"{test} - {msg}" if msg else test
    if pattern == "compiler_error":
        return re.sub(r"^\S*?([^/\\\s]+?)(?::\d+(?::\d+)?|\(\d+\)): ", r"\1: ", text)
    return ""


# Error lines that report that something else failed: a step's exit code, a build tool giving up,
# a generic log error. They rank below the error that explains them.
SYMPTOM_PATTERNS = frozenset({"http_error", "log_error", "error_phrase", "os_error", "build_failed", "exit_code"})


def _any_error_line() -> Any:
    """Every error-line pattern in one regular expression, for a yes/no answer in one pass (RE2's
    DFA when installed: a line that matches none of 30 patterns is rejected in one scan instead
    of 30). Group names are dropped and a lookahead widened, so it can only say yes more often
    than the patterns themselves, which the check allows."""
    parts = []
    for _, rx in ERROR_LINE_PATTERNS:
        body = re.sub(r"\(\?P<\w+>", "(?:", rx.pattern).replace("(?=\\w)", "")
        parts.append(f"(?i:{body})" if rx.flags & re.I else f"(?:{body})")
    return compile_trigger("|".join(parts))


ANY_ERROR_LINE_RE = _any_error_line()
