"""API tokens: made, found, revoked. A key is `fb_` + 40 random characters; only its SHA-256 is kept."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.utils import timezone

from triage.models import ApiToken

KEY_PREFIX = "fb_"


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def token_create(user: Any, name: str = "", scopes: tuple[str, ...] = ("triage",)) -> tuple[ApiToken, str]:
    """A new token for `user` and its key (shown this once). `write` needs an editor."""
    from kb.permissions import can_edit

    bad = [s for s in scopes if s not in ApiToken.SCOPES]
    if bad:
        raise ValueError(f"Unknown scope {bad[0]!r}; scopes are {', '.join(ApiToken.SCOPES)}.")
    if "write" in scopes and not can_edit(user):
        raise ValueError("Only editors can have a token with the write scope.")
    key = KEY_PREFIX + secrets.token_urlsafe(30)
    token = ApiToken.objects.create(
        user=user,
        name=(name.replace("\x00", "") or "token").strip()[:100],
        prefix=key[:10],
        key_hash=_hash(key),
        scopes=",".join(sorted(set(scopes) | {"triage"})),
    )
    return token, key


def token_find(key: str) -> ApiToken | None:
    if not key.startswith(KEY_PREFIX):
        return None
    token = ApiToken.objects.select_related("user").filter(key_hash=_hash(key), revoked_at__isnull=True).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)  # at most once a minute
    return token


def token_revoke(token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
