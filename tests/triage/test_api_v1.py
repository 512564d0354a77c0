"""Issue 10: the whole API — tokens and scopes, limits, every endpoint, one error shape."""

from __future__ import annotations

import gzip
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from ingest.models import Document
from ingest.services import document_process, document_submit_path
from kb.models import Entry
from tests.conftest import ROOT
from tests.factories import entry_make, known_failures
from triage.models import ApiToken, Feedback, TriageRecord
from triage.tokens import token_create, token_revoke

SM120 = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():  # type: ignore[no-untyped-def]
    cache.clear()


@pytest.fixture
def kb(db):  # type: ignore[no-untyped-def]
    return known_failures()


@pytest.fixture
def documents(db):  # type: ignore[no-untyped-def]
    """The project's samples, uploaded and ingested: for the tests about documents themselves."""
    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)


def client_for(user, *scopes: str) -> APIClient:  # type: ignore[no-untyped-def]
    _, key = token_create(user, "test", scopes or ("triage",))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


@pytest.fixture
def ci(viewer):  # type: ignore[no-untyped-def]
    return client_for(viewer)


@pytest.fixture
def curator(editor):  # type: ignore[no-untyped-def]
    return client_for(editor, "triage", "write")


def assert_error(resp, status: int, code: str) -> None:  # type: ignore[no-untyped-def]
    assert resp.status_code == status, resp.content
    body = resp.json()
    assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"]


def test_only_a_hash_of_the_key_is_stored_and_revoked_tokens_stop_working(viewer):
    token, key = token_create(viewer, "ci")
    assert key not in token.key_hash and key.startswith(token.prefix)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.post("/api/v1/triage/", {"log": SM120}, format="json").status_code == 200
    token_revoke(token)
    assert_error(api.post("/api/v1/triage/", {"log": SM120}, format="json"), 401, "not_authenticated")
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token fb_nope")
    assert_error(bad.get("/api/v1/entries/"), 401, "not_authenticated")
    assert_error(APIClient().get("/api/v1/entries/"), 401, "not_authenticated")


def test_a_triage_token_cannot_write_and_a_viewer_cannot_hold_a_write_token(kb, ci, viewer):
    entry = Entry.objects.first()
    assert_error(ci.patch(f"/api/v1/entries/{entry.pk}/", {"title": "x"}, format="json"), 403, "forbidden")
    assert_error(ci.post("/api/v1/entries/", {"log": SM120}, format="json"), 403, "forbidden")
    assert_error(
        ci.post("/api/v1/documents/", {"file": SimpleUploadedFile("a.log", b"RuntimeError: x\n")}, format="multipart"),
        403,
        "forbidden",
    )
    with pytest.raises(ValueError, match="editors"):
        token_create(viewer, "x", ("write",))
    entry.refresh_from_db()
    assert entry.title != "x" and Document.objects.count() == 0  # the refused upload stored nothing


