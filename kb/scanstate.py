"""The log as the scanner's readers share it: its cleaned lines, split where frames were squashed
onto one line, their numbers and levels, and the blocks found so far.

A reader (in `kb.tracebacks`, `kb.exceptionlines`, `kb.errorlines`) takes the `ScanState` and the
index of the logical line it starts at, appends what it finds to `blocks`, and returns the index
where reading goes on.
"""

from __future__ import annotations

import re

from kb.errorblock import ErrorBlock
from kb.logclean import clean_line, split_squashed_frames
from kb.logpatterns import FRAME_RE

# A frame line cut inside its path: 'File "/home/u/envs/lib/python3.11/site-packages/pytorch_lightni'.
WRAPPED_FRAME_HEAD_RE = re.compile(r'^\s*File "[^"]*$')


class ScanState:
    def __init__(self, lines: list[str], offset: int) -> None:
        self.raw = lines
        self.offset = offset
        self.clean = [clean_line(line) for line in lines]
        # Squashed frames expand one physical line into several logical ones that share its number;
        # a frame line wrapped at a fixed width joins the line that completes it, under its own number.
        self.logical: list[tuple[int, str, str]] = []
        self.last_physical: list[int] = []  # per logical line: the last physical line it spans
        skip = -1
        for i, cl in enumerate(self.clean):
            if i == skip:
                continue
            text = cl.text
            if i + 1 < len(self.clean) and WRAPPED_FRAME_HEAD_RE.search(text):
                joined = text + self.clean[i + 1].text
                if FRAME_RE.match(joined):
                    text, skip = joined, i + 1
            for piece in split_squashed_frames(text):
                self.logical.append((i, piece, cl.prefix))
                self.last_physical.append(max(i, skip))
        self.levels = [cl.level for cl in self.clean]
        self.blocks: list[ErrorBlock] = []
        self.indent = ""  # of the traceback being read

    def lineno(self, idx: int) -> int:
        return self.logical[idx][0] + 1 + self.offset

    def end_lineno(self, idx: int) -> int:
        """The number of the last physical line of logical line `idx` (a wrapped frame spans two)."""
        return self.last_physical[idx] + 1 + self.offset

    def text(self, idx: int) -> str:
        return self.logical[idx][1]

    def body(self, idx: int) -> str:
        """Line `idx` without the indentation of the traceback being read."""
        t = self.text(idx)
        return t[len(self.indent) :] if self.indent and t.startswith(self.indent) else t
