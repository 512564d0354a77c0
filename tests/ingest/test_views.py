from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

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
