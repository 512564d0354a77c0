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


@pytest.mark.django_db
def test_the_same_problem_seen_again_becomes_an_occurrence_of_its_entry():
    raw = (
        "step 10 loss 0.3\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/site-packages/vllm/sampling_params.py", line 397, in _verify_args\n'
        "    raise ValueError(\n"
        "ValueError: max_tokens must be at least 1, got -1234.\n"
    )
    first = document_process(document_submit("run1.log", [raw.encode()]).document.pk)
    assert first.entries_created == 1
    entry = Entry.objects.get()
    assert entry.needs_fix
    notes = "# Raise max_model_len: prompt + max_tokens must fit\n" + raw.replace("-1234", "-777").replace(
        "step 10", "step 99"
    )
    second = document_process(document_submit("notes.txt", [notes.encode()]).document.pk)
    assert (second.entries_created, second.entries_grouped) == (0, 1)
    entry.refresh_from_db()
    assert Entry.objects.count() == 1
    assert [o.filename for o in entry.occurrences.all()] == ["run1.log", "notes.txt"]
    assert entry.remedy_markdown.startswith("Raise max_model_len")  # the fix the second sighting brought


@pytest.mark.django_db
def test_different_code_paths_with_the_same_message_stay_separate():
    def tb(module: str, func: str) -> str:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/opt/site-packages/{module}.py", line 1, in {func}\n'
            "    x()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        )

    document_process(
        document_submit("a.log", [tb("transformers/modeling_utils", "from_pretrained").encode()]).document.pk
    )
    document_process(
        document_submit("b.log", [tb("verl/workers/actor/dp_actor", "update_policy").encode()]).document.pk
    )
    assert Entry.objects.count() == 2


# The ms-swift notes of ../shared/samples have a heading with no log under it (its line 62);
# a revised copy of the notes must not make it a second entry.
HEADING_ONLY = "# 如果在swift rollout中使用multi_turn_scheduler，需要external_plugins\n"
WITH_A_LOG = "# Lower max_tokens\nValueError: max_tokens must be at least 1, got -1234.\n"


@pytest.mark.django_db
def test_a_revised_copy_of_notes_adds_no_second_entry_for_a_heading_without_a_log():
    document_process(document_submit("notes.txt", [(WITH_A_LOG + "\n" + HEADING_ONLY).encode()]).document.pk)
    assert Entry.objects.count() == 2
    revised = WITH_A_LOG + "\n\n" + HEADING_ONLY.replace("\n", "  \n")  # a blank line and trailing spaces more
    second = document_process(document_submit("notes-v2.txt", [revised.encode()]).document.pk)

    assert Entry.objects.count() == 2
    assert (second.entries_parsed, second.entries_created, second.entries_grouped) == (2, 0, 2)


@pytest.mark.django_db
def test_headings_that_differ_only_in_a_number_stay_two_entries():
    notes = "# Set rollout.n to 8 when GRPO reports zero std\n\n# Set rollout.n to 16 when GRPO reports zero std\n"
    doc = document_process(document_submit("notes.txt", [notes.encode()]).document.pk)

    assert (doc.entries_parsed, doc.entries_created, doc.entries_grouped) == (2, 2, 0)


@pytest.mark.django_db
def test_a_problem_seen_twice_in_one_document_counts_as_a_repeat():
    raw = "Traceback (most recent call last):\nValueError: max_tokens must be at least 1, got -1234.\n"
    notes = f"# Lower max_tokens\n{raw}\n# Lower max_tokens again\n{raw.replace('-1234', '-7')}"
    doc = document_process(document_submit("notes.txt", [notes.encode()]).document.pk)

    assert (doc.entries_parsed, doc.entries_created, doc.entries_grouped) == (2, 1, 1)
    assert Entry.objects.get().occurrences.count() == 2


@pytest.mark.django_db
def test_the_same_words_with_another_fix_stay_two_entries():
    from kb.services import NewEntry, entries_ingest

    words = "Still the same error after that, it fails again."
    outcome = entries_ingest(
        [
            NewEntry(words, words, "Lower the batch size.", "chat-a.md", None, 5, 9, 5, 5),
            NewEntry(words, words, "Reinstall flash-attn against your torch.", "chat-b.md", None, 7, 12, 7, 7),
        ]
    )

    assert len(outcome.created) == 2 and outcome.folded == 0
