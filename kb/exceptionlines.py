"""Exception lines: `Type: message` (also quoted in prose, or behind a log header of unknown format),
the lines below it that continue its message, and the block it records, whether it ends a
traceback or stands on its own.

Shared by the traceback readers (`kb.tracebacks`) and the single-line readers (`kb.errorlines`).
"""

from __future__ import annotations

import re

from kb.errorblock import ErrorBlock, Frame
from kb.logclean import process_tag, quoted_as_code
from kb.logpatterns import (
    CHAIN_CAUSE_RE,
    CHAIN_DURING_RE,
    CI_MARKS,
    ERROR_LINE_PATTERNS,
    EXC_RE,
    FRAME_RE,
    HUB_REQUEST_ID_RE,
    LOG_HEADER_END_RE,
    LOG_HEADER_MARK_RE,
    LOG_HEADER_TOKENS,
    LOG_LINE_RE,
    LOWER_LEVEL_HEAD_RE,
    MODULE_EXC_RE,
    RAY_TASK_HEADER_RE,
    SHELL_LINE_RE,
    STAMPED_RE,
    SYMPTOM_RES,
    TB_HEAD_RE,
    TQDM_RE,
    WRAPPER_TYPES,
)
from kb.scanstate import ScanState


def match_exception(text: str, module_named: bool = False) -> re.Match[str] | None:
    """The exception a line states (`Type: message`), or None. With `module_named`, also a class
    named with its module whatever its name ends in (logpatterns.MODULE_EXC_RE), for the places
    where only an exception can stand."""
    stripped = text.strip()
    if stripped[:1] in ('"', "'") and stripped[1:2].isupper():
        # an error quoted in a report: "ValueError: The model did not return a loss ..."
        stripped = stripped[1:].removesuffix(stripped[0]).rstrip()
    m = EXC_RE.match(stripped)
    if not m:
        return MODULE_EXC_RE.match(stripped) if module_named else None
    bare = m.group("colon") is None and m.group("inner") is None
    # A bare name only counts when it is an unmistakable exception class.
    if bare and (not re.search(r"(?:Error|Exception|Interrupt|Exit)$", m.group("type")) or " " in stripped):
        return None
    return m


def exception_after_header(text: str) -> re.Match[str] | None:
    """An exception line behind a log header the prefixes do not know: a clock time or a level
    word within the first few tokens, then `Type: message`."""
    lower = LOWER_LEVEL_HEAD_RE.match(text)
    if lower:  # the lower-case level word alone is the header
        exc = match_exception(text[lower.end() :])
        if exc and exc.group("msg"):
            return exc
    if not LOG_HEADER_MARK_RE.search(text[:120]):
        return None
    for m in re.finditer(r"\s+", text[:200]):
        words = text[: m.start()].split()
        if len(words) > LOG_HEADER_TOKENS:
            return None
        if not words or not LOG_HEADER_MARK_RE.search(text[: m.start()]) or not LOG_HEADER_END_RE.search(words[-1]):
            continue
        exc = match_exception(text[m.end() :])
        if exc and exc.group("msg"):
            return exc
    return None


def is_symptom(text: str) -> bool:
    return any(rx.search(text) for rx in SYMPTOM_RES)


