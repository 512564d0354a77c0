"""Find error blocks in a log: tracebacks (chained, Ray-wrapped, rank-prefixed) and error lines.

Pure Python, no Django. Input is text; output is a tuple of frozen `ErrorBlock`s with 1-based
line spans relative to the text that was scanned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ANSI_RE = re.compile(r"(?:\x1b)?\[\d{1,3}(?:;\d{1,3})*m|\x1b\[[0-9;?]*[A-Za-z]")
TQDM_RE = re.compile(r"[^\n|]{0,40}\d{1,3}%\|[^|\n]{0,200}\|\s*[\d.]+[kM]?/[\d.?]+[kM]?\s*\[[^\]\n]{0,80}\]")

# Prefixes that launchers, Ray, torchrun, docker compose and NCCL put in front of every line.
PREFIX_RES = (
    re.compile(r"^\[rank\d+\]:\s?"),
    re.compile(r"^\[default\d+\]:\s?"),
    re.compile(r"^\((?:[\w.\-]+\s+)?(?:[\w.\-]+=[^\s,)]+[,\s]+)*pid=\d+[^)]{0,80}\)\s?"),
    re.compile(r"^[\w.-]+-\d+\s+\|\s"),
    re.compile(r"^(?P<level>ERROR|INFO|WARNING|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[?[\w./-]+:\d+\]\s"),
    re.compile(r"^[\w.-]+:\d+:\d+ \[\d+\] "),
)

FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+?))?\s*$')
CARET_RE = re.compile(r"^\s*[\^~]+\s*$")
TB_HEAD_RE = re.compile(r"^\s*Traceback \(most recent call last\):\s*(?P<rest>.*)$")
CHAIN_CAUSE_RE = re.compile(r"^\s*The above exception was the direct cause of the following exception")
CHAIN_DURING_RE = re.compile(r"^\s*During handling of the above exception, another exception occurred")
RAY_SECTION_RE = re.compile(r"^\s*ray::[\w.]+\(\)")
EXC_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*"
    r"(?:[A-Za-z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Died)|Exception|KeyboardInterrupt|StopIteration))"
    r"(?:\((?P<inner>[\w.]+)\))?"
    r"(?:(?P<colon>:)\s*(?P<msg>.*))?$"
)
WARNING_RE = re.compile(r"(?P<path>\S+\.py):\d+: (?P<type>\w*Warning): (?P<msg>.*)$")
ARGPARSE_RE = re.compile(r"^(?P<prog>[\w .-]{1,40}): error: (?P<msg>.+)$")
LOG_LINE_RE = re.compile(
    r"^(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d\d:\d\d:\d\d\]|\[?(?:INFO|WARNING|WARN|DEBUG|ERROR)\b|\[(?:INFO|WARNING|ERROR):|\d{1,3}%\||"
    r"INFO:|WARNING:|DEBUG:)"
)

# Error lines that are not Python exceptions; the name says what kind of failure it is.
ERROR_LINE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cuda_oom", re.compile(r"CUDA out of memory", re.I)),
    ("command_not_found", re.compile(r":\s*(?:line \d+:\s*)?\S+: command not found\s*$")),
    ("nccl_warn", re.compile(r"\bNCCL WARN\b\s*(?P<msg>.*)")),
    ("nccl_error", re.compile(r"\bNCCL (?:error|ERROR)\b(?P<msg>.*)")),
    ("disk_full", re.compile(r"No space left on device", re.I)),
    ("host_oom", re.compile(r"\b(?:Out of memory: Killed process|oom-kill|OOM killer|running low on memory)\b", re.I)),
    ("segfault", re.compile(r"\b(?:Segmentation fault|Bus error|core dumped|SIGSEGV|SIGKILL|SIGABRT)\b")),
    ("watchdog_timeout", re.compile(r"Watchdog caught collective operation timeout", re.I)),
    ("dependency_conflict", re.compile(r"\brequires \S+, but you have\b")),
    ("cuda_error", re.compile(r"\bCUDA error\b|\bcudaError\w*|\bCUBLAS_STATUS_\w+|\bcuda runtime error\b")),
    ("log_error", re.compile(r"(?:^|[\s\[(])(?:ERROR|FATAL|CRITICAL|Error)(?::|\]|\s{2,}|\s(?=\w))")),
    (
        "error_phrase",
        re.compile(
            r"\b(?:has no attribute|not found|cannot|can't|could not|couldn't|failed|must be|not supported|"
            r"does not (?:have|exist|match|support)|did not match|invalid|unable to|no module named|incompatible|"
            r"timed out|connection refused|permission denied|out of memory)\b",
            re.I,
        ),
    ),
)

SHELL_LINE_RE = re.compile(r"^(?:\+ |\$ |# |\(\w+\) \S+@|\S+@\S+:.*[#$] )")
HTTP_ERROR_RE = re.compile(r'"(?:GET|POST|PUT|DELETE|PATCH) \S+ HTTP/[\d.]+" (?P<status>[45]\d\d)\b')

SYMPTOM_RES = (
    re.compile(r"Server \d+ failed: 5\d\d"),
    re.compile(r"Exception in ASGI application"),
    re.compile(r"Method execution failed"),
    re.compile(r"'NoneType' object is not (?:iterable|subscriptable)"),
    re.compile(r"ChildFailedError|ActorDiedError|WorkerCrashedError|RaySystemError"),
    re.compile(r"failed \(exitcode: \d+\)"),
    re.compile(r"Sending process \d+ closing signal"),
    re.compile(r"Error executing job with overrides"),
)
WRAPPER_TYPES = frozenset({"RayTaskError", "RayActorError", "ChildFailedError", "ActorDiedError"})
# Informational lines and source code: error words in them ("cannot be used", "invalid") are not errors.
QUIET_LINE_RE = re.compile(
    r"^(?:\[?(?:INFO|DEBUG|WARNING|WARN)\b|\[(?:INFO|DEBUG|WARNING):|(?:INFO|DEBUG|WARNING):|wandb: )"
)
CODE_LINE_RE = re.compile(
    r"^\s*(?:raise|return|print|def|class|elif|else|for|while|try|except|import|from|with|assert|if)\b(?!:)"
    r"|^\s*(?:#|//|>>>)|[=(,\[]\s*$"
)
METRIC_RE = re.compile(r"\{[^{}]*'(?:loss|reward|reward_std|grad_norm)'\s*:[^{}]*\}")
METRIC_KV_RE = re.compile(r"'(?P<key>[\w/()\-.]+)'\s*:\s*'?(?P<val>-?[\d.]+(?:e-?\d+)?)'?")


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


@dataclass(frozen=True)
class CleanLine:
    text: str  # without ANSI codes, progress bars and launcher prefixes
    prefix: str
    level: str = ""  # log level taken off with a prefix (vLLM's "WARNING 08-10 21:22:23 file.py:12]")


def clean_line(raw: str) -> CleanLine:
    text = raw
    if "\r" in text:
        text = text.rsplit("\r", 1)[-1] or text.replace("\r", "")
    text = ANSI_RE.sub("", text)
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
    return CleanLine(text=text.rstrip(), prefix=" ".join(prefix_parts), level=level)


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


def _is_informative(msg: str) -> bool:
    return len(re.findall(r"[A-Za-z\u4e00-\u9fff]{2,}", msg)) >= 2


def _match_exception(text: str) -> re.Match[str] | None:
    stripped = text.strip()
    m = EXC_RE.match(stripped)
    if not m:
        return None
    bare = m.group("colon") is None and m.group("inner") is None
    # A bare name only counts when it is an unmistakable exception class.
    if bare and (not re.search(r"(?:Error|Exception|Interrupt|Exit)$", m.group("type")) or " " in stripped):
        return None
    return m


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
            if t.strip() and not t.startswith(" "):
                pass
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
        n = len(self.logical)
        frames: list[Frame] = []
        wrappers: list[str] = []
        i = start
        if TB_HEAD_RE.match(self.text(i)) or RAY_SECTION_RE.match(self.text(i)):
            i += 1
        last_frame_idx = start
        while i < n:
            t = self.text(i)
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
                i += 1
                continue
            break
        end = max(start, i - 1)
        if frames:
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
        return max(i, start + 1)

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
            if not s:
                break
            if (
                TB_HEAD_RE.match(t)
                or FRAME_RE.match(t)
                or CHAIN_CAUSE_RE.match(t)
                or CHAIN_DURING_RE.match(t)
                or LOG_LINE_RE.match(s)
                or _match_exception(t)
                or s.startswith("Set the environment variable HYDRA_FULL_ERROR")
                or SHELL_LINE_RE.match(s)
                or s.startswith(("{'", '{"'))
                or TQDM_RE.search(s)
            ):
                break
            if _is_symptom(t) or any(
                rx.search(t)
                for name, rx in ERROR_LINE_PATTERNS
                if name not in ("cuda_error", "log_error", "error_phrase")
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
                symptom=_is_symptom(self.text(i)) or exc_type.rsplit(".", 1)[-1] in WRAPPER_TYPES,
                prefix=self.logical[start][2],
            )
        )
        return end

    def _read_line(self, i: int) -> int:
        t = self.text(i)
        s = t.strip()
        if not s:
            return i + 1
        exc = _match_exception(t) if not t.startswith("    ") else None
        if exc and (exc.group("msg") or exc.group("inner")):
            return self._finish_exception(i, i, exc, [], [], "")
        metric = METRIC_RE.search(t)
        if metric:
            self._add_metric(i, metric.group(0))
            return i + 1
        wm = WARNING_RE.search(t)
        if wm:
            end = self._continuation(i, limit=3)
            msg = " ".join([wm.group("msg")] + [self.text(k).strip() for k in range(i + 1, end)]).strip()
            self.blocks.append(
                ErrorBlock(
                    kind="warning",
                    exc_type=wm.group("type"),
                    message=msg,
                    frames=(),
                    line_start=self.lineno(i),
                    line_end=self.lineno(max(i, end - 1)),
                    prefix=self.logical[i][2],
                )
            )
            return max(end, i + 1)
        http = HTTP_ERROR_RE.search(t)
        if http:
            self._add_error_line(i, "http_error", s)
            return i + 1
        quiet = self.levels[self.logical[i][0]] in ("INFO", "DEBUG", "WARNING") or bool(QUIET_LINE_RE.match(s))
        if quiet or CODE_LINE_RE.match(t):
            return i + 1
        am = ARGPARSE_RE.match(s)
        if am and not LOG_LINE_RE.match(s):
            self._add_error_line(i, "argparse_error", s)
            return i + 1
        for name, rx in ERROR_LINE_PATTERNS:
            if rx.search(t):
                if name == "log_error" and re.search(r"\b(?:0 errors?|no errors?|errors?=0)\b", t, re.I):
                    continue
                self._add_error_line(i, name, s)
                return i + 1
        if re.match(r"^\s*(?:\[?WARN(?:ING)?\]?|\[WARNING[:\]])", s) or re.search(r"\bWARN(?:ING)?\b", s[:40]):
            self.blocks.append(
                ErrorBlock(
                    kind="warning",
                    exc_type="",
                    message=s,
                    frames=(),
                    line_start=self.lineno(i),
                    line_end=self.lineno(i),
                    prefix=self.logical[i][2],
                )
            )
        return i + 1

    def _add_error_line(self, i: int, pattern: str, text: str) -> None:
        self.blocks.append(
            ErrorBlock(
                kind="error_line",
                exc_type="",
                message=text,
                frames=(),
                line_start=self.lineno(i),
                line_end=self.lineno(i),
                pattern=pattern,
                symptom=_is_symptom(text) or pattern in ("http_error", "log_error", "error_phrase"),
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


METRIC_DESCRIPTIONS = {
    "no_learning_signal": "No learning signal: reward std is zero in every group, loss and grad norm stay zero",
    "completions_clipped": "Completions clipped: almost every completion is cut at the maximum completion length",
    "grpo_zero_loss_expected": "GRPO loss is zero at the start while rewards vary: expected, not a bug",
}
METRIC_KEYS = {
    "no_learning_signal": ("reward_std", "frac_reward_zero_std", "loss", "grad_norm"),
    "completions_clipped": ("completions/clipped_ratio", "completions/mean_length"),
    "grpo_zero_loss_expected": ("loss", "reward_std"),
}


def metric_anomaly(values: dict[str, float]) -> str:
    """Name the failure a metrics line shows, or "" when it looks healthy.

    GRPO/PPO failures that print no error: no learning signal (every group has identical
    rewards), every completion cut at max length, and the expected loss of 0 at the start of
    GRPO (reported so the user learns it is not a bug).
    """
    std = values.get("reward_std")
    frac_zero = values.get("frac_reward_zero_std")
    loss = values.get("loss")
    grad = values.get("grad_norm")
    clipped = values.get("completions/clipped_ratio")
    if (frac_zero is not None and frac_zero >= 0.99) or (std is not None and std == 0.0 and grad == 0.0):
        return "no_learning_signal"
    if clipped is not None and clipped >= 0.9:
        return "completions_clipped"
    if loss is not None and loss == 0.0 and std is not None and std > 0.0:
        return "grpo_zero_loss_expected"
    return ""


def scan_log(text: str, offset: int = 0) -> tuple[ErrorBlock, ...]:
    """All error blocks in `text`, in order, with line numbers shifted by `offset`."""
    lines = text.splitlines()
    return tuple(_Scanner(lines, offset).run())