def test_throttling_answers_429_with_retry_after(db, ci, settings):
    settings.FIXBASE_API_RATE = "3/min"
    codes = [ci.get("/api/v1/entries/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    resp = ci.get("/api/v1/entries/")
    assert_error(resp, 429, "rate_limited")
    assert int(resp["Retry-After"]) > 0


def test_triage_takes_json_text_and_gzip_and_keeps_the_context(kb, ci):
    ctx = {"job": "nightly-grpo", "url": "https://ci.example/1", "commit": "abc123", "cluster": "a100"}
    as_json = ci.post("/api/v1/triage/", {"log": SM120, "top_k": 2, "context": ctx}, format="json").json()
    as_text = ci.post("/api/v1/triage/", SM120, content_type="text/plain").json()
    gz = SimpleUploadedFile("job.log.gz", gzip.compress(SM120.encode()))
    as_gzip = ci.post("/api/v1/triage/", {"file": gz}, format="multipart").json()
    for body in (as_json, as_text, as_gzip):
        assert body["verdict"] == "match" and body["matches"][0]["title"].startswith("RuntimeError: CUDA error")
    record = TriageRecord.objects.get(pk=as_json["record_id"])
    assert record.context == ctx and record.log == SM120 and record.user.username == "victor"


def test_the_same_failure_from_two_jobs_shows_twice_in_history_and_trends(kb, ci, editor_client):
    for job in ("job-a", "job-b"):
        ci.post("/api/v1/triage/", {"log": SM120, "context": {"job": job}}, format="json")
    history = ci.get("/api/v1/triage/").json()
    assert history["count"] == 2 and {r["context"]["job"] for r in history["results"]} == {"job-a", "job-b"}
    assert ci.get("/api/v1/triage/?job=job-a").json()["count"] == 1
    page = editor_client.get("/trends/").content.decode()
    assert "<td>2</td>" in page and "no kernel image" in page and "job-b, job-a" in page


def test_logs_posted_by_ci_are_redacted_before_they_are_stored(kb, ci):
    secret = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3k"
    body = ci.post("/api/v1/triage/", {"log": f"HF_TOKEN={secret}\n{SM120}"}, format="json").json()
    assert secret not in TriageRecord.objects.get(pk=body["record_id"]).log


def test_feedback_on_a_triage_result(kb, ci):
    body = ci.post("/api/v1/triage/", {"log": SM120}, format="json").json()
    top = body["matches"][0]["entry_id"]
    resp = ci.post(f"/api/v1/triage/{body['record_id']}/feedback/", {"entry_id": top, "helpful": False}, format="json")
    assert resp.status_code == 200 and Feedback.objects.get().fingerprint == body["signature"]["fingerprint"]
    assert ci.post("/api/v1/triage/", {"log": SM120}, format="json").json()["verdict"] != "match"
    assert_error(
        ci.post("/api/v1/triage/999999/feedback/", {"entry_id": top, "helpful": True}, format="json"), 404, "not_found"
    )
    assert_error(
        ci.post(f"/api/v1/triage/{body['record_id']}/feedback/", {"entry_id": "x"}, format="json"), 400, "bad_request"
    )


def test_feedback_on_any_entry_a_triage_showed_and_only_a_fix_can_have_fixed_it(kb, ci):
    log = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. CUDA error: no kernel image"
    body = ci.post("/api/v1/triage/", {"log": log}, format="json").json()
    url = f"/api/v1/triage/{body['record_id']}/feedback/"
    shown = [m["entry_id"] for m in body["matches"]]
    assert len(shown) >= 2
    Entry.objects.filter(pk=shown[1]).update(remedy_markdown="")  # a "needs a fix" entry, listed second

    assert ci.post(url, {"entry_id": shown[1], "helpful": False}, format="json").status_code == 200
    assert_error(ci.post(url, {"entry_id": shown[1], "helpful": True}, format="json"), 400, "bad_request")
    assert ci.post(url, {"entry_id": shown[0], "helpful": True}, format="json").status_code == 200
    assert Feedback.objects.count() == 2


def test_a_triage_recorded_before_it_kept_its_results_takes_votes_on_its_top_entry_only(kb, ci):
    body = ci.post("/api/v1/triage/", {"log": SM120}, format="json").json()
    TriageRecord.objects.filter(pk=body["record_id"]).update(entry_ids=None)  # as the migration leaves old rows
    url = f"/api/v1/triage/{body['record_id']}/feedback/"
    top, other = body["matches"][0]["entry_id"], Entry.objects.exclude(pk=body["matches"][0]["entry_id"]).first().pk

    assert ci.post(url, {"entry_id": top, "helpful": False}, format="json").status_code == 200
    resp = ci.post(url, {"entry_id": other, "helpful": False}, format="json")
    assert_error(resp, 400, "bad_request")
    assert "triage the log again" in resp.json()["error"]["message"]


def test_feedback_on_an_entry_the_triage_did_not_return_is_refused(kb, ci):
    body = ci.post("/api/v1/triage/", {"log": "123"}, format="json").json()
    shown = {m["entry_id"] for m in body["matches"]}
    # An entry written after the triage was answered cannot be among what it returned.
    other = entry_make("ImportError: libcudnn.so.9: cannot open shared object file", "Install cuDNN 9.").pk
    assert other not in shown

    resp = ci.post(f"/api/v1/triage/{body['record_id']}/feedback/", {"entry_id": other, "helpful": True}, format="json")

    assert_error(resp, 400, "bad_request")
    assert not Feedback.objects.exists()


def test_entries_list_search_read_create_update_merge(kb, curator, ci):
    listing = ci.get("/api/v1/entries/?q=kernel").json()
    assert listing["count"] >= 1 and "no kernel image" in listing["results"][0]["title"]
    assert ci.get("/api/v1/entries/?needs_fix=true").json()["count"] == Entry.objects.filter(remedy_markdown="").count()
    one = ci.get(f"/api/v1/entries/{listing['results'][0]['id']}/").json()
    assert one["seen"] >= 1 and one["url"].endswith(f"/kb/entries/{one['id']}/")
    made = curator.post(
        "/api/v1/entries/",
        {"log": "zmq.error.ZMQError: Address already in use", "remedy_markdown": "free the port"},
        format="json",
    )
    assert made.status_code == 201 and made.json()["remedy_markdown"] == "free the port"
    new_id = made.json()["id"]
    assert (
        curator.patch(f"/api/v1/entries/{new_id}/", {"title": "ZMQ port taken"}, format="json").json()["title"]
        == "ZMQ port taken"
    )
    other = Entry.objects.exclude(pk=new_id).first()
    merged = curator.post(f"/api/v1/entries/{new_id}/merge/", {"source": other.pk}, format="json")
    assert merged.status_code == 200 and merged.json()["seen"] == 2
    assert_error(
        curator.post(f"/api/v1/entries/{new_id}/merge/", {"source": new_id}, format="json"), 400, "bad_request"
    )
    assert_error(ci.get("/api/v1/entries/999999/"), 404, "not_found")


def test_documents_list_status_and_delete(documents, curator, ci):
    listing = ci.get("/api/v1/documents/").json()
    assert listing["count"] == 3
    doc_id = listing["results"][0]["id"]
    stored = Document.objects.get(pk=doc_id).file.path
    assert ci.get(f"/api/v1/documents/{doc_id}/").json()["status"] == "done"
    assert_error(ci.delete(f"/api/v1/documents/{doc_id}/"), 403, "forbidden")
    entries_before = Entry.objects.count()
    assert curator.delete(f"/api/v1/documents/{doc_id}/").status_code == 204
    import os

    assert not Document.objects.filter(pk=doc_id).exists() and not os.path.exists(stored)
    assert Entry.objects.count() == entries_before  # the knowledge stays


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("{not json", "application/json"),
        ('{"log": ""}', "application/json"),
        ('{"log": "x", "top_k": 0}', "application/json"),
        ("", "text/plain"),
    ],
)
def test_malformed_bodies_are_400s_in_the_error_shape(db, ci, body, content_type):
    assert_error(ci.post("/api/v1/triage/", body, content_type=content_type), 400, "bad_request")
    assert TriageRecord.objects.count() == 0


