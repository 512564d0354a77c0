"""Which version of the parsers and the scanner read a document: a stamp that changes with their code.

A document parsed by an older version may hold problems that version could not see (a traceback
wrapped at a fixed width, a warning asked about); `documents_reparse` reads again the documents
whose stamp is not this version's (`ingest.reparse`).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The code that turns a document into problems: the parsers, and the scanner they call.
READERS = (
    "ingest/parsers",
    "kb/errorblock.py",
    "kb/errorlines.py",
    "kb/exceptionlines.py",
    "kb/logclean.py",
    "kb/logpatterns.py",
    "kb/logscan.py",
    "kb/normalize.py",
    "kb/redact.py",
    "kb/rootcause.py",
    "kb/scanstate.py",
    "kb/signature.py",
    "kb/textdecode.py",
    "kb/tracebacks.py",
)


@cache
def parser_reading() -> str:
    """A short hash of the readers' source: equal for two installs of the same version."""
    digest = hashlib.sha1(usedforsecurity=False)
    for part in READERS:
        path = ROOT / part
        for f in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            digest.update(f.relative_to(ROOT).as_posix().encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]
