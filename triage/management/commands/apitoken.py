from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Print an API token for USERNAME, creating the user if needed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **opts: Any) -> None:
        user, _ = get_user_model().objects.get_or_create(username=opts["username"])
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
