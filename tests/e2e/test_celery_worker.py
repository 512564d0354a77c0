"""Real Celery worker processes consuming from Redis, against the same PostgreSQL database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import kombu.pools
import pytest
import redis
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.celery import app
from ingest.models import Document
from ingest.services import document_parse, document_submit_path
from ingest.tasks import ingest_document
from kb.models import Occurrence
from tests.conftest import ROOT, require

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _drop_connections() -> None:
    """The app caches its broker connection pool; after changing the broker it must be rebuilt."""
    app._pool = None
    app.amqp._producer_pool = None
    kombu.pools.reset()


@pytest.fixture
def start_worker(settings, tmp_path: Path) -> Iterator[Callable[[], subprocess.Popen[str]]]:
    url = os.environ.get("FIXBASE_TEST_REDIS_URL", "")
    require(bool(url), "FIXBASE_TEST_REDIS_URL is not set (Redis is not running)")
    require(connection.vendor == "postgresql", "workers share the test database, which needs PostgreSQL")
    # The app's routing caches the default queue at first use, so workers consume that one;
    # Redis database 15 is the tests' own, emptied first.
    queue = app.conf.task_default_queue
    redis.Redis.from_url(url).flushdb()
    db = connection.settings_dict
    env = {
        **os.environ,
        "REDIS_URL": url,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "FIXBASE_DATA_DIR": str(tmp_path),
        "FIXBASE_EMBEDDER": "fake",
    }
    settings.MEDIA_ROOT = tmp_path / "media"
    # The app was configured from Django settings (CELERY_ namespace): override both spellings.
    new = {"broker_url": url, "result_backend": url, "task_always_eager": False}
    new.update({f"CELERY_{k.upper()}": v for k, v in list(new.items())})
    old = {k: app.conf.get(k) for k in new}
    app.conf.update(new)
    _drop_connections()
    procs: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "--pool=solo", "-l", "INFO"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        procs.append(proc)
        return proc

    try:
        yield start
    finally:
        app.conf.update(old)
        _drop_connections()
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()


def _wait_for(doc_id: int, statuses: set[str], timeout: float, poll: float = 0.02) -> str:
    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = Document.objects.values_list("status", flat=True).get(pk=doc_id)
        if status in statuses:
            return status
        time.sleep(poll)
    return status


def test_upload_is_processed_by_a_real_worker_over_redis(start_worker, django_user_model):
    from django.core.files.uploadedfile import SimpleUploadedFile

    worker = start_worker()
    from tests.conftest import make_user

    user = make_user("uploader", editor=True)  # uploading is for editors
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    notes = (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes()
    resp = api.post("/api/v1/documents/", {"file": SimpleUploadedFile("notes.txt", notes)}, format="multipart")
    assert resp.status_code == 202
    assert resp.json()["status"] == "queued"  # not run in this process: it went to the broker
    status = _wait_for(resp.json()["id"], {"done", "failed"}, timeout=90, poll=0.5)
    worker.terminate()
    log = worker.communicate(timeout=30)[0]
    assert status == "done", log[-3000:]
    assert api.get(resp.json()["status_url"]).json()["entries_created"] == 7
    assert "ingest.tasks.ingest_document" in log and "succeeded" in log


def test_a_worker_killed_mid_document_leaves_nothing_and_the_restarted_worker_finishes_it(start_worker, tmp_path):
    from bench.gen_log import write_log

    big = tmp_path / "train.log"
    write_log(big, 48 << 20, seed=7)
    doc = document_submit_path(big).document
    first = start_worker()
    ingest_document.delay(doc.pk)
    assert _wait_for(doc.pk, {"processing"}, timeout=60, poll=0.005) == "processing"
    os.kill(first.pid, signal.SIGKILL)  # the worker dies in the middle of the document
    first.wait(timeout=10)
    doc.refresh_from_db()
    assert doc.status == "processing"
    assert Occurrence.objects.filter(document_id=doc.pk).count() == 0  # nothing half-ingested

    second = start_worker()  # on start it requeues what the dead worker left behind
    status = _wait_for(doc.pk, {"done", "failed"}, timeout=120, poll=0.2)
    second.terminate()
    log = second.communicate(timeout=30)[0]
    assert status == "done", log[-3000:]
    assert "requeued stale documents" in log
    # Exactly the entries a clean run makes: the parse of the same stored document.
    _, clean = document_parse(Document.objects.get(pk=doc.pk))
    stored = set(Occurrence.objects.filter(document_id=doc.pk).values_list("line_start", "line_end"))
    assert stored == {(c.line_start, c.line_end) for c in clean}
    assert len(stored) == 5


def test_a_document_queued_while_no_worker_runs_says_so_until_one_starts(start_worker, settings, monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    from ingest import dispatch
    from tests.conftest import make_user

    settings.CELERY_TASK_ALWAYS_EAGER = False  # as a deployment with REDIS_URL has it
    monkeypatch.setattr(dispatch, "_worker_seen", (float("-inf"), True))
    monkeypatch.setattr(dispatch, "WORKER_CHECK_SECONDS", 0.0)
    client = Client()
    client.force_login(make_user("uploader", editor=True))
    notes = (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes()
    page = client.post("/upload/", {"file": SimpleUploadedFile("notes.txt", notes)}, follow=True)
    doc = Document.objects.get()
    assert page.status_code == 200 and doc.status == "queued"

    def note_shown() -> bool:
        return "No ingest worker is running" in client.get(f"/upload/{doc.pk}/").content.decode()

    assert _eventually(note_shown), "the page never said that no worker runs"
    worker = start_worker()
    status = _wait_for(doc.pk, {"done", "failed"}, timeout=90, poll=0.5)
    assert status == "done"
    assert _eventually(lambda: not dispatch.no_worker_running()), "a running worker was not seen"
    worker.terminate()
    worker.communicate(timeout=30)


def _eventually(check: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False
