"""Find error blocks in a log: tracebacks (chained, Ray-wrapped, rank-prefixed) and error lines.

Pure Python, no Django. Input is text; output is a tuple of frozen `ErrorBlock`s with 1-based
line spans relative to the text that was scanned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from kb.logclean import clean_line, split_squashed_frames
from kb.logpatterns import (
    ARGPARSE_RE,
    CARET_RE,
    CHAIN_CAUSE_RE,
    CHAIN_DURING_RE,
    CODE_LINE_RE,
    DEBUGGER_EXC_RE,
    ERROR_LINE_PATTERNS,
    EXC_RE,
    FRAME_RE,
    HTTP_ERROR_RE,
    IPYTHON_HEAD_RE,
    LOG_HEADER_END_RE,
    LOG_HEADER_MARK_RE,
    LOG_HEADER_TOKENS,
    LOG_LINE_RE,
    METRIC_DESCRIPTIONS,
    METRIC_KEYS,
    METRIC_KV_RE,
    METRIC_RE,
    QUIET_LINE_RE,
    RAISE_LINE_RE,
    RAY_SECTION_RE,
    RAY_TASK_HEADER_RE,
    RICH_END_RE,
    RICH_FRAME_RE,
    RICH_HEAD_RE,
    SHELL_LINE_RE,
    STAMP_RE,
    SYMPTOM_RES,
    TB_HEAD_RE,
    TQDM_RE,
    WARNING_RE,
    WRAPPER_TYPES,
    metric_anomaly,
)
from kb.trigger_search import compile_trigger


@dataclass(frozen=True)
class Frame:
    path: str
    function: str
    line: int | None


@dataclass(frozen=True)
class ErrorBlock:
    """One error found in a log.

    `kind` is "traceback" (ends in an exception line), "truncated_traceback" (frames, no
    exception), "exception_line" (an exception line with no frames above it), "error_line"
    (a known non-exception failure; `pattern` names it), "metric" (a training-metrics line that
    shows a failure without an error) or "warning".
    """

    kind: str
    exc_type: str
    message: str
    frames: tuple[Frame, ...]
    line_start: int
    line_end: int
    pattern: str = ""
    wrappers: tuple[str, ...] = ()
    chain_prev: int | None = None  # index of the block this one was chained to
    chain_relation: str = ""  # "cause" | "during_handling" | ""
    symptom: bool = False
    prefix: str = ""
    metrics: tuple[tuple[str, float], ...] = field(default=())

    @property
    def short_type(self) -> str:
        return self.exc_type.rsplit(".", 1)[-1]


def _is_informative(msg: str) -> bool:
    return len(re.findall(r"[A-Za-z\u4e00-\u9fff]{2,}", msg)) >= 2


def _match_exception(text: str) -> re.Match[str] | None:
    stripped = text.strip()
    if stripped[:1] in ('"', "'") and stripped[1:2].isupper():
        # an error quoted in a report: "ValueError: The model did not return a loss ..."
        stripped = stripped[1:].removesuffix(stripped[0]).rstrip()
    m = EXC_RE.match(stripped)
    if not m:
        return None
    bare = m.group("colon") is None and m.group("inner") is None
    # A bare name only counts when it is an unmistakable exception class.
    if bare and (not re.search(r"(?:Error|Exception|Interrupt|Exit)$", m.group("type")) or " " in stripped):
        return None
    return m


def _exception_after_header(text: str) -> re.Match[str] | None:
    """An exception line behind a log header the prefixes do not know: a clock time or a level
    word within the first few tokens, then `Type: message`."""
    if not LOG_HEADER_MARK_RE.search(text[:120]):
        return None
    for m in re.finditer(r"\s+", text[:200]):
        words = text[: m.start()].split()
        if len(words) > LOG_HEADER_TOKENS:
            return None
        if not words or not LOG_HEADER_MARK_RE.search(text[: m.start()]) or not LOG_HEADER_END_RE.search(words[-1]):
            continue
        exc = _match_exception(text[m.end() :])
        if exc and exc.group("msg"):
            return exc
    return None


def _is_symptom(text: str) -> bool:
    return any(rx.search(text) for rx in SYMPTOM_RES)


class _Scanner:
    def __init__(self, lines: list[str], offset: int) -> None:
        self.raw = lines
        self.offset = offset
        self.clean = [clean_line(line) for line in lines]
        # Squashed frames expand one physical line into several logical ones that share its number.
        self.logical: list[tuple[int, str, str]] = []
        for i, cl in enumerate(self.clean):
            for piece in split_squashed_frames(cl.text):
                self.logical.append((i, piece, cl.prefix))
        self.levels = [cl.level for cl in self.clean]
        self.blocks: list[ErrorBlock] = []
        self.indent = ""  # of the traceback being read

    def lineno(self, idx: int) -> int:
        return self.logical[idx][0] + 1 + self.offset

    def text(self, idx: int) -> str:
        return self.logical[idx][1]

    def run(self) -> list[ErrorBlock]:
        i = 0
        n = len(self.logical)
        pending_relation = ""
        while i < n:
            t = self.text(i)
            if CHAIN_CAUSE_RE.match(t):
                pending_relation = "cause"
                i += 1
                continue
            if CHAIN_DURING_RE.match(t):
                pending_relation = "during_handling"
                i += 1
                continue
            if self._starts_traceback(i):
                i = self._read_traceback(i, pending_relation)
                pending_relation = ""
                continue
            if RICH_HEAD_RE.match(t):
                i = self._rich_traceback(i)
                continue
            i = self._read_line(i)
        return self.blocks

    def _starts_traceback(self, i: int) -> bool:
        t = self.text(i)
        if TB_HEAD_RE.match(t) or FRAME_RE.match(t):
            return True
        if RAY_SECTION_RE.match(t) and i + 1 < len(self.logical) and FRAME_RE.match(self.text(i + 1)):
            return True
        # A wrapper such as RayTaskError(X): ray::Actor.method() followed by the frames it wraps.
        exc = _match_exception(t)
        if exc and exc.group("inner") and self._frames_follow(i + 1):
            return True
        # A paste that starts mid-traceback: indented code lines, then a frame.
        if t.startswith("  ") and t.strip():
            j = i + 1
            while j < len(self.logical) and j <= i + 3:
                nt = self.text(j)
                if FRAME_RE.match(nt):
                    return True
                if not (CARET_RE.match(nt) or nt.startswith("  ")):
                    return False
                j += 1
        return False

    def _read_traceback(self, start: int, relation: str) -> int:
        """1. Walk the frames, their source lines and carets, and wrappers that name the
        traceback they wrap (RayTaskError(X) with frames below it).
        2. At the exception line, record the traceback with it; at an exception line that lost
        its type under the last frame, with that line as its message.
        3. Cut before either: `_finish_cut` names it as best the paste allows."""
        n = len(self.logical)
        frames: list[Frame] = []
        wrappers: list[str] = []
        i = start
        # A traceback indented as a whole (a markdown code block, a quote in an email) is read
        # as if it were not: its exception line is as indented as its "Traceback" line.
        self.indent = self._traceback_indent(start)
        if TB_HEAD_RE.match(self.text(i)) or RAY_SECTION_RE.match(self.text(i)):
            i += 1
        last_frame_idx = start
        wrapped = ""  # the type a wrapper names, RayTaskError(X), when its own traceback follows
        while i < n:
            t = self.body(i)
            fm = FRAME_RE.match(t)
            if fm:
                func = (fm.group("func") or "").strip()
                frames.append(Frame(path=fm.group("path"), function=func, line=int(fm.group("line"))))
                last_frame_idx = i
                i += 1
                continue
            if not t.strip():
                # Blank lines inside a traceback only appear before its end; look past one.
                if i + 1 < n and FRAME_RE.match(self.text(i + 1)):
                    i += 1
                    continue
                break
            if CARET_RE.match(t) or t.strip() in ("[...]", "...") or RAY_SECTION_RE.match(t):
                i += 1
                continue
            exc = _match_exception(t)
            if exc and not t.startswith(" "):
                followed_by_frames = self._frames_follow(i + 1)
                if followed_by_frames:
                    wrappers.append(exc.group("type").rsplit(".", 1)[-1])
                    wrapped = exc.group("inner") or wrapped
                    i += 1
                    continue
                return self._finish_exception(start, i, exc, frames, wrappers, relation)
            if TB_HEAD_RE.match(t) or CHAIN_CAUSE_RE.match(t) or CHAIN_DURING_RE.match(t):
                break
            if t.startswith(" ") or i == last_frame_idx + 1:
                # source line under a frame
                i += 1
                continue
            if frames and i <= last_frame_idx + 2 and not LOG_LINE_RE.match(t.strip()):
                if self._untyped_exception(last_frame_idx, i):
                    return self._finish_untyped(start, i, frames, wrappers, relation)
                i += 1
                continue
            break
        self._finish_cut(start, i, frames, wrappers, last_frame_idx, wrapped)
        return max(i, start + 1)

    def _finish_cut(
        self, start: int, i: int, frames: list[Frame], wrappers: list[str], last_frame_idx: int, wrapped: str
    ) -> None:
        """A traceback cut before its exception line: named by the `raise X(...)` under its last
        frame or by the type a wrapper names; else, right under a logger's error line, it is that
        error's traceback; else it is recorded as truncated (frames only)."""
        end = max(start, i - 1)
        raised = self._raise_statement(last_frame_idx) if frames else None
        if not raised and frames and wrapped:
            raised = (wrapped, "")  # cut inside the wrapped traceback: its type is still known
        if raised:
            exc_type, message = raised
            self.blocks.append(
                ErrorBlock(
                    kind="traceback",
                    exc_type=exc_type,
                    message=message,
                    frames=tuple(frames),
                    line_start=self.lineno(start),
                    line_end=self.lineno(end),
                    wrappers=tuple(wrappers),
                    prefix=self.logical[start][2],
                )
            )
        elif frames and self._logged_just_before(start):
            # logger.exception()'s shape: the program's own error line, then the traceback. Cut
            # before its exception line, the traceback's failure is what that line says.
            logged = self.blocks.pop()
            self.blocks.append(
                replace(
                    logged,
                    kind="traceback",
                    frames=tuple(frames),
                    line_end=self.lineno(end),
                    wrappers=tuple(wrappers),
                    pattern="",
                    symptom=False,
                )
            )
        elif frames:
            self.blocks.append(
                ErrorBlock(
                    kind="truncated_traceback",
                    exc_type="",
                    message="",
                    frames=tuple(frames),
                    line_start=self.lineno(start),
                    line_end=self.lineno(end),
                    wrappers=tuple(wrappers),
                    prefix=self.logical[start][2],
                )
            )

    def _logged_just_before(self, start: int) -> bool:
        """Whether the block read last is an error line (a logger's, not a symptom) printed on the
        line right above `start`."""
        if not self.blocks or start == 0:
            return False
        last = self.blocks[-1]
        return (
            last.kind == "error_line"
            and last.pattern in ("log_error", "ci_error", "error_phrase")
            and last.line_end == self.lineno(start - 1)
            and not _is_symptom(last.message)
        )

    def _raise_statement(self, frame_idx: int) -> tuple[str, str] | None:
        """A traceback cut before its exception line still shows, under its last frame, the
        `raise X("message")` that failed: the type and the literal part of the message."""
        if frame_idx + 1 >= len(self.logical):
            return None
        m = RAISE_LINE_RE.match(self.text(frame_idx + 1))
        if not m:
            return None
        literal = " ".join(re.findall(r"""[frb]?["']([^"'{}]{3,})""", m.group("msg")))
        return (m.group("type"), literal.strip()) if _is_informative(literal) else None

    def _rich_traceback(self, start: int, limit: int = 400) -> int:
        """rich's boxed traceback: frames inside the box, the exception line under it."""
        n = len(self.logical)
        frames: list[Frame] = []
        j = start + 1
        while j < n and j < start + limit and not RICH_END_RE.match(self.text(j)):
            fm = RICH_FRAME_RE.match(self.text(j))
            if fm:
                frames.append(Frame(path=fm.group("path"), function=fm.group("func"), line=int(fm.group("line"))))
            j += 1
        k = j + 1
        while k < n and not self.text(k).strip():
            k += 1
        exc = _match_exception(self.text(k)) if k < n else None
        if exc is None or not frames:
            return start + 1  # read the lines on their own
        return self._finish_exception(start, k, exc, frames, [], "")

    def _traceback_indent(self, start: int) -> str:
        t = self.text(start)
        lead = t[: len(t) - len(t.lstrip())]
        if TB_HEAD_RE.match(t):
            return lead
        if FRAME_RE.match(t) and lead.endswith("  "):
            return lead[:-2]  # a frame sits two spaces under its "Traceback" line
        return ""

    def body(self, idx: int) -> str:
        """Line `idx` without the indentation of the traceback being read."""
        t = self.text(idx)
        return t[len(self.indent) :] if self.indent and t.startswith(self.indent) else t

    def _untyped_exception(self, frame_idx: int, i: int) -> bool:
        """Python prints the exception line right under the last frame's source line; when that
        line has lost its type (pytest's `E   cannot import name ...`, a paste cut mid-line) it
        is still the message."""
        if i != frame_idx + 2 or frame_idx + 1 >= len(self.logical):
            return False
        t, code = self.body(i), self.body(frame_idx + 1)
        return (
            code.startswith(" ")
            and not t.startswith(" ")
            and not CODE_LINE_RE.match(t)
            and not SHELL_LINE_RE.match(t)
            and not t.lstrip().startswith(("```", "#", "..."))
            and _is_informative(t)
            and self._continuation(i - 1, limit=1) > i  # not a line that never continues a message
        )

    def _finish_untyped(self, start: int, i: int, frames: list[Frame], wrappers: list[str], relation: str) -> int:
        end = self._continuation(i)
        message = " ".join(self.text(k).strip() for k in range(i, end))
        # Right under the frames, a capitalised name before a colon is the exception's type
        # whatever it is called (a warning raised as an error, a library's own class).
        named = re.match(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w+):\s+(?P<msg>\S.*)$", message)
        exc_type, message = (named.group("type"), named.group("msg")) if named else ("", message)
        self._add_exception(start, end, exc_type, message, frames, wrappers, relation, _is_symptom(self.text(i)))
        return end

    def _frames_follow(self, i: int) -> bool:
        n = len(self.logical)
        j = i
        while j < n and j <= i + 3:
            t = self.text(j)
            if FRAME_RE.match(t):
                return True
            if RAY_SECTION_RE.match(t) or CARET_RE.match(t) or not t.strip():
                j += 1
                continue
            return False
        return False

    def _continuation(self, i: int, limit: int = 8) -> int:
        """Index after the message lines that continue an exception line at `i`."""
        n = len(self.logical)
        j = i + 1
        while j < n and j <= i + limit:
            t = self.text(j)
            s = t.strip()
            if not s or self.levels[self.logical[j][0]] in ("INFO", "DEBUG"):
                break  # a logger's INFO line (its prefix taken off) is not part of the message
            if self.levels[self.logical[j][0]].lower() in CI_MARKS or s.startswith(("error:", "ERROR:", "note:")):
                break  # a CI runner's marker line, or a tool's next diagnostic
            if re.match(r"""^['"][\w./\-]+['"]\s*:""", s):
                break  # a line of a printed config
            if s == "[end of output]":
                break  # pip's frame around a failed build step's output
            if STAMP_RE.search(self.logical[j][2]) and not STAMP_RE.search(self.logical[i][2]):
                break  # a stamped log line after an unstamped exception line
            if (
                TB_HEAD_RE.match(t)
                or FRAME_RE.match(t)
                or CHAIN_CAUSE_RE.match(t)
                or CHAIN_DURING_RE.match(t)
                or LOG_LINE_RE.match(s)
                or _match_exception(t)
                or s.startswith("Set the environment variable HYDRA_FULL_ERROR")
                or SHELL_LINE_RE.match(s)
                or s.startswith(("{'", '{"', "```"))
                or TQDM_RE.search(s)
            ):
                break
            if _is_symptom(t) or any(
                rx.search(t)
                for name, rx in ERROR_LINE_PATTERNS
                if name not in ("cuda_error", "log_error", "error_phrase", "state_dict_mismatch")
            ):
                break
            j += 1
        return j

    def _finish_exception(
        self,
        start: int,
        i: int,
        exc: re.Match[str],
        frames: list[Frame],
        wrappers: list[str],
        relation: str,
    ) -> int:
        end = self._continuation(i)
        message = " ".join([exc.group("msg") or ""] + [self.text(k).strip() for k in range(i + 1, end)]).strip()
        exc_type = exc.group("type")
        inner = exc.group("inner")
        if inner and exc_type.rsplit(".", 1)[-1] in WRAPPER_TYPES:
            wrappers.append(exc_type.rsplit(".", 1)[-1])
            exc_type = inner
            if RAY_TASK_HEADER_RE.match(message):
                message = ""  # where the task ran, not what failed (the paste was cut before that)
        symptom = _is_symptom(self.text(i)) or exc_type.rsplit(".", 1)[-1] in WRAPPER_TYPES
        self._add_exception(start, end, exc_type, message, frames, wrappers, relation, symptom)
        return end

    def _add_exception(
        self,
        start: int,
        end: int,
        exc_type: str,
        message: str,
        frames: list[Frame],
        wrappers: list[str],
        relation: str,
        symptom: bool,
    ) -> None:
        """Record an exception read from line `start` to before `end`, chained to the block
        before it when `relation` says so."""
        chain_prev = len(self.blocks) - 1 if relation and self.blocks else None
        self.blocks.append(
            ErrorBlock(
                kind="traceback" if frames else "exception_line",
                exc_type=exc_type,
                message=message,
                frames=tuple(frames),
                line_start=self.lineno(start),
                line_end=self.lineno(end - 1),
                wrappers=tuple(wrappers),
                chain_prev=chain_prev,
                chain_relation=relation if chain_prev is not None else "",
                symptom=symptom,
                prefix=self.logical[start][2],
            )
        )

    def _read_line(self, i: int) -> int:
        """One line outside a traceback, read in order:
        1. an exception line (also behind a log header), a debugger's or a notebook's report;
        2. a metrics anomaly, a Python warning with its continuation, an HTTP error;
        3. unless the line is informational or source code: an error line, by pattern or by the
        level its logger or CI runner gave it, else a logged warning."""
        t = self.text(i)
        s = t.strip()
        if not s:
            return i + 1
        after = self._exception_at(i, t, s)
        if after is not None:
            return after
        metric = METRIC_RE.search(t)
        if metric:
            self._add_metric(i, metric.group(0))
            return i + 1
        wm = WARNING_RE.search(t)
        if wm:
            return self._python_warning(i, wm)
        http = HTTP_ERROR_RE.search(t)
        if http:
            self._add_error_line(i, "http_error", s)
            return i + 1
        level = self.levels[self.logical[i][0]]
        quiet = level in ("INFO", "DEBUG", "WARNING") or level in CI_QUIET or bool(QUIET_LINE_RE.match(s))
        if not (quiet or CODE_LINE_RE.match(t)):
            self._error_line(i, t, s, level)
        return i + 1

    def _exception_at(self, i: int, t: str, s: str) -> int | None:
        """Where reading goes on after the exception that line `i` opens, or None if it opens none."""
        exc = _match_exception(t) if not t.startswith("    ") else None
        if exc and (exc.group("msg") or exc.group("inner")):
            return self._finish_exception(i, i, exc, [], [], "")
        exc = _exception_after_header(s)
        if exc:
            return self._finish_exception(i, i, exc, [], [], "")
        dbg = DEBUGGER_EXC_RE.match(t)
        if dbg:
            return self._debugger_exception(i, dbg.group("type"))
        ipy = IPYTHON_HEAD_RE.match(t)
        if ipy:
            return self._ipython_traceback(i, ipy.group("type"))
        return None

    def _python_warning(self, i: int, wm: re.Match[str]) -> int:
        end = self._continuation(i, limit=3)
        msg = " ".join([wm.group("msg")] + [self.text(k).strip() for k in range(i + 1, end)]).strip()
        self._add_frameless(i, end, "warning", wm.group("type"), msg)
        return max(end, i + 1)

    def _add_frameless(self, i: int, end: int, kind: str, exc_type: str, message: str) -> None:
        """A block without frames from line `i` up to (not including) `end`: its message may go on
        below its first line."""
        self.blocks.append(
            ErrorBlock(
                kind=kind,
                exc_type=exc_type,
                message=message,
                frames=(),
                line_start=self.lineno(i),
                line_end=self.lineno(max(i, end - 1)),
                prefix=self.logical[i][2],
            )
        )

    def _error_line(self, i: int, t: str, s: str, level: str) -> None:
        """A line that is neither informational nor code: argparse's error, an error line a
        pattern names, a line the CI runner or the logger marked as an error, or a logged warning."""
        am = ARGPARSE_RE.match(s)
        if am and not LOG_LINE_RE.match(s):
            self._add_error_line(i, "argparse_error", s)
            return
        # One pass says whether any pattern can match (most lines of a log match none).
        for name, rx in ERROR_LINE_PATTERNS if ANY_ERROR_LINE_RE.search(t) else ():
            m = rx.search(t)
            if m:
                if name == "log_error" and re.search(r"\b(?:0 errors?|no errors?|errors?=0)\b", t, re.I):
                    continue
                self._add_error_line(i, name, s, identity(name, m, s))
                return
        if level == "error":  # the CI runner marked it ("##[error]…", "::error::…")
            self._add_error_line(i, "ci_error", s)
            return
        if level in ("ERROR", "CRITICAL", "FATAL"):  # the logger said so, in words no pattern knows
            self._add_error_line(i, "log_error", s)
            return
        if re.match(r"^\s*(?:\[?WARN(?:ING)?\]?|\[WARNING[:\]])", s) or re.search(r"\bWARN(?:ING)?\b", s[:40]):
            self._add_frameless(i, i + 1, "warning", "", s)

    def _ipython_traceback(self, i: int, exc_type: str, limit: int = 80) -> int:
        """A notebook's traceback: its cells are not Python frames. When its own closing
        `Type: message` line follows, that line is read as usual; a paste cut before it is named
        by the `----> raise Type("…")` arrow line of its last cell."""
        n = len(self.logical)
        short = exc_type.rsplit(".", 1)[-1]
        raised: tuple[int, str] | None = None
        for j in range(i + 1, min(n, i + limit)):
            t = self.text(j)
            exc = _match_exception(t)
            if exc and exc.group("type").rsplit(".", 1)[-1] == short and not t.startswith(" "):
                return i + 1
            m = RAISE_LINE_RE.match(t)
            if m and m.group("type").rsplit(".", 1)[-1] == short:
                literal = " ".join(re.findall(r"""[frb]?["']([^"'{}]{3,})""", m.group("msg")))
                raised = (j, literal.strip())
        if raised is None or not _is_informative(raised[1]):
            return i + 1
        self.blocks.append(
            ErrorBlock(
                kind="exception_line",
                exc_type=exc_type,
                message=raised[1],
                frames=(),
                line_start=self.lineno(i),
                line_end=self.lineno(raised[0]),
                prefix=self.logical[i][2],
            )
        )
        return raised[0] + 1

    def _debugger_exception(self, i: int, exc_type: str) -> int:
        """ "Exception has occurred: ValueError" with the message on the lines below it."""
        end = self._continuation(i)
        message = " ".join(self.text(k).strip() for k in range(i + 1, end)).strip()
        self._add_frameless(i, end, "exception_line", exc_type, message)
        return max(end, i + 1)

    def _add_error_line(self, i: int, pattern: str, text: str, message: str = "") -> None:
        self.blocks.append(
            ErrorBlock(
                kind="error_line",
                exc_type="",
                message=message or text,
                frames=(),
                line_start=self.lineno(i),
                line_end=self.lineno(i),
                pattern=pattern,
                symptom=_is_symptom(text) or pattern in SYMPTOM_PATTERNS,
                prefix=self.logical[i][2],
            )
        )

    def _add_metric(self, i: int, text: str) -> None:
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
        self.blocks.append(
            ErrorBlock(
                kind="metric",
                exc_type="",
                message=f"{METRIC_DESCRIPTIONS[pattern]} ({shown})",
                frames=(),
                line_start=self.lineno(i),
                line_end=self.lineno(i),
                pattern=pattern,
                metrics=tuple(sorted(values.items())),
                prefix=self.logical[i][2],
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


# Line levels set by CI markers (GitHub Actions' "##[group]", "::error::"...): lowercase.
CI_MARKS = frozenset({"error", "warning", "notice", "debug", "group", "endgroup", "command", "section"})
CI_QUIET = frozenset({"notice", "debug", "group", "endgroup", "command", "section"})

# Error lines that report that something else failed: a step's exit code, a build tool giving up,
# a generic log error. They rank below the error that explains them.
SYMPTOM_PATTERNS = frozenset({"http_error", "log_error", "error_phrase", "build_failed", "exit_code"})


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
    if _match_exception(t):
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
    if CODE_LINE_RE.match(t):
        return bool(ARGPARSE_RE.match(s))
    return bool(ANY_ERROR_LINE_RE.search(t)) or bool(ARGPARSE_RE.match(s)) or bool(_exception_after_header(s))


def scan_log(text: str, offset: int = 0) -> tuple[ErrorBlock, ...]:
    """All error blocks in `text`, in order, with line numbers shifted by `offset`."""
    lines = text.splitlines()
    return tuple(_Scanner(lines, offset).run())
