from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ingest.services import document_process, document_submit
from tests.conftest import ROOT, make_user

NOTES = (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes()


@pytest.mark.django_db
def test_uploading_the_same_file_again_says_it_was_uploaded_before():
    client = Client()
    client.force_login(make_user("uploader", editor=True))

    first = client.post("/upload/", {"file": SimpleUploadedFile("notes.txt", NOTES)}, follow=True)
    again = client.post("/upload/", {"file": SimpleUploadedFile("notes-copy.txt", NOTES)}, follow=True)

    assert "uploaded before" not in first.content.decode()
    assert again.redirect_chain[-1][0] == first.redirect_chain[-1][0] + "?again=1"
    assert "This file was uploaded before by uploader" in again.content.decode()


@pytest.mark.django_db
def test_a_queued_re_upload_keeps_saying_so_when_its_status_refreshes():
    client = Client()
    client.force_login(make_user("uploader", editor=True))
    doc = document_submit("notes.txt", [NOTES]).document  # queued: no worker has taken it
    again = client.post("/upload/", {"file": SimpleUploadedFile("notes-copy.txt", NOTES)}, follow=True)
    assert again.redirect_chain[-1][0] == f"/upload/{doc.pk}/?again=1"

    refresh_url = f"/upload/{doc.pk}/?again=1"
    assert f'hx-get="{refresh_url}"' in again.content.decode()
    refreshed = client.get(refresh_url, headers={"HX-Request": "true"}).content.decode()
    assert "This file was uploaded before" in refreshed and f'hx-get="{refresh_url}"' in refreshed


@pytest.mark.django_db
def test_where_an_entry_was_seen_links_to_those_lines_of_its_document():
    import re

    from kb.models import Occurrence

    client = Client()
    client.force_login(make_user("uploader", editor=True))
    document_process(document_submit("notes.txt", [NOTES]).document.pk)
    occ = Occurrence.objects.order_by("-line_start").first()

    entry_page = client.get(f"/kb/entries/{occ.entry_id}/").content.decode()
    link = re.search(r'href="(/upload/\d+/lines/\?from=(\d+)&amp;to=(\d+)#L\d+)"', entry_page)
    assert link and (int(link.group(2)), int(link.group(3))) == (occ.line_start, occ.line_end)

    page = client.get(link.group(1).replace("&amp;", "&")).content.decode()
    shown = re.findall(r'<tr id="L(\d+)" class="hl"><td class="muted">\d+</td><td><pre>(.*?)</pre>', page, re.S)
    numbers = [int(n) for n, _ in shown]
    assert numbers == list(range(occ.line_start, occ.line_end + 1))
    first_line = NOTES.decode().split("\n")[occ.line_start - 1]
    assert shown[0][1] == first_line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        "'", "&#x27;"
    ).replace('"', "&quot;")


@pytest.mark.django_db
def test_a_line_range_that_is_not_numbers_is_a_clear_400():
    client = Client()
    client.force_login(make_user("uploader", editor=True))
    doc = document_process(document_submit("notes.txt", [NOTES]).document.pk)

    resp = client.get(f"/upload/{doc.pk}/lines/?from=ten")

    assert resp.status_code == 400 and "must be line numbers" in resp.content.decode()


@pytest.mark.django_db
def test_with_public_triage_a_document_s_text_is_still_for_team_members_only(settings):
    settings.FIXBASE_PUBLIC_TRIAGE = True
    doc = document_process(document_submit("notes.txt", [NOTES]).document.pk)
    anon, member = Client(), Client()
    member.force_login(make_user("reader"))

    assert anon.get(f"/upload/{doc.pk}/").status_code == 200
    refused = anon.get(f"/upload/{doc.pk}/lines/?from=1&to=5")
    assert refused.status_code == 302 and refused["Location"].startswith("/accounts/login/")
    assert member.get(f"/upload/{doc.pk}/lines/?from=1&to=5").status_code == 200


@pytest.mark.django_db
def test_reading_a_document_page_by_page_highlights_nothing():
    client = Client()
    client.force_login(make_user("reader"))
    doc = document_process(document_submit("notes.txt", [NOTES]).document.pk)

    page = client.get(f"/upload/{doc.pk}/lines/").content.decode()

    assert '<tr id="L1">' in page and 'class="hl"' not in page
