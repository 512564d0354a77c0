"""Who may change the knowledge base."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase


def can_edit(user: Any) -> bool:
    """Editors and admins: edit, merge, upload, add entries."""
    return bool(user and user.is_authenticated and user.has_perm("kb.change_entry"))


def editor_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Anonymous users are sent to log in; viewers get a 403."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not can_edit(request.user):
            raise PermissionDenied("Only editors can change the knowledge base.")
        return view(request, *args, **kwargs)

    return wrapped
