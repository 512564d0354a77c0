from __future__ import annotations

import pytest
from django.core.management import call_command

from ingest.models import Document
from ingest.services import IngestError, document_process, document_submit
from kb.models import Embedding, Entry, Occurrence
from kb.vector_index import get_index
from tests.conftest import ROOT

NOTES = (ROOT / "samples" / "swift_grpo_notes.txt").read_bytes()


@pytest.mark.django_db
def test_ingest_stores_entries_with_provenance_and_indexes_them():
    doc = document_process(document_submit("swift_grpo_notes.txt", [NOTES]).document.pk)
    assert doc.status == "done" and doc.format == "notes"
    assert doc.entries_created == Entry.objects.count() == 7
    occ = Occurrence.objects.order_by("line_start").first()
    assert (occ.filename, occ.line_start, occ.document_id) == ("swift_grpo_notes.txt", 1, doc.pk)
    assert Embedding.objects.count() == 7
    meta = get_index().meta()
    assert meta is not None and meta.count == 7


@pytest.mark.django_db
def test_reingesting_the_same_file_changes_nothing():
    first = document_submit("notes.txt", [NOTES])
    document_process(first.document.pk)
    before = (Document.objects.count(), Entry.objects.count(), Occurrence.objects.count(), get_index().meta())
    again = document_submit("renamed.txt", [NOTES])
    assert not again.created and again.document.pk == first.document.pk
    document_process(again.document.pk)
    # Even a forced second run over the same document stores no duplicate.
    Document.objects.filter(pk=first.document.pk).update(status="processing")
    document_process(first.document.pk)
    after = (Document.objects.count(), Entry.objects.count(), Occurrence.objects.count(), get_index().meta())
    assert before[:3] == after[:3] == (1, 7, 7)
    assert after[3].count == 7


@pytest.mark.django_db
def test_binary_upload_is_refused_and_nothing_is_stored():
    with pytest.raises(IngestError, match="binary"):
        document_submit("model.bin", [b"\x00\x01\x02\x03" * 4096])
    assert Document.objects.count() == 0 and Entry.objects.count() == 0


@pytest.mark.django_db
def test_ingest_command_reports_each_file_and_fails_on_a_bad_one(tmp_path, capsys):
    bad = tmp_path / "weights.log"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(Exception, match="1 file"):
        call_command("ingest", str(ROOT / "samples"), str(bad))
    out = capsys.readouterr()
    assert "swift_grpo_notes.txt: notes, 7 problem→fix pairs, 7 new entries" in out.out
    assert "weights.log: refused" in out.err
    call_command("ingest", str(ROOT / "samples"))
    assert "already ingested" in capsys.readouterr().out


@pytest.mark.django_db
def test_rebuild_index_recreates_the_file_from_the_database():
    document_process(document_submit("notes.txt", [NOTES]).document.pk)
    get_index().path.unlink()
    call_command("rebuild_index")
    meta = get_index().meta()
    assert meta is not None and meta.count == Entry.objects.count()
