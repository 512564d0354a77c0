"""Markers views carry for the access middleware (imports nothing of the apps, so every app can use it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def public_read(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view anonymous users may use when FIXBASE_PUBLIC_TRIAGE is on (reading, and the
    paste form itself, which changes nothing but the trends counter)."""
    view.public_read = True  # type: ignore[attr-defined]
    return view
