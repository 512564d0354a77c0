from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.apps import EDITORS, ensure_editors_group
from triage.models import ApiToken
from triage.tokens import token_create, token_revoke


class Command(BaseCommand):
    help = (
        "Make an API token for USERNAME (creating the user if needed) and print it as the last word. "
        "Scopes: triage (default; CI hooks) and write (curators; editors only). "
        "--list shows USERNAME's tokens; --revoke PREFIX revokes one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--scope", action="append", choices=ApiToken.SCOPES, default=[])
        parser.add_argument("--name", default="cli")
        parser.add_argument("--make-editor", action="store_true", help="also put the user in the editors group")
        parser.add_argument("--list", action="store_true")
        parser.add_argument("--revoke", metavar="PREFIX")

    def handle(self, *args: Any, **opts: Any) -> None:
        user, _ = get_user_model().objects.get_or_create(username=opts["username"])
        if opts["list"]:
            for t in ApiToken.objects.filter(user=user):
                state = f"revoked {t.revoked_at:%Y-%m-%d}" if t.revoked_at else "active"
                used = f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never"
                self.stdout.write(f"{t.prefix}…  {t.name}  scopes={t.scopes}  last used {used}  {state}")
            return
        if opts["revoke"]:
            token = ApiToken.objects.filter(user=user, prefix__startswith=opts["revoke"][:10]).first()
            if token is None:
                raise CommandError(f"{user.username} has no token starting with {opts['revoke']!r}.")
            token_revoke(token)
            self.stdout.write(f"revoked {token.prefix}…")
            return
        if opts["make_editor"]:
            ensure_editors_group()
            user.groups.add(Group.objects.get(name=EDITORS))
        try:
            _, key = token_create(user, opts["name"], tuple(opts["scope"] or ["triage"]))
        except ValueError as exc:
            raise CommandError(f"{exc} (pass --make-editor to make {user.username} an editor)") from exc
        self.stdout.write(key)
