"""The log as the scanner's readers share it: its cleaned lines, split where frames were squashed
onto one line, their numbers and levels, and the blocks found so far.

A reader (in `kb.tracebacks`, `kb.exceptionlines`, `kb.errorlines`) takes the `ScanState` and the
index of the logical line it starts at, appends what it finds to `blocks`, and returns the index
where reading goes on.
"""

from __future__ import annotations

from kb.errorblock import ErrorBlock
from kb.logclean import clean_line, split_squashed_frames


class ScanState:
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

    def body(self, idx: int) -> str:
        """Line `idx` without the indentation of the traceback being read."""
        t = self.text(idx)
        return t[len(self.indent) :] if self.indent and t.startswith(self.indent) else t
