"""Refuse oversize bodies before Django or DRF read them into memory."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def body_too_large(request: HttpRequest) -> bool:
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return True
    return length > settings.FIXBASE_MAX_PASTE_BYTES


def too_large_message() -> str:
    limit_mb = settings.FIXBASE_MAX_PASTE_BYTES / (1024 * 1024)
    return (
        f"The paste is larger than {limit_mb:.0f} MB. Paste the failing part of the log "
        "(the traceback and a few hundred lines around it), or upload the whole file as a document."
    )
