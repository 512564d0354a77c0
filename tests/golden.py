"""Golden files for the document parsers: each sample next to the candidates it must yield."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingest.parsers import decode_document, parse_document

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = Path(__file__).resolve().parent / "data" / "golden"
GOLDEN_INPUTS = sorted((ROOT / "samples").iterdir())


def parse_for_golden(path: Path) -> dict[str, Any]:
    fmt, candidates = parse_document(decode_document(path.read_bytes()))
    return {
        "format": fmt,
        "candidates": [
            {
                "title": c.title,
                "line_start": c.line_start,
                "line_end": c.line_end,
                "problem_start": c.problem_start,
                "problem_end": c.problem_end,
                "needs_fix": c.needs_fix,
                "remedy_head": c.remedy_markdown[:120],
            }
            for c in candidates
        ],
    }


def golden_path(path: Path) -> Path:
    return GOLDEN_DIR / f"{path.name}.json"
