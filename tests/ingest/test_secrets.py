"""Five kinds of secrets planted in a log reach neither the database, the index nor an API answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from ingest.models import Document
from kb.models import Entry

SECRETS = {
    "wandb": "3f9c1ad07e2b4c5d8e9f0a1b2c3d4e5f6a7b8c9d",
    "hf": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789",
    "openai": "sk-proj-ZyXwVuTsRqPoNmLkJiHgFeDc98765",
    "aws": "AKIAZZZZ1234EXAMPLE9",
    "url": "hunter2SuperSecret",
}
LOG = f"""# Set WANDB_MODE=offline or fix the proxy; never paste keys into logs.
export WANDB_API_KEY={SECRETS["wandb"]}
HF_TOKEN={SECRETS["hf"]} python train.py
client = OpenAI(api_key="{SECRETS["openai"]}")
aws_access_key_id = {SECRETS["aws"]}
pip install --index-url https://deploy:{SECRETS["url"]}@pypi.internal.example/simple trl
Traceback (most recent call last):
  File "/opt/site-packages/wandb/sdk/wandb_login.py", line 301, in _login
    raise UsageError("api_key not configured (no-tty). call wandb.login(key=...)")
wandb.errors.UsageError: api_key not configured (no-tty). call wandb.login(key={SECRETS["wandb"]})
"""


def _everything_stored() -> str:
    """Every text column of every table, as one string."""
    parts = []
    with connection.cursor() as cur:
        for table in connection.introspection.table_names():
            cur.execute(f'SELECT * FROM "{table}"')  # noqa: S608 - table names come from introspection
            parts.extend(str(row) for row in cur.fetchall())
    return "\n".join(parts)


@pytest.mark.django_db
def test_planted_secrets_never_reach_storage_index_or_api(settings, editor, django_capture_on_commit_callbacks):
    from django.test import Client

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=editor).key}")
    with django_capture_on_commit_callbacks(execute=True):
        resp = api.post("/api/v1/documents/", {"file": SimpleUploadedFile("run.log", LOG.encode())}, format="multipart")
    assert resp.status_code == 202
    doc = Document.objects.get()
    assert doc.status == "done" and doc.secrets_redacted >= 5
    assert Entry.objects.count() == 1
    status = api.get(resp.json()["status_url"]).json()
    assert status["secrets_redacted"] == doc.secrets_redacted
    stored_file = Path(doc.file.path).read_text()
    index_files = b"".join(p.read_bytes() for p in Path(settings.FIXBASE_INDEX_DIR).iterdir())
    triage = api.post("/api/v1/triage/", {"log": LOG}, format="json")
    assert triage.status_code == 200
    browser = Client()
    browser.force_login(editor)
    page = browser.get(f"/kb/entries/{Entry.objects.get().pk}/").content.decode()
    assert "Seen 1 time" in page  # the real entry page, not a login redirect
    surfaces = {
        "database": _everything_stored(),
        "stored document": stored_file,
        "index": index_files.decode("latin-1"),
        "triage answer": json.dumps(triage.json()),
        "upload answer": json.dumps(resp.json()) + json.dumps(status),
        "entry page": page,
    }
    for where, text in surfaces.items():
        for kind, secret in SECRETS.items():
            assert secret not in text, f"{kind} secret reached the {where}"
    assert "[REDACTED" in stored_file
