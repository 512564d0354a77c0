"""A real Celery worker process consuming from Redis, against the same PostgreSQL database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.celery import app
from tests.conftest import ROOT, require

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("FIXBASE_TEST_REDIS_URL", "")
    require(bool(url), "FIXBASE_TEST_REDIS_URL is not set (Redis is not running)")
    return url


def _drop_connections() -> None:
    """The app caches its broker connection pool; after changing the broker it must be rebuilt."""
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def worker(redis_url: str, settings, tmp_path: Path):  # type: ignore[no-untyped-def]
    require(connection.vendor == "postgresql", "the worker shares the test database, which needs PostgreSQL")
    # The app's routing caches the default queue at first use, so the worker consumes that one;
    # Redis database 15 is the tests' own, emptied first.
    queue = app.conf.task_default_queue
    redis.Redis.from_url(redis_url).delete(queue)
    db = connection.settings_dict
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "FIXBASE_DATA_DIR": str(tmp_path),
        "FIXBASE_EMBEDDER": "fake",
    }
    settings.MEDIA_ROOT = tmp_path / "media"
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "--pool=solo", "-c", "1", "-l", "INFO"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # The app was configured from Django settings (CELERY_ namespace): override both spellings.
    new = {"broker_url": redis_url, "result_backend": redis_url, "task_always_eager": False}
    new.update({f"CELERY_{k.upper()}": v for k, v in list(new.items())})
    old = {k: app.conf.get(k) for k in new}
    app.conf.update(new)
    _drop_connections()
    try:
        yield proc
    finally:
        app.conf.update(old)
        _drop_connections()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_upload_is_processed_by_a_real_worker_over_redis(worker, django_user_model):
    from django.core.files.uploadedfile import SimpleUploadedFile

    user = django_user_model.objects.create(username="uploader")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    notes = (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes()
    resp = api.post("/api/v1/documents/", {"file": SimpleUploadedFile("notes.txt", notes)}, format="multipart")
    assert resp.status_code == 202
    assert resp.json()["status"] == "queued"  # not run in this process: it went to the broker
    deadline = time.monotonic() + 90
    status = {}
    while time.monotonic() < deadline:
        status = api.get(resp.json()["status_url"]).json()
        if status["status"] in ("done", "failed"):
            break
        assert worker.poll() is None, worker.stdout.read() if worker.stdout else "worker died"
        time.sleep(0.5)
    worker.terminate()
    log = worker.communicate(timeout=30)[0]
    assert status.get("status") == "done", (status, log[-3000:])
    assert status["entries_created"] == 7
    assert "ingest.tasks.ingest_document" in log and "succeeded" in log
