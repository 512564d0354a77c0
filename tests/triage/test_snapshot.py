from __future__ import annotations

import time

from kb.services import NewEntry, entries_ingest
from triage import snapshot
from triage.services import triage_log


def probe(k: int) -> NewEntry:
    return NewEntry(f"probe {k}", f"KeyError: 'snapshot_probe_{'xyz'[k]}'", "fix it", "probe.log", None, 1, 1, 1, 1)


def test_small_knowledge_base_sees_a_write_at_once(transactional_db):
    entries_ingest([probe(0)])
    assert triage_log("KeyError: 'snapshot_probe_x'").matches[0].title == "probe 0"
    entries_ingest([probe(1)])
    assert triage_log("KeyError: 'snapshot_probe_y'").matches[0].title == "probe 1"


def test_large_knowledge_base_answers_from_the_previous_copy_while_rebuilding(transactional_db, settings):
    settings.FIXBASE_SYNC_REBUILD_ENTRIES = 0  # treat this knowledge base as a large one
    snapshot._current = None
    entries_ingest([probe(0)])
    first = snapshot.get_snapshot()  # no copy yet: built on the spot
    entries_ingest([probe(1)])
    stale = snapshot.get_snapshot()
    assert stale is first  # answered at once from the previous copy...
    deadline = time.monotonic() + 30
    while snapshot.get_snapshot() is first and time.monotonic() < deadline:
        time.sleep(0.05)
    fresh = snapshot.get_snapshot()
    assert fresh is not first and len(fresh.records) == 2  # ...and the new entry arrives by itself
    assert triage_log("KeyError: 'snapshot_probe_y'").matches[0].title == "probe 1"
