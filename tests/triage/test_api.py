from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from ingest.models import Document
from kb.models import Entry
from tests.conftest import ROOT
from tests.factories import CUDA_OOM, known_failures
from triage.api import SurrogateCheck, TriageInput
from triage.models import TriageRecord

SM120 = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


@pytest.fixture
def kb(db):  # type: ignore[no-untyped-def]
    return known_failures()


@pytest.fixture
def client(db, django_user_model):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group

    from kb.apps import EDITORS, ensure_editors_group

    user = django_user_model.objects.create(username="ci-hook")
    ensure_editors_group()
    user.groups.add(Group.objects.get(name=EDITORS))  # it uploads documents too
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api


def test_triage_needs_a_token(db):
    resp = APIClient().post("/api/v1/triage/", {"log": SM120}, format="json")
    assert resp.status_code == 401
    assert TriageRecord.objects.count() == 0


def test_triage_with_a_wrong_token_is_refused(db):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert api.post("/api/v1/triage/", {"log": SM120}, format="json").status_code == 401


def test_triage_returns_the_documented_shape(kb, client):
    resp = client.post("/api/v1/triage/", {"log": SM120, "top_k": 3}, format="json")
    assert resp.status_code == 200
    data = resp.json()
    assert data["verdict"] == "match"
    assert set(data["signature"]) >= {"exception", "message", "frames", "framework", "label"}
    assert data["signature"]["label"] == "Root error"
    assert 1 <= len(data["matches"]) <= 3
    assert all(m["score"] >= data["floor"] for m in data["matches"])
    top = data["matches"][0]
    assert set(top) >= {"entry_id", "title", "score", "remedy_markdown", "url", "sources"}
    assert top["url"].startswith("http://testserver/kb/entries/")
    assert top["sources"][0] == {"filename": "chat.md", "line_start": 82, "line_end": 84}
    scores = [m["score"] for m in data["matches"]]
    assert scores == sorted(scores, reverse=True)


def test_rest_and_cli_return_the_same_ranking(kb, client, tmp_path):
    log = (ROOT / "tests" / "data" / "hard_cases" / "cases.jsonl").read_text().splitlines()[0]
    text = json.loads(log)["log"] + "\n" + CUDA_OOM  # a hard case, and an error the knowledge base knows
    api = client.post("/api/v1/triage/", {"log": text, "top_k": 5}, format="json").json()
    assert api["matches"]  # something to compare
    path = tmp_path / "failure.log"
    path.write_text(text)
    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("triage", str(path), "--json", "--local", stdout=out)
    cli = json.loads(out.getvalue())
    assert exited.value.code == {"match": 0, "no_match": 1, "possible": 3}[cli["verdict"]]
    assert [m["entry_id"] for m in cli["matches"]] == [m["entry_id"] for m in api["matches"]]
    assert [m["score"] for m in cli["matches"]] == [m["score"] for m in api["matches"]]
    assert cli["verdict"] == api["verdict"]


@pytest.mark.parametrize("body", [{"log": ""}, {"log": "   \n  "}, {}, {"log": SM120, "top_k": 0}])
def test_bad_triage_input_is_a_400_and_stores_nothing(client, body):
    resp = client.post("/api/v1/triage/", body, format="json")
    assert resp.status_code == 400
    assert TriageRecord.objects.count() == 0


def test_a_request_without_a_log_says_how_to_send_one(client):
    as_json = client.post("/api/v1/triage/", {"top_k": 3}, format="json")
    as_form = client.post(
        "/api/v1/triage/", "RuntimeError: boom", content_type="application/x-www-form-urlencoded"
    )  # curl --data-binary @file without -H 'Content-Type: text/plain'

    for resp in (as_json, as_form):
        assert resp.status_code == 400
        assert "No log was sent" in str(resp.json()) and "text/plain" in str(resp.json())
    assert TriageRecord.objects.count() == 0


def test_a_log_just_over_the_limit_is_a_413_in_any_encoding(client, settings):
    settings.FIXBASE_MAX_PASTE_BYTES = 100 * 1024
    log = "RuntimeError: boom\n" + "x" * (110 * 1024)

    as_json = client.post("/api/v1/triage/", {"log": log}, format="json")
    as_text = client.generic("POST", "/api/v1/triage/", log.encode(), content_type="text/plain")

    assert as_json.status_code == as_text.status_code == 413
    assert TriageRecord.objects.count() == 0


