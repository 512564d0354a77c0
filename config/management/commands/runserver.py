"""`manage.py runserver`: Django's development server (with static files), its requests served by
a pool of threads (config.devserver) rather than a new thread each."""

from __future__ import annotations

from typing import Any

from django.contrib.staticfiles.management.commands.runserver import Command as StaticRunserver
from django.core.servers.basehttp import WSGIServer

from config.devserver import PooledWSGIServer


class Command(StaticRunserver):
    def inner_run(self, *args: Any, **options: Any) -> None:
        # The pool is the threading: Django must not wrap the server in a thread per request too.
        self.server_cls = PooledWSGIServer if options["use_threading"] else WSGIServer
        super().inner_run(*args, **{**options, "use_threading": False})
