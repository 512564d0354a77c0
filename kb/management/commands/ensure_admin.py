from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = (
        "Make sure a local admin account exists (creating 'admin' with a random password the first "
        "time) and print how to log in. The password is kept in the data directory, mode 0600."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, **opts: Any) -> None:
        users = get_user_model()
        path = settings.DATA_DIR / "admin-password"
        name = opts["username"]
        if not users.objects.filter(username=name).exists():
            if users.objects.filter(is_superuser=True).exists():
                self.stdout.write("An admin account exists already: log in with it at /accounts/login/.")
                return
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(username=name, password=password, email="")
            path.write_text(password + "\n")
            path.chmod(0o600)
        if path.exists():
            self.stdout.write(
                f"Log in at http://127.0.0.1:8000/accounts/login/ as '{name}' with the password in {path}"
                " (change it in /admin/; add accounts there, and put curators in the 'editors' group)."
            )
        else:
            self.stdout.write(f"Log in at /accounts/login/ as '{name}'.")
