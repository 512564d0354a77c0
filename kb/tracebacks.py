"""Python tracebacks: where one starts, its frames (also in a traceback indented as a whole, wrapped
by Ray, boxed by rich, or a notebook's), and how it ends: at its exception line, at an exception
line that lost its type, or cut before either and named as best the paste allows.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kb.errorblock import ErrorBlock, Frame
from kb.exceptionlines import add_exception, continuation, finish_exception, is_symptom, match_exception
from kb.logpatterns import (
    CARET_RE,
    CHAIN_CAUSE_RE,
    CHAIN_DURING_RE,
    CODE_LINE_RE,
    FRAME_RE,
    LABEL_LINE_RE,
    LOG_LINE_RE,
    RAISE_LINE_RE,
    RAY_SECTION_RE,
    RICH_END_RE,
    RICH_FRAME_RE,
    SHELL_LINE_RE,
    TB_HEAD_RE,
)
from kb.scanstate import ScanState


def _is_informative(msg: str) -> bool:
    return len(re.findall(r"[A-Za-z\u4e00-\u9fff]{2,}", msg)) >= 2


def starts_traceback(scan: ScanState, i: int) -> bool:
    t = scan.text(i)
    if TB_HEAD_RE.match(t) or FRAME_RE.match(t):
        return True
    if RAY_SECTION_RE.match(t) and i + 1 < len(scan.logical) and FRAME_RE.match(scan.text(i + 1)):
        return True
    # A wrapper such as RayTaskError(X): ray::Actor.method() followed by the frames it wraps.
    exc = match_exception(t)
    if exc and exc.group("inner") and _frames_follow(scan, i + 1):
        return True
    # A paste that starts mid-traceback: indented code lines, then a frame. An indented exception
    # line is not code: it is read on its own (a report that states the error above its frames).
    if t.startswith("  ") and t.strip():
        j = i + 1
        while j < len(scan.logical) and j <= i + 3:
            nt = scan.text(j)
            if FRAME_RE.match(nt):
                return not _stated_exception(t)
            if not (CARET_RE.match(nt) or nt.startswith("  ")):
                return False
            j += 1
    return False


def read_traceback(scan: ScanState, start: int, relation: str) -> int:
    """1. Walk the frames, their source lines and carets, and wrappers that name the
    traceback they wrap (RayTaskError(X) with frames below it).
    2. At the exception line, record the traceback with it; at an exception line that lost
    its type under the last frame, with that line as its message.
    3. Cut before either: `_finish_cut` names it as best the paste allows."""
    n = len(scan.logical)
    frames: list[Frame] = []
    wrappers: list[str] = []
    i = start
    # A traceback indented as a whole (a markdown code block, a quote in an email) is read
    # as if it were not: its exception line is as indented as its "Traceback" line.
    scan.indent = _traceback_indent(scan, start)
    if TB_HEAD_RE.match(scan.text(i)) or RAY_SECTION_RE.match(scan.text(i)):
        i += 1
    last_frame_idx = start
    wrapped = ""  # the type a wrapper names, RayTaskError(X), when its own traceback follows
    while i < n:
        t = scan.body(i)
        fm = FRAME_RE.match(t)
        if fm:
            func = (fm.group("func") or "").strip()
            frames.append(Frame(path=fm.group("path"), function=func, line=int(fm.group("line"))))
            last_frame_idx = i
            i += 1
            continue
        if not t.strip():
            # Blank lines inside a traceback only appear before its end; look past one.
            if i + 1 < n and FRAME_RE.match(scan.text(i + 1)):
                i += 1
                continue
            break
        if CARET_RE.match(t) or t.strip() in ("[...]", "...") or RAY_SECTION_RE.match(t):
            i += 1
            continue
        exc = match_exception(t, module_named=True)
        # The exception line starts the line; a paste may have shifted the whole traceback by a
        # space (` RuntimeError: …` under ` File …`), but the line right under a frame is its source.
        if exc and (not t.startswith(" ") or (not t.startswith("  ") and i > last_frame_idx + 1)):
            followed_by_frames = _frames_follow(scan, i + 1)
            if followed_by_frames:
                wrappers.append(exc.group("type").rsplit(".", 1)[-1])
                wrapped = exc.group("inner") or wrapped
                i += 1
                continue
            return finish_exception(scan, start, i, exc, frames, wrappers, relation)
        if TB_HEAD_RE.match(t) or CHAIN_CAUSE_RE.match(t) or CHAIN_DURING_RE.match(t):
            break
        # (the exception read only where no frame follows: one regex for a frame's last source line)
        stated = _stated_exception(t) if frames and not _frames_follow(scan, i + 1) else None
        if stated:
            # An exception line indented like a source line (frames that lost their indent in the
            # paste, a traceback quoted inside another tool's output): no frame follows, so it is
            # where the traceback ends, not code under a frame.
            return finish_exception(scan, start, i, stated, frames, wrappers, relation)
        if t.startswith(" ") or i == last_frame_idx + 1:
            # source line under a frame
            i += 1
            continue
        if frames and i <= last_frame_idx + 2 and not LOG_LINE_RE.match(t.strip()):
            if _untyped_exception(scan, last_frame_idx, i):
                return _finish_untyped(scan, start, i, frames, wrappers, relation)
            i += 1
            continue
        break
    _finish_cut(scan, start, i, frames, wrappers, last_frame_idx, wrapped)
    return max(i, start + 1)


def _finish_cut(
    scan: ScanState, start: int, i: int, frames: list[Frame], wrappers: list[str], last_frame_idx: int, wrapped: str
) -> None:
    """A traceback cut before its exception line: named by the `raise X(...)` under its last
    frame or by the type a wrapper names; else, right under a logger's error line, it is that
    error's traceback; else, right under a line that says what failed, that line is its message;
    else it is recorded as truncated (frames only). A paste cut right under its "Traceback" line
    (no frame at all) is recorded only when the line above it says what failed."""
    end = max(start, i - 1)
    # Cut inside a wrapped traceback, the type the wrapper names is still known.
    raised = (_raise_statement(scan, last_frame_idx) or ((wrapped, "") if wrapped else None)) if frames else None
    if not raised and frames and _logged_just_before(scan, start):
        # logger.exception()'s shape: the program's own error line, then the traceback. Cut
        # before its exception line, the traceback's failure is what that line says.
        logged = scan.blocks.pop()
        stated = _stated_exception(logged.message)
        scan.blocks.append(
            replace(
                logged,
                kind="traceback",
                # an error line that states the exception (`Type: message`, indented as code) names it
                exc_type=stated.group("type") if stated else logged.exc_type,
                message=stated.group("msg").strip() if stated else logged.message,
                frames=tuple(frames),
                line_end=scan.end_lineno(end),
                wrappers=tuple(wrappers),
                pattern="",
                symptom=False,
            )
        )
        return
    kind, first = "traceback", start
    exc_type, message = raised or ("", "")
    if not raised:
        # A program that prints what failed, then the traceback (ComfyUI's "!!! Exception during
        # processing !!! <message>"): the traceback's failure is that line.
        message = _failure_said_just_before(scan, start)
        if not message and not frames:
            return  # a bare "Traceback" line names nothing
        kind, first = ("traceback", start - 1) if message else ("truncated_traceback", start)
    scan.blocks.append(
        ErrorBlock(
            kind=kind,
            exc_type=exc_type,
            message=message,
            frames=tuple(frames),
            line_start=scan.lineno(first),
            line_end=scan.end_lineno(end),
            wrappers=tuple(wrappers),
            prefix=scan.logical[start][2],
        )
    )


def _logged_just_before(scan: ScanState, start: int) -> bool:
    """Whether the block read last is an error line (a logger's, not a symptom) printed on the
    line right above `start`."""
    if not scan.blocks or start == 0:
        return False
    last = scan.blocks[-1]
    return (
        last.kind == "error_line"
        and last.pattern in ("log_error", "ci_error", "error_phrase")
        and last.line_end == scan.lineno(start - 1)
        and not is_symptom(last.message)
    )


# A line that says a failure happened, in the words programs print over a traceback.
FAILURE_SAID_RE = re.compile(r"\b(?:exception|error)\b", re.I)


def _failure_said_just_before(scan: ScanState, start: int) -> str:
    """The line right above the traceback at `start`, when it says that something failed and no
    block was read from it (a logger's error line is `_logged_just_before`'s): "" otherwise."""
    if start == 0 or (scan.blocks and scan.blocks[-1].line_end >= scan.lineno(start - 1)):
        return ""
    above = scan.text(start - 1).strip()
    if not FAILURE_SAID_RE.search(above) or not _is_informative(above) or LOG_LINE_RE.match(above):
        return ""
    if LABEL_LINE_RE.match(above) or above.endswith((":", "：")):
        return ""  # "Here is the error:" introduces the traceback; it says nothing of the failure
    return "" if starts_traceback(scan, start - 1) or CODE_LINE_RE.match(above) else above


def _raise_statement(scan: ScanState, frame_idx: int) -> tuple[str, str] | None:
    """A traceback cut before its exception line still shows, under its last frame, the
    `raise X("message")` that failed: the type and the literal part of the message (or the
    exception line itself, glued onto the `raise` line by a lost line break)."""
    if frame_idx + 1 >= len(scan.logical):
        return None
    m = RAISE_LINE_RE.match(scan.text(frame_idx + 1))
    if not m:
        return None
    glued = match_exception(m.group("msg"))
    if glued and glued.group("colon") and glued.group("msg"):
        # The paste lost the line break after `raise X(`: what follows is the exception line
        # itself (`raise AttributeError(AttributeError: 'Qwen2ForCausalLM' object has no …`),
        # read as written, its quoted names kept.
        return glued.group("type"), glued.group("msg").strip()
    literal = " ".join(re.findall(r"""[frb]?["']([^"'{}]{3,})""", m.group("msg")))
    return (m.group("type"), literal.strip()) if _is_informative(literal) else None


def rich_traceback(scan: ScanState, start: int, limit: int = 400) -> int:
    """rich's boxed traceback: frames inside the box, the exception line under it."""
    n = len(scan.logical)
    frames: list[Frame] = []
    j = start + 1
    while j < n and j < start + limit and not RICH_END_RE.match(scan.text(j)):
        fm = RICH_FRAME_RE.match(scan.text(j))
        if fm:
            frames.append(Frame(path=fm.group("path"), function=fm.group("func"), line=int(fm.group("line"))))
        j += 1
    k = j + 1
    while k < n and not scan.text(k).strip():
        k += 1
    exc = match_exception(scan.text(k), module_named=True) if k < n else None
    if exc is None or not frames:
        return start + 1  # read the lines on their own
    return finish_exception(scan, start, k, exc, frames, [], "")


def _traceback_indent(scan: ScanState, start: int) -> str:
    t = scan.text(start)
    lead = t[: len(t) - len(t.lstrip())]
    if TB_HEAD_RE.match(t):
        return lead
    if FRAME_RE.match(t) and lead.endswith("  "):
        return lead[:-2]  # a frame sits two spaces under its "Traceback" line
    return ""


def _untyped_exception(scan: ScanState, frame_idx: int, i: int) -> bool:
    """Python prints the exception line right under the last frame's source line; when that
    line has lost its type (pytest's `E   cannot import name ...`, a paste cut mid-line) it
    is still the message."""
    if i != frame_idx + 2 or frame_idx + 1 >= len(scan.logical):
        return False
    t, code = scan.body(i), scan.body(frame_idx + 1)
    return (
        code.startswith(" ")
        and not t.startswith(" ")
        and not CODE_LINE_RE.match(t)
        and not SHELL_LINE_RE.match(t)
        and not t.lstrip().startswith(("```", "#", "..."))
        and _is_informative(t)
        and continuation(scan, i - 1, limit=1) > i  # not a line that never continues a message
    )


def _finish_untyped(
    scan: ScanState, start: int, i: int, frames: list[Frame], wrappers: list[str], relation: str
) -> int:
    end = continuation(scan, i)
    message = " ".join(scan.text(k).strip() for k in range(i, end))
    # Right under the frames, a capitalised name before a colon is the exception's type
    # whatever it is called (a warning raised as an error, a library's own class).
    named = re.match(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w+):\s+(?P<msg>\S.*)$", message)
    exc_type, message = (named.group("type"), named.group("msg")) if named else ("", message)
    add_exception(scan, start, end, exc_type, message, frames, wrappers, relation, is_symptom(scan.text(i)))
    return end


def _stated_exception(text: str) -> re.Match[str] | None:
    """The exception a line states with its message (`Type: message`: never a line of code), or None."""
    exc = match_exception(text.strip(), module_named=True)
    return exc if exc and exc.group("colon") and exc.group("msg") else None


def _frames_follow(scan: ScanState, i: int) -> bool:
    n = len(scan.logical)
    j = i
    while j < n and j <= i + 3:
        t = scan.text(j)
        if FRAME_RE.match(t):
            return True
        if RAY_SECTION_RE.match(t) or CARET_RE.match(t) or not t.strip():
            j += 1
            continue
        return False
    return False


def ipython_traceback(scan: ScanState, i: int, exc_type: str, limit: int = 80) -> int:
    """A notebook's traceback: its cells are not Python frames. When its own closing
    `Type: message` line follows, that line is read as usual; a paste cut before it is named
    by the `----> raise Type("…")` arrow line of its last cell."""
    n = len(scan.logical)
    short = exc_type.rsplit(".", 1)[-1]
    raised: tuple[int, str] | None = None
    for j in range(i + 1, min(n, i + limit)):
        t = scan.text(j)
        exc = match_exception(t)
        if exc and exc.group("type").rsplit(".", 1)[-1] == short and not t.startswith(" "):
            return i + 1
        m = RAISE_LINE_RE.match(t)
        if m and m.group("type").rsplit(".", 1)[-1] == short:
            literal = " ".join(re.findall(r"""[frb]?["']([^"'{}]{3,})""", m.group("msg")))
            raised = (j, literal.strip())
    if raised is None or not _is_informative(raised[1]):
        return i + 1
    scan.blocks.append(
        ErrorBlock(
            kind="exception_line",
            exc_type=exc_type,
            message=raised[1],
            frames=(),
            line_start=scan.lineno(i),
            line_end=scan.end_lineno(raised[0]),
            prefix=scan.logical[i][2],
        )
    )
    return raised[0] + 1
