"""Writes to the knowledge base. Every other app writes kb only through these functions.

- `entries`: problems from documents stored as entries (grouped with the entries they repeat);
- `vectors`: entries' vectors and the FAISS index built from them;
- `edits`: the wiki's writes (edit, revert, a pasted log as an entry, merge, unmerge).
"""

from __future__ import annotations

from kb.services.edits import entry_create_from_paste, entry_merge, entry_revert, entry_unmerge, entry_update
from kb.services.entries import (
    IngestOutcome,
    NewEntry,
    Prepared,
    entries_create_separate,
    entries_ingest,
    entries_prepare,
    entries_reread,
    entry_problem_replace,
    groups_with,
)
from kb.services.vectors import entries_embed, index_rebuild

__all__ = [
    "IngestOutcome",
    "NewEntry",
    "Prepared",
    "entries_create_separate",
    "entries_embed",
    "entries_ingest",
    "entries_prepare",
    "entries_reread",
    "entry_create_from_paste",
    "entry_merge",
    "entry_problem_replace",
    "entry_revert",
    "entry_unmerge",
    "entry_update",
    "groups_with",
    "index_rebuild",
]
