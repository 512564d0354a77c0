"""One compiled search for many literals, run over whole logs: RE2 when it is installed.

RE2 is a DFA: one pass over the text whatever the number of alternatives, no backtracking. On the
trigger words of the log scanner and the redactor it runs about ten times faster than Python's
`re` (bench/scan_throughput.py); `re` is the fallback and gives the same matches.
"""

from __future__ import annotations

import re
from typing import Any


def compile_trigger(pattern: str | bytes) -> Any:
    """A compiled pattern with `finditer`/`search`, from RE2 when available, else from `re`."""
    try:
        import re2  # type: ignore[import-not-found]
    except ImportError:
        return re.compile(pattern)
    options = re2.Options()
    options.max_mem = 64 << 20
    return re2.compile(pattern, options)
