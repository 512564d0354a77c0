from __future__ import annotations

import io
import time
from datetime import UTC, datetime

from django.core.management import call_command

from kb.services import NewEntry, entries_ingest
from triage import ranking_cache
from triage.services import triage_log


def probe(k: int) -> NewEntry:
    return NewEntry(f"probe {k}", f"KeyError: 'snapshot_probe_{'xyz'[k]}'", "fix it", "probe.log", None, 1, 1, 1, 1)


def test_small_knowledge_base_sees_a_write_at_once(transactional_db):
    entries_ingest([probe(0)])
    assert triage_log("KeyError: 'snapshot_probe_x'").matches[0].title == "probe 0"
    entries_ingest([probe(1)])
    assert triage_log("KeyError: 'snapshot_probe_y'").matches[0].title == "probe 1"


def test_large_knowledge_base_answers_from_the_previous_copy_while_rebuilding(transactional_db, settings, monkeypatch):
    from kb.models import Entry
    from kb.services import entry_update

    settings.FIXBASE_SYNC_REBUILD_ENTRIES = 0  # treat this knowledge base as a large one
    monkeypatch.setattr(ranking_cache, "LAYER_LIMIT", 0)  # and any change as too many to layer
    ranking_cache._current = None
    entries_ingest([probe(0)])
    first = ranking_cache.get_snapshot()  # no copy yet: built on the spot
    entry_update(Entry.objects.get(title="probe 0"), title="probe 0", remedy_markdown="a better fix")
    stale = ranking_cache.get_snapshot()
    assert stale is first  # answered at once from the previous copy...
    deadline = time.monotonic() + 30
    while ranking_cache.get_snapshot() is first and time.monotonic() < deadline:
        time.sleep(0.05)
    fresh = ranking_cache.get_snapshot()
    assert fresh is not first  # ...and the rebuilt copy arrives by itself
    assert triage_log("KeyError: 'snapshot_probe_x'").matches[0].remedy_markdown == "a better fix"


def test_added_entries_are_layered_on_the_full_build_and_rank_as_after_a_rebuild(transactional_db, settings):
    from ingest.services import document_process, document_submit_path
    from tests.conftest import ROOT
    from triage.corpus import LayeredCorpus

    settings.FIXBASE_SYNC_REBUILD_ENTRIES = 0
    ranking_cache._current = None
    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    full = ranking_cache.get_snapshot()
    entries_ingest([probe(0), probe(1)])
    layered = ranking_cache.get_snapshot()  # at once, not in the background
    assert isinstance(layered.corpus, LayeredCorpus) and layered.size == full.size + 2
    queries = [
        "KeyError: 'snapshot_probe_y'",
        "(WorkerDict pid=99) RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "ValueError: max_tokens must be at least 1, got -12",
    ]
    seen = [[(m.entry_id, m.score) for m in triage_log(q).matches] for q in queries]
    ranking_cache._current = None  # a full rebuild of the same knowledge base
    rebuilt = [[(m.entry_id, m.score) for m in triage_log(q).matches] for q in queries]
    for got, want in zip(seen, rebuilt, strict=True):
        assert [i for i, _ in got][:2] == [i for i, _ in want][:2]
        assert abs(got[0][1] - want[0][1]) < 0.05


