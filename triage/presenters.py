"""The triage result as the JSON that the REST API and `manage.py triage --json` both return."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

from triage.services import TriageResult


def result_as_dict(result: TriageResult, absolute: Callable[[str], str] = lambda u: u) -> dict[str, Any]:
    sig = result.signature
    return {
        "verdict": result.verdict,
        "confidence": result.confidence,
        "threshold": result.threshold,
        "floor": result.floor,
        "signature": {
            "exception": sig.exc_type,
            "message": sig.message,
            "raw_message": sig.raw_message[:1000],
            "frames": list(sig.frames),
            "framework": sig.framework,
            "kind": sig.kind,
            "label": sig.label,
            "pattern": sig.pattern,
            "fingerprint": sig.fingerprint,
            "root_lines": list(result.root_lines) if result.root_lines else None,
        },
        "notes": list(result.notes),
        "secondary_errors": [
            {
                "line_start": b.line_start,
                "line_end": b.line_end,
                "error": f"{b.short_type or b.pattern}: {b.message[:200]}",
                "symptom": b.symptom,
            }
            for b in result.secondary
        ],
        "matches": [
            {
                "entry_id": m.entry_id,
                "title": m.title,
                "score": m.score,
                "remedy_markdown": m.remedy_markdown,
                "needs_fix": not m.remedy_markdown.strip(),
                "framework": m.framework,
                "origin": m.origin,
                "references": list(m.references),
                "url": absolute(reverse("kb:entry", args=[m.entry_id])),
                "sources": [
                    {"filename": s.filename, "line_start": s.line_start, "line_end": s.line_end} for s in m.sources
                ],
                "other_fixes": [
                    {"filename": s.filename, "line_start": s.line_start, "remedy_markdown": s.remedy_markdown}
                    for s in m.sources
                    if s.remedy_markdown.strip() and s.remedy_markdown.strip() != m.remedy_markdown.strip()
                ],
                "why": list(m.explanation.reasons),
                "differences": list(m.explanation.differences),
                "highlight_lines": list(m.explanation.highlight_lines),
                "your_numbers": list(m.explanation.numbers),
            }
            for m in result.matches
        ],
    }
