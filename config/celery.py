"""The Celery app. Tasks run eagerly in-process unless REDIS_URL names a broker."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("fixbase")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