def test_a_50_mb_paste_is_refused_with_413_and_stores_nothing(client):
    resp = client.post("/api/v1/triage/", {"log": "x" * (50 * 1024 * 1024)}, format="json")
    assert resp.status_code == 413
    assert resp.json()["error"]["code"] == "too_large" and "larger than" in resp.json()["error"]["message"]
    assert TriageRecord.objects.count() == 0


def test_a_lone_surrogate_in_a_posted_log_is_a_400_that_names_it_and_stores_nothing(client):
    # JSON can carry half of a UTF-16 pair ("\\ud83d" alone); no database can store it.
    body = '{"log": "RuntimeError: boom \\ud83d after it"}'
    resp = client.post("/api/v1/triage/", body, content_type="application/json")
    assert resp.status_code == 400
    assert "Surrogate characters are not allowed: U+D83D." in json.dumps(resp.json())
    assert TriageRecord.objects.count() == 0
    # A whole pair is a character like any other.
    ok = client.post("/api/v1/triage/", '{"log": "RuntimeError: boom \\ud83d\\ude00"}', content_type="application/json")
    assert ok.status_code == 200
    # Checked by the encoder, not character by character in Python as DRF's own check does.
    kinds = [type(v) for v in TriageInput().fields["log"].validators]
    assert SurrogateCheck in kinds and ProhibitSurrogateCharactersValidator not in kinds


def test_document_upload_returns_202_and_a_status_url(client, django_capture_on_commit_callbacks):
    notes = (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes()
    from django.core.files.uploadedfile import SimpleUploadedFile

    with django_capture_on_commit_callbacks(execute=True):
        resp = client.post("/api/v1/documents/", {"file": SimpleUploadedFile("notes.txt", notes)}, format="multipart")
    assert resp.status_code == 202
    status = client.get(resp.json()["status_url"]).json()
    assert status["status"] == "done" and status["entries_created"] == 7
    again = client.post("/api/v1/documents/", {"file": SimpleUploadedFile("copy.txt", notes)}, format="multipart")
    assert again.status_code == 200 and again.json()["id"] == resp.json()["id"]


def test_binary_upload_is_a_400_and_stores_nothing(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    resp = client.post(
        "/api/v1/documents/", {"file": SimpleUploadedFile("a.bin", b"\x00\xff" * 5000)}, format="multipart"
    )
    assert resp.status_code == 400 and "binary" in resp.json()["error"]["fields"]["file"][0]
    assert Document.objects.count() == 0 and Entry.objects.count() == 0


def test_document_status_needs_a_token(db):
    assert APIClient().get("/api/v1/documents/1/").status_code == 401


def test_apitoken_command_creates_the_user_and_prints_a_working_token(db):
    out = StringIO()
    call_command("apitoken", "ci-bot", stdout=out)
    key = out.getvalue().split()[-1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.post("/api/v1/triage/", {"log": SM120}, format="json").status_code == 200


def test_three_verdicts_a_ci_hook_can_tell_apart(kb, client, settings):
    """match: the fix; possible: leads listed but never presented as the fix; no_match: nothing worth showing."""
    confident = client.post("/api/v1/triage/", {"log": SM120}, format="json").json()
    assert confident["verdict"] == "match" and confident["confidence"] >= confident["threshold"]
    settings.FIXBASE_MATCH_THRESHOLD = 0.9999  # the same paste, judged by a stricter team
    doubtful = client.post("/api/v1/triage/", {"log": SM120}, format="json").json()
    assert doubtful["verdict"] == "possible" and doubtful["matches"]
    assert doubtful["matches"][0]["entry_id"] == confident["matches"][0]["entry_id"]
    settings.FIXBASE_MATCH_THRESHOLD = -1.0
    unknown = client.post(
        "/api/v1/triage/",
        {"log": "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5555')"},
        format="json",
    ).json()
    assert unknown["verdict"] == "no_match" and unknown["matches"] == []


def test_possibly_related_page_does_not_present_a_remedy_as_the_fix(kb, settings, viewer_client):
    settings.FIXBASE_MATCH_THRESHOLD = 0.9999
    page = viewer_client.post("/", {"log": SM120}).content.decode()
    assert "Possibly related" in page and "Known issue" not in page
    assert "not confirmed for your error" in page


def test_a_viewer_token_triages_but_cannot_upload(db, viewer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=viewer).key}")
    assert api.post("/api/v1/triage/", {"log": SM120}, format="json").status_code == 200
    resp = api.post(
        "/api/v1/documents/", {"file": SimpleUploadedFile("n.txt", b"RuntimeError: x\n")}, format="multipart"
    )
    assert resp.status_code == 403 and Document.objects.count() == 0
