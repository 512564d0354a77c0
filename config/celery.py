"""The Celery app. Tasks run eagerly in-process unless REDIS_URL names a broker."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("fixbase")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def workers_answering(timeout: float = 1.0) -> int:
    """How many Celery workers answer a ping within `timeout` seconds (raises if the broker is down)."""
    return len(app.control.ping(timeout=timeout))