def test_unsupported_media_type_and_oversize_uploads(db, ci, settings):
    assert_error(ci.post("/api/v1/triage/", b"<x/>", content_type="application/xml"), 415, "unsupported_media_type")
    settings.FIXBASE_MAX_PASTE_BYTES = 1000
    big = SimpleUploadedFile("big.log.gz", gzip.compress(b"RuntimeError: x\n" * 10_000))
    assert_error(ci.post("/api/v1/triage/", {"file": big}, format="multipart"), 413, "too_large")


def test_a_log_that_is_not_text_is_refused_not_turned_into_text(db, ci):
    for log in (123, ["RuntimeError: x"], {"a": 1}):
        assert_error(ci.post("/api/v1/triage/", {"log": log}, format="json"), 400, "bad_request")
    assert TriageRecord.objects.count() == 0


def test_a_text_body_is_read_in_the_charset_it_names(kb, ci):
    log = "RuntimeError: 数据加载失败: CUDA error: no kernel image is available for execution on the device"

    body = ci.post("/api/v1/triage/", log.encode("gbk"), content_type="text/plain; charset=gbk").json()

    assert "数据加载失败" in body["signature"]["raw_message"]


def test_a_text_body_in_a_charset_that_is_no_text_codec_is_a_400_not_a_crash(db, ci):
    for charset in ("idna", "base64", "no-such-charset"):
        resp = ci.post("/api/v1/triage/", b"RuntimeError: x", content_type=f"text/plain; charset={charset}")
        assert_error(resp, 400, "bad_request")
    assert TriageRecord.objects.count() == 0


def test_a_text_body_without_a_charset_is_sniffed_as_an_upload_is_and_never_unpacked(kb, ci):
    log = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    for encoded in (log.encode("utf-16"), log.encode("utf-16-le")):
        body = ci.post("/api/v1/triage/", encoded, content_type="text/plain").json()
        assert "no kernel image" in body["signature"]["raw_message"]
    gz = gzip.compress(log.encode() * 1000)
    assert_error(ci.post("/api/v1/triage/", gz, content_type="text/plain"), 400, "bad_request")


def test_a_chunked_body_the_server_did_not_read_gets_411_not_empty(db, ci):
    resp = ci.generic(
        "POST", "/api/v1/triage/", b"", content_type="text/plain", HTTP_TRANSFER_ENCODING="chunked", CONTENT_LENGTH=""
    )

    assert_error(resp, 411, "length_required")


def test_health_reports_each_part_without_a_token(db):
    body = APIClient().get("/api/v1/health/").json()
    assert body["status"] == "ok" and body["database"]["ok"] and body["worker"]["mode"].startswith("in-process")
    assert {"database", "index", "worker", "model"} <= set(body)


def test_schema_and_docs_are_served_locally(db):
    from django.test import Client

    schema = Client().get("/api/v1/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for p in (
        "/api/v1/triage/",
        "/api/v1/entries/",
        "/api/v1/documents/{id}/",
        "/api/v1/health/",
        "/api/v1/triage/{id}/feedback/",
    ):
        assert p in paths
    docs = Client().get("/api/v1/docs/").content.decode()
    assert (
        "swagger" in docs.lower() and "cdn" not in docs.lower() and "http" not in docs.split("<body")[1].split("url")[0]
    )


