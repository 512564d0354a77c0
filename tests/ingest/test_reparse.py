"""Documents an older version of the parsers read are parsed again by `manage.py reread_entries`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from ingest.models import Document
from ingest.services import document_process, document_submit
from kb.models import Embedding, Entry, Occurrence

UPGRADE_TRANSCRIPT = (
    "_**User**_\n\n"
    "Traceback (most recent call last):\n"
    '  File "train.py", line 3, in <module>\n'
    "    import flash_attn\n"
    "ModuleNotFoundError: No module named 'flash_attn'\n\n"
    "---\n\n_**Assistant**_\n\nInstall it: `pip install flash-attn --no-build-isolation`.\n\n---\n\n"
    "_**User**_\n\n"
    "  0%|          | 0/50 [00:00<?, ?it/s]D:\\envs\\diffusers\\models\\attention_processor.py:1279: UserWarning: "
    "1Torch was not compiled with flash attention. (Triggered internally at sdp_utils.cpp:455.)\n"
    "  hidden_states = F.scaled_dot_product_attention(\n\n"
    "What is wrong here and how do I fix it?\n\n"
    "---\n\n_**Assistant**_\n\nWindows builds of PyTorch ship SDPA without the flash kernel; it is harmless.\n\n---\n"
)


@pytest.mark.django_db
def test_reread_entries_parses_again_what_an_older_version_read_and_adds_only_what_it_missed():
    doc = document_process(document_submit("chat.md", [UPGRADE_TRANSCRIPT.encode()]).document.pk)
    assert doc.entries_created == Entry.objects.count() == 2
    # What a version that made no entry of a warning asked about left behind: the first entry only.
    warning = Entry.objects.get(title__startswith="UserWarning")
    warning.occurrences.all().delete()
    warning.delete()
    Document.objects.filter(pk=doc.pk).update(reading="an older version", entries_created=1, entries_parsed=1)

    out = io.StringIO()
    call_command("reread_entries", stdout=out)

    assert out.getvalue().splitlines()[0] == "1 documents parsed again: 1 new entries, 0 repeats of an entry"
    assert sorted(e.title.split(":")[0] for e in Entry.objects.all()) == ["ModuleNotFoundError", "UserWarning"]
    assert Occurrence.objects.count() == 2  # the entry already stored is not stored twice
    doc.refresh_from_db()
    assert (doc.entries_created, doc.entries_parsed) == (2, 2)
    assert Embedding.objects.count() == 2  # the new entry is embedded

    # This version's reading is stamped: a second run parses nothing.
    out = io.StringIO()
    call_command("reread_entries", stdout=out)
    assert out.getvalue().splitlines()[0] == "0 documents parsed again: 0 new entries, 0 repeats of an entry"


@pytest.mark.django_db
def test_reread_entries_leaves_a_document_whose_text_is_gone_as_it_was():
    doc = document_process(document_submit("chat.md", [UPGRADE_TRANSCRIPT.encode()]).document.pk)
    Document.objects.filter(pk=doc.pk).update(reading="an older version")
    Path(doc.file.path).unlink()

    out = io.StringIO()
    call_command("reread_entries", stdout=out)

    assert out.getvalue().splitlines()[0] == "0 documents parsed again: 0 new entries, 0 repeats of an entry"
    doc.refresh_from_db()
    assert (doc.status, doc.entries_created, doc.reading) == ("done", 2, "an older version")
    assert Entry.objects.count() == 2