def continuation(scan: ScanState, i: int, limit: int = 8) -> int:
    """Index after the message lines that continue an exception line at `i`."""
    n = len(scan.logical)
    if quoted_as_code(scan.logical[i][2]) and scan.raw[scan.logical[i][0]].rstrip().endswith("`"):
        return i + 1  # an error quoted inline ("`IndexError: index out of range in self`") ends with its quote
    tag = process_tag(scan.logical[i][2])
    j = i + 1
    if j + 1 < n and not scan.text(j).strip() and _ends_with_hub_request_id(scan.text(i)):
        # The Hub's HTTP errors put what failed (a repository, a revision, a file, a gated repo: what
        # tells them apart) under a blank line after the request id that ends their first line.
        j += 1
    first = j
    while j < n and j <= i + limit:
        t = scan.text(j)
        s = t.strip()
        if not s or scan.levels[scan.logical[j][0]] in ("INFO", "DEBUG"):
            break  # a logger's INFO line (its prefix taken off) is not part of the message
        if scan.levels[scan.logical[j][0]].lower() in CI_MARKS or s.startswith(("error:", "ERROR:", "note:")):
            break  # a CI runner's marker line, or a tool's next diagnostic
        if re.match(r"""^['"][\w./\-]+['"]\s*:""", s):
            break  # a line of a printed config
        if s == "[end of output]":
            break  # pip's frame around a failed build step's output
        if STAMPED_RE.search(scan.logical[j][2]) and not STAMPED_RE.search(scan.logical[i][2]):
            break  # a stamped log line after an unstamped exception line
        if tag and process_tag(scan.logical[j][2]) != tag:
            break  # Ray and torchrun tag every line a worker prints: a line tagged otherwise is another stream's
        if (
            TB_HEAD_RE.match(t)
            or FRAME_RE.match(t)
            or CHAIN_CAUSE_RE.match(t)
            or CHAIN_DURING_RE.match(t)
            or LOG_LINE_RE.match(s)
            or match_exception(t, module_named=True)
            or s.startswith("Set the environment variable HYDRA_FULL_ERROR")
            or SHELL_LINE_RE.match(s)
            or s.startswith(("{'", '{"', "```"))
            or TQDM_RE.search(s)
        ):
            break
        if is_symptom(t) or any(
            rx.search(t)
            for name, rx in ERROR_LINE_PATTERNS
            if name not in ("cuda_error", "log_error", "error_phrase", "state_dict_mismatch", "validation_error")
        ):
            break
        j += 1
    return j if j > first else i + 1


def _ends_with_hub_request_id(text: str) -> bool:
    line = text.rstrip()
    m = HUB_REQUEST_ID_RE.search(line, max(0, len(line) - 220))
    return m is not None and m.end() == len(line)


def _message(scan: ScanState, i: int, exc: re.Match[str]) -> tuple[int, str]:
    """Where the exception line at `i` ends (its continuation lines included) and its whole message."""
    end = continuation(scan, i)
    return end, " ".join([exc.group("msg") or ""] + [scan.text(k).strip() for k in range(i + 1, end)]).strip()


def _wrapped_on_next_line(scan: ScanState, i: int, end: int, message: str) -> re.Match[str] | None:
    """The exception on the line after an exception line at `i` whose message ends with a colon
    (and has no continuation): the one it introduces."""
    if end != i + 1 or end >= len(scan.logical) or not message.endswith(":"):
        return None
    exc = match_exception(scan.text(end))
    return exc if exc and exc.group("colon") and exc.group("msg") else None


def finish_exception(
    scan: ScanState,
    start: int,
    i: int,
    exc: re.Match[str],
    frames: list[Frame],
    wrappers: list[str],
    relation: str,
) -> int:
    end, message = _message(scan, i, exc)
    wrapped = _wrapped_on_next_line(scan, i, end, message)
    if wrapped:
        # A wrapper whose message ends by introducing the exception it wraps, on the next line
        # (torch.compile's `BackendCompilerFailed: backend='inductor' raised:`): that one failed.
        wrappers.append(exc.group("type").rsplit(".", 1)[-1])
        exc, i = wrapped, end
        end, message = _message(scan, i, exc)
    exc_type = exc.group("type")
    inner = exc.group("inner")
    if inner and exc_type.rsplit(".", 1)[-1] in WRAPPER_TYPES:
        wrappers.append(exc_type.rsplit(".", 1)[-1])
        exc_type = inner
        if RAY_TASK_HEADER_RE.match(message):
            message = ""  # where the task ran, not what failed (the paste was cut before that)
    symptom = is_symptom(scan.text(i)) or exc_type.rsplit(".", 1)[-1] in WRAPPER_TYPES
    add_exception(scan, start, end, exc_type, message, frames, wrappers, relation, symptom)
    return end


def add_exception(
    scan: ScanState,
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
    chain_prev = len(scan.blocks) - 1 if relation and scan.blocks else None
    scan.blocks.append(
        ErrorBlock(
            kind="traceback" if frames else "exception_line",
            exc_type=exc_type,
            message=message,
            frames=tuple(frames),
            line_start=scan.lineno(start),
            line_end=scan.end_lineno(end - 1),
            wrappers=tuple(wrappers),
            chain_prev=chain_prev,
            chain_relation=relation if chain_prev is not None else "",
            symptom=symptom,
            prefix=scan.logical[start][2],
        )
    )