def test_edits_merges_and_deletions_of_built_entries_are_layered_and_rank_as_after_a_rebuild(
    transactional_db, settings
):
    from ingest.services import document_process, document_submit_path
    from kb.models import Entry
    from kb.services import entry_merge, entry_update
    from tests.conftest import ROOT
    from triage.corpus import LayeredCorpus

    settings.FIXBASE_SYNC_REBUILD_ENTRIES = 0
    ranking_cache._current = None
    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    entries_ingest([probe(0), probe(1), probe(2)])
    ranking_cache._current = None
    full = ranking_cache.get_snapshot()
    edited, merged, deleted = (Entry.objects.get(title=f"probe {k}") for k in range(3))
    entry_update(edited, title="probe 0 renamed zanzibar", remedy_markdown="a better fix")
    entry_merge(edited, merged)
    deleted.delete()
    layered = ranking_cache.get_snapshot()  # at once, not in the background
    assert isinstance(layered.corpus, LayeredCorpus) and layered.base is full
    assert layered.size == full.size - 2
    assert "zanzibar" in layered.corpus.docs[edited.pk].text_tokens
    assert merged.pk not in layered.corpus.docs and deleted.pk not in layered.corpus.docs
    queries = [
        "KeyError: 'snapshot_probe_x'",
        "KeyError: 'snapshot_probe_y'",
        "KeyError: 'snapshot_probe_z'",
        "(WorkerDict pid=99) RuntimeError: CUDA error: no kernel image is available for execution on the device",
    ]
    seen = [[m.entry_id for m in triage_log(q).matches] for q in queries]
    assert all(merged.pk not in ids and deleted.pk not in ids for ids in seen)
    assert seen[0][0] == edited.pk and seen[1][0] == edited.pk  # the merged probe's error finds the target
    ranking_cache._current = None  # a full rebuild of the same knowledge base
    rebuilt = [[m.entry_id for m in triage_log(q).matches] for q in queries]
    assert [ids[:2] for ids in seen] == [ids[:2] for ids in rebuilt]


def test_a_saved_full_build_is_mapped_by_the_next_process_and_checked_against_the_database(
    transactional_db, settings, tmp_path, monkeypatch
):
    from ingest.services import document_process, document_submit_path
    from kb.models import Entry
    from kb.services import entry_update
    from tests.conftest import ROOT

    settings.FIXBASE_RANKING_COPY_DIR = tmp_path / "ranking"
    settings.FIXBASE_SAVE_COPY_ENTRIES = 0  # save even this small build
    ranking_cache._current = None
    for path in sorted((ROOT / "samples").iterdir()):
        document_process(document_submit_path(path).document.pk)
    queries = [
        "(WorkerDict pid=99) RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "ValueError: max_tokens must be at least 1, got -12",
    ]
    built = [[(m.entry_id, m.score) for m in triage_log(q).matches] for q in queries]
    assert [d.name for d in (tmp_path / "ranking").iterdir()]  # saved beside the index

    # A new process (no copy in memory) maps the saved build: nothing is tokenised again.
    stream = ranking_cache.entry_records_stream

    def no_full_build(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not kwargs.keys() & {"after_pk", "pks"}:  # reading every entry: a full build
            raise AssertionError("the saved build should have been used")
        return stream(*args, **kwargs)

    monkeypatch.setattr(ranking_cache, "entry_records_stream", no_full_build)
    ranking_cache._current = None
    assert [[(m.entry_id, m.score) for m in triage_log(q).matches] for q in queries] == built
    assert ranking_cache.get_snapshot().base is not None  # the saved build, with nothing layered yet
    monkeypatch.undo()

    # Entries added since are layered on it, as in the process that built it.
    entries_ingest([probe(0)])
    ranking_cache._current = None
    assert triage_log("KeyError: 'snapshot_probe_x'").matches[0].title == "probe 0"
    assert ranking_cache.get_snapshot().base is not None

    # An entry of the saved build edited since: layered on it too.
    entry = Entry.objects.get(pk=built[0][0][0])
    entry_update(entry, title="edited since the save", remedy_markdown="fix")
    ranking_cache._current = None
    assert ranking_cache.get_snapshot().base is not None
    assert triage_log(queries[0]).matches[0].entry_id == entry.pk

    # More changes than are worth layering: built again from the database (and saved anew).
    monkeypatch.setattr(ranking_cache, "LAYER_LIMIT", 0)
    ranking_cache._current = None
    assert ranking_cache.get_snapshot().base is None
    monkeypatch.undo()

    # Saved by a version that read the entries' problem texts another way: built again.
    monkeypatch.setattr(ranking_cache, "ENTRY_READING", "another reading")
    ranking_cache._current = None
    assert ranking_cache.get_snapshot().base is None
    monkeypatch.undo()

    # Rows older than the saved build's (a restored backup): not that database, built again.
    Entry.all_objects.update(updated_at=datetime(2020, 1, 1, tzinfo=UTC))
    ranking_cache._current = None
    assert ranking_cache.get_snapshot().base is None

    # rebuild_index drops the saved copy.
    call_command("rebuild_index", stdout=io.StringIO())
    assert not (tmp_path / "ranking").exists()
