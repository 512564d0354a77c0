"""What the log scanner finds: an `ErrorBlock` for each error, with the `Frame`s of its traceback.

In a module of their own so that the scanner's readers (`kb.tracebacks`, `kb.exceptionlines`,
`kb.errorlines`) build them without importing `kb.logscan`, which calls those readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    # An exception line on its own that is less sure than others: a class named with its module
    # whose name need not end in Error (a logger prints that shape too), or a class alone on its
    # line with no message. It is a root only when nothing surer is there.
    weak: bool = False
    # An exception a sentence names ("…it fails with `ValueError: …`"): as sure as a generic error line.
    from_prose: bool = False
    # An exception a logger printed as its repr (`AssertionError('…')`): a summary, which the
    # traceback it prints under it outranks.
    from_repr: bool = False
    prefix: str = ""
    metrics: tuple[tuple[str, float], ...] = field(default=())

    @property
    def short_type(self) -> str:
        return self.exc_type.rsplit(".", 1)[-1]
