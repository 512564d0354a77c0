"""Scan logs of any size in bounded memory.

A multi-gigabyte training log is mostly healthy output. It is read in chunks of bytes; a cheap
trigger search finds the lines that could belong to a failure, and only windows of lines around
them are decoded and handed to the full scanner. Memory stays at a couple of chunks whatever
the file size; line numbers stay exact.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from kb.logclean import MAX_LINE
from kb.logscan import ErrorBlock, line_may_start_failure, scan_log
from kb.trigger_search import compile_trigger

# Literal words one of which every line that can start a failure contains; each hit is then
# confirmed by the scanner's own single-line check (kb.logscan.line_may_start_failure) before the
# lines around it are scanned, so healthy lines with error-ish words cost one cheap look.
TRIGGER_PATTERN = (
    rb"Traceback|File \"|Error|ERROR|error|Exception|FATAL|Fatal|Killed|command not found|No space left|"
    rb"out of memory|Segmentation fault|Bus error|core dumped|SIG[A-Z]{3,4}|Signal 9|Watchdog|NCCL WARN|NCCL|"
    rb"exitcode|Aborted|Failure|Fault|Died|Interrupt|StopIteration|failed|Warning|WARN|oom|OOM|requires |"
    rb"FAIL|Timeout|canceled|exceeded the maximum|shutdown signal|took longer|fatal:|pathspec|manifest|denied|"
    rb"toomanyrequests|credentials|Credentials|ExpiredToken|InvalidAccessKeyId|SignatureDoesNotMatch|"
    rb"security token|rate limit|Too Many Requests|ninja: build stopped|exit code|exit status|\.py:\d+:\d+: [A-Z]|"
    rb"ld: cannot find|undefined reference|HW Exception|GPU Hang|would reformat|touching the log file|"
    rb"Agent went offline|ChannelClosed|CRITICAL|size mismatch for|key\(s\) in state_dict|"
    rb"ray::|\xe5\x8f\x91\xe7\x94\x9f\xe5\xbc\x82\xe5\xb8\xb8|"  # 发生异常
    rb"HTTP/[\d.]+\" [45]\d\d|"
    rb"[a-z0-9_]\.[A-Z]\w*: |"  # an exception named with its module (pyarrow.lib.ArrowInvalid: ...)
    rb",\d{3} [EF] \d+ \d+\] |[EF]\d{4} \d\d:\d\d:\d\d\.|"  # glog's error and fatal severities
    rb"'(?:loss|reward_std|frac_reward_zero_std|completions/clipped_ratio)': '?(?:0\.0\b|0[,}]|0\.9|1\.0|1[,}])"
)


TRIGGER_RE = compile_trigger(TRIGGER_PATTERN)
CHUNK_BYTES = 8 << 20
BEFORE = 3
AFTER = 40
MAX_WINDOW_LINES = 5000


@dataclass(frozen=True)
class Window:
    first_line: int  # 1-based number of the window's first line in the whole file
    text: str


def open_log(path: Path) -> BinaryIO:
    """The file's bytes, transparently decompressed when it is gzip."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return cast(BinaryIO, gzip.open(path, "rb"))
    return open(path, "rb")


def _windows_in(work: bytes) -> list[tuple[int, int, int, int]]:
    """(first line, last line, first byte, end byte) of merged windows around trigger lines."""
    out: list[tuple[int, int, int, int]] = []
    line = 0
    pos = 0
    cluster: list[int] | None = None  # [first_hit_line, last_hit_line, first_hit_line_start_byte, last_hit_end_byte]
    size = len(work)

    def close(c: list[int]) -> None:
        start_byte = c[2]
        for _ in range(BEFORE):
            if start_byte == 0:
                break
            start_byte = work.rfind(b"\n", 0, start_byte - 1) + 1
        first_line = c[0] - min(BEFORE, c[0])
        end_byte = c[3]
        last_line = c[1]
        for _ in range(AFTER):
            if end_byte >= size:
                break
            nxt = work.find(b"\n", end_byte)
            end_byte = size if nxt == -1 else nxt + 1
            last_line += 1
        out.append((first_line, last_line, start_byte, end_byte))

    for m in TRIGGER_RE.finditer(work):
        off = m.start()
        if off < pos:
            continue
        line += work.count(b"\n", pos, off)
        line_start = work.rfind(b"\n", 0, off) + 1
        nl = work.find(b"\n", off)
        line_end = size if nl == -1 else nl + 1
        long_line = line_end - line_start > MAX_LINE  # the check reads a line's start; keep these
        if not long_line and not line_may_start_failure(work[line_start:line_end].decode("utf-8", errors="replace")):
            pos = line_end
            line += 1
            continue
        if cluster is not None and line > cluster[1] + AFTER:
            close(cluster)
            cluster = None
        if cluster is None:
            cluster = [line, line, line_start, line_end]
        else:
            cluster[1], cluster[3] = line, line_end
        pos = line_end
        line += 1
    if cluster is not None:
        close(cluster)
    return out


def iter_windows(stream: BinaryIO, encoding: str = "utf-8", chunk_bytes: int = CHUNK_BYTES) -> Iterator[Window]:
    carry = b""
    carry_line0 = 0  # 0-based line number of carry's first line
    while True:
        data = stream.read(chunk_bytes)
        eof = not data
        buf = carry + data
        if eof:
            work, rest = buf, b""
        else:
            cut = buf.rfind(b"\n") + 1
            if cut == 0 and len(buf) <= 4 * chunk_bytes:
                carry = buf
                continue
            if cut == 0:
                cut = len(buf)  # a line longer than four chunks is cut rather than held whole
            work, rest = buf[:cut], buf[cut:]
        windows = _windows_in(work)
        n_lines = work.count(b"\n") + (0 if not work or work.endswith(b"\n") else 1)
        deferred = None
        if not eof and windows and windows[-1][3] >= len(work):
            deferred = windows.pop()
        for first, _last, b0, b1 in windows:
            yield Window(carry_line0 + first + 1, work[b0:b1].decode(encoding, errors="replace"))
        if eof:
            return
        if deferred is not None and n_lines - deferred[0] <= MAX_WINDOW_LINES:
            keep_line, keep_byte = deferred[0], deferred[2]
        else:
            if deferred is not None:  # an endless window: emit what we have and move on
                yield Window(carry_line0 + deferred[0] + 1, work[deferred[2] :].decode(encoding, errors="replace"))
            keep_byte = len(work)
            keep_line = n_lines
            for _ in range(BEFORE):
                if keep_byte == 0:
                    break
                keep_byte = work.rfind(b"\n", 0, keep_byte - 1) + 1
                keep_line -= 1
        carry = work[keep_byte:] + rest
        carry_line0 += keep_line


def scan_stream(stream: BinaryIO, encoding: str = "utf-8") -> Iterator[ErrorBlock]:
    """Error blocks of a whole log, with line numbers of the whole file."""
    for window in iter_windows(stream, encoding):
        yield from scan_log(window.text, offset=window.first_line - 1)