def test_apitoken_command_scopes_list_and_revoke(db):
    out = StringIO()
    call_command("apitoken", "curator", "--scope", "write", "--make-editor", stdout=out)
    assert ApiToken.objects.get(user__username="curator").scopes == "triage,write"
    listed = StringIO()
    call_command("apitoken", "curator", "--list", stdout=listed)
    prefix = listed.getvalue().split("…")[0]
    call_command("apitoken", "curator", "--revoke", prefix, stdout=StringIO())
    assert ApiToken.objects.get(user__username="curator").revoked_at is not None


def test_tokens_are_made_listed_and_revoked_in_the_web_ui(db, viewer_client, viewer):
    page = viewer_client.post("/tokens/", {"name": "github-actions"}, follow=True).content.decode()
    key = page.split('<pre id="new-key">')[1].split("</pre>")[0]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.post("/api/v1/triage/", {"log": SM120}, format="json").status_code == 200
    token = ApiToken.objects.get(user=viewer)
    assert viewer_client.post("/tokens/", {"name": "w", "write": "1"}).status_code == 400  # a viewer: no write
    listing = viewer_client.get("/tokens/").content.decode()
    assert token.prefix in listing and key not in listing  # the key is shown once; a reload makes none
    assert ApiToken.objects.filter(user=viewer).count() == 1
    viewer_client.post("/tokens/", {"revoke": token.pk})
    assert_error(api.post("/api/v1/triage/", {"log": SM120}, format="json"), 401, "not_authenticated")


def test_nul_characters_are_refused_in_urls_and_dropped_from_logs(kb, ci, viewer_client):
    assert_error(ci.get("/api/v1/entries/?q=a%00b"), 400, "bad_request")
    assert viewer_client.get("/kb/?q=a%00b").status_code == 400
    body = ci.post("/api/v1/triage/", {"log": SM120 + "\x00", "context": {"job": "a\x00b"}}, format="json")
    assert body.status_code == 200 and TriageRecord.objects.get().context == {"job": "ab"}
    assert ci.post("/api/v1/triage/", "x\x00" + SM120, content_type="text/plain").status_code == 200
    assert viewer_client.post("/", {"log": SM120 + "\x00"}).status_code == 200


def test_history_filters_are_checked(db, ci):
    assert_error(ci.get("/api/v1/triage/?verdict=bogus"), 400, "bad_request")
    assert_error(ci.get("/api/v1/triage/?entry=abc"), 400, "bad_request")
    resp = ci.post("/api/v1/triage/", {"log": SM120, "context": "job1"}, format="json")
    assert_error(resp, 400, "bad_request")
    assert resp.json()["error"]["message"].startswith("context")


def test_line_numbers_count_newlines_as_ingest_and_grep_do_not_progress_bar_redraws(kb, ci):
    from ingest.parsers.rawlog import parse_rawlog

    bars = "\r".join(f"{p:3d}%|{'#' * (p // 10):<10}| {p}/100 [00:0{p // 50}<00:02, 50it/s]" for p in (0, 50, 100))
    log = (
        f"{bars}\nINFO vllm engine ready\nTraceback (most recent call last):\n"
        '  File "/opt/verl/main_ppo.py", line 42, in main\n    trainer.fit()\n' + SM120
    )
    error_line = log.split("\n").index(SM120.strip()) + 1  # 6, as `grep -n` says

    body = ci.post("/api/v1/triage/", {"log": log}, format="json").json()

    assert body["signature"]["root_lines"][1] == error_line
    assert parse_rawlog(log)[0].line_end == error_line  # ingest numbers the same text the same way


def test_a_traceback_cut_before_its_exception_says_so(kb, ci):
    # A CI hook's log tail that kept the frames but not the exception line under them.
    cut = (
        "Traceback (most recent call last):\n"
        '  File "/data1/foss/SimpleTuner/train.py", line 50, in <module>\n'
        "    trainer.init_trackers()\n"
        '  File "/venv/lib/python3.10/site-packages/accelerate/accelerator.py", line 2586, in init_trackers\n'
        "    tracker.store_init_configuration(config)\n"
    )
    body = ci.post("/api/v1/triage/", cut, content_type="text/plain").json()
    assert any("stops before its last line" in n for n in body["notes"])
    whole = ci.post(
        "/api/v1/triage/", cut + "ValueError: value should be one of int, float, str\n", content_type="text/plain"
    )
    assert not any("stops before its last line" in n for n in whole.json()["notes"])
