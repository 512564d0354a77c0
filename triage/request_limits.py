"""Refuse oversize bodies before Django or DRF read them into memory."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def body_too_large(request: HttpRequest) -> bool:
    """Refused unread: the body cannot hold a paste within the limit. The paste itself is
    measured once read (`paste_too_large`), so a form's encoding never counts against it."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return True
    return length > settings.FIXBASE_MAX_PASTE_BYTES + settings.FIXBASE_FORM_OVERHEAD_BYTES


def paste_too_large(text: str) -> bool:
    # A browser sends a textarea's line ends as CRLF: they are read as one newline, so they count as one.
    return len(text.replace("\r\n", "\n").encode()) > settings.FIXBASE_MAX_PASTE_BYTES


def too_large_message() -> str:
    limit_mb = settings.FIXBASE_MAX_PASTE_BYTES / (1024 * 1024)
    return (
        f"The paste is larger than {limit_mb:.0f} MB. Paste the failing part of the log "
        "(the traceback and a few hundred lines around it), or triage the whole file with the CI "
        "client (`fixbase triage FILE`), which keeps every error line and the end of the log."
    )
