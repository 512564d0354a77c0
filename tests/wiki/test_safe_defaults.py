"""Issue 9: safe defaults, uploads that never block or get lost, text that is not damaged."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ingest.models import Document
from kb.models import Entry
from tests.conftest import ROOT


def _manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "FIXBASE_", "DATABASE_URL"))}
    clean.update({"FIXBASE_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_only_the_three_production_settings(tmp_path):
    out = _manage(
        tmp_path,
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="k" * 20 + "Q2w9-x_Vb7" * 4,
        DJANGO_ALLOWED_HOSTS="fixbase.example.org",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_debug_is_off_and_a_secret_key_is_made_per_installation(tmp_path):
    code = "import django, os; django.setup(); from django.conf import settings as s; print(s.DEBUG, s.SECRET_KEY)"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "FIXBASE_"))}
    env.update({"FIXBASE_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings"})
    first = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    debug, key = first.stdout.split()
    assert debug == "False" and len(key) >= 50 and first.stdout == second.stdout
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_static_files_and_security_headers_are_served_with_debug_off(db, viewer_client, settings):
    assert settings.DEBUG is False
    css = Client().get("/static/fixbase.css")
    assert css.status_code == 200 and b"--accent" in b"".join(css.streaming_content)
    page = viewer_client.get("/")
    assert "default-src 'self'" in page["Content-Security-Policy"]
    assert page["X-Frame-Options"] == "DENY"


def test_an_oversize_paste_gets_the_friendly_413_before_the_csrf_check(db, viewer, settings):
    settings.FIXBASE_MAX_PASTE_BYTES = 1000
    client = Client(enforce_csrf_checks=True)
    client.force_login(viewer)
    body_limit = settings.FIXBASE_MAX_PASTE_BYTES + settings.FIXBASE_FORM_OVERHEAD_BYTES
    resp = client.post("/", {"log": "x" * (body_limit + 1)}, HTTP_HX_REQUEST="true")
    assert resp.status_code == 413 and b"larger than" in resp.content and b"<html" not in resp.content


def _upload(client: Client, name: str, data: bytes):  # type: ignore[no-untyped-def]
    return client.post("/upload/", {"file": SimpleUploadedFile(name, data)})


def _wait_done(pk: int, timeout: float = 30.0) -> Document:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        doc = Document.objects.get(pk=pk)
        if doc.status in ("done", "failed"):
            return doc
        time.sleep(0.1)
    raise AssertionError(f"document {pk} still {Document.objects.get(pk=pk).status}")


@pytest.mark.django_db(transaction=True)
def test_an_upload_returns_at_once_and_a_background_thread_ingests_it(editor_client, settings):
    settings.FIXBASE_INGEST_IN_THREAD = True
    resp = _upload(editor_client, "notes.txt", (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes())
    assert resp.status_code == 302
    pk = int(resp["Location"].rstrip("/").rsplit("/", 1)[-1])
    doc = _wait_done(pk)
    assert doc.status == "done" and doc.entries_created > 0 and doc.uploaded_by.username == "edith"
    status = editor_client.get(resp["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "done" in status and "refreshing" not in status


@pytest.mark.django_db(transaction=True)
def test_a_document_left_processing_by_a_killed_process_is_resumed(editor_client, settings):
    from ingest.services import document_submit_path

    settings.FIXBASE_INGEST_IN_THREAD = True
    doc = document_submit_path(ROOT / "samples" / "swift_grpo_notes.txt").document
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs
    import socket

    Document.objects.filter(pk=doc.pk).update(status="processing", claimed_by=f"{socket.gethostname()}:{dead.pid}")
    page = editor_client.get(f"/upload/{doc.pk}/")
    assert page.status_code == 200
    assert _wait_done(doc.pk).status == "done"


def test_orphan_partial_uploads_are_removed(db, editor_client, settings):
    media = Path(settings.MEDIA_ROOT) / "documents"
    media.mkdir(parents=True, exist_ok=True)
    temp = Path(settings.FILE_UPLOAD_TEMP_DIR)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    import socket

    host = socket.gethostname()
    dead = media / f".upload-{host}-{gone.pid}-abc"  # its process was killed mid-upload
    live = media / f".upload-{host}-{os.getpid()}-abc"  # an upload this process is writing
    idle, fresh = temp / "idle.upload.txt", temp / "fresh.upload.txt"
    for p in (dead, live, idle, fresh):
        p.write_bytes(b"x" * 100)
    long_ago = time.time() - 7200
    os.utime(idle, (long_ago, long_ago))
    editor_client.get("/upload/")
    assert not dead.exists() and not idle.exists() and live.exists() and fresh.exists()


def test_a_gzip_bomb_is_refused_and_leaves_no_file(db, editor_client, settings):
    settings.FIXBASE_MAX_EXPANSION_RATIO = 100
    bomb = gzip.compress(b"INFO step ok\n" * 12_000_000, compresslevel=9)  # ~150 MB of text
    assert len(bomb) * 100 < 150 * 1024**2
    resp = _upload(editor_client, "bomb.log.gz", bomb)
    assert resp.status_code == 400 and b"expands to more than" in resp.content
    media = Path(settings.MEDIA_ROOT) / "documents"
    assert not Document.objects.exists() and not [p for p in media.iterdir()]


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("latin1.log", "Größe falsch\nRuntimeError: Maße überschritten\n".encode("latin-1"), "Maße überschritten"),
        ("gb.log", "# 显存不足\nRuntimeError: CUDA out of memory\n".encode("gb18030"), "显存不足"),
        ("ps.log", "RuntimeError: CUDA out of memory\r\n".encode("utf-16"), "CUDA out of memory"),
        ("nobom.log", "RuntimeError: CUDA out of memory\n".encode("utf-16-le"), "CUDA out of memory"),
    ],
)
def test_uploads_are_decoded_by_what_they_are(
    db, editor_client, django_capture_on_commit_callbacks, name, data, expected
):
    with django_capture_on_commit_callbacks(execute=True):
        resp = _upload(editor_client, name, data)
    assert resp.status_code == 302
    doc = Document.objects.get()
    assert expected in Path(doc.file.path).read_text(encoding="utf-8")
    assert Entry.objects.exists()


def test_a_lossy_decode_keeps_the_original_bytes_with_secrets_redacted(
    db, editor_client, django_capture_on_commit_callbacks
):
    token = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3k"
    # UTF-8 as far as the encoding is sniffed (the first 64 KB), then bytes UTF-8 cannot decode.
    healthy = "INFO step ok, Größe 3 \u2713\n".encode() * 4000
    data = (
        healthy + b"RuntimeError: CUDA out of memory\nHF_TOKEN=" + token.encode() + b"\nbad bytes: \xff\xfe\xfa here\n"
    )
    with django_capture_on_commit_callbacks(execute=True):
        _upload(editor_client, "mixed.log", data)
    doc = Document.objects.get()
    assert doc.undecodable_bytes == 3
    assert "\ufffd" in Path(doc.file.path).read_text(encoding="utf-8")
    original = editor_client.get(f"/upload/{doc.pk}/original/")
    body = b"".join(original.streaming_content)
    assert b"\xff\xfe\xfa here" in body and token.encode() not in body
    assert "could not be decoded" in editor_client.get(f"/upload/{doc.pk}/").content.decode()


def test_a_clean_decode_keeps_no_second_copy(db, editor_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        _upload(editor_client, "clean.log", b"RuntimeError: CUDA out of memory\n")
    doc = Document.objects.get()
    assert doc.undecodable_bytes == 0 and not Path(doc.original_path).exists()
    assert editor_client.get(f"/upload/{doc.pk}/original/").status_code == 404
