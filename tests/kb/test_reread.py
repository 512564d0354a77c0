"""Entries stored by an older version are read again by `manage.py reread_entries`."""

from __future__ import annotations

import io

from django.core.management import call_command

from kb.models import Embedding, Entry, KbState
from kb.services.vectors import _sha1
from tests.factories import entry_make

WRAPPED = (
    # A DeepSpeed user's paste (a public issue), wrapped at 88 columns inside the frames' paths.
    '[rank0]:   File "/home/agittis/miniconda3/envs/rp2/lib/python3.11/site-packages/deepspeed/runti\n'
    'me/engine.py", line 1201, in _configure_distributed_model\n'
    "[rank0]:     self._broadcast_model()\n"
    '[rank0]:   File "/home/agittis/miniconda3/envs/rp2/lib/python3.11/site-packages/deepspeed/runti\n'
    'me/engine.py", line 1120, in _broadcast_model\n'
)


def test_reread_stores_this_versions_reading_and_keeps_what_people_wrote(db):
    entry = entry_make(WRAPPED, "Make the parameters contiguous before deepspeed.initialize.")
    other = entry_make("KeyError: 'grpo'", "Upgrade ms-swift.")
    current = {f: getattr(entry, f) for f in ("kind", "frames", "fingerprint", "signature_text")}
    assert "deepspeed.runtime.engine:_broadcast_model" in current["frames"]
    # What a version that could not read wrapped frames stored: no frames, the text as a whole.
    Entry.all_objects.filter(pk=entry.pk).update(kind="text", frames=[], fingerprint="old", signature_text="old")
    Embedding.objects.filter(entry_id=entry.pk).update(text_sha1=_sha1("old"))
    Entry.all_objects.filter(pk=entry.pk).update(title="Broadcast fails (edited by hand)")

    out = io.StringIO()
    call_command("reread_entries", stdout=out)

    assert out.getvalue().splitlines()[-1] == "2 entries read again: 1 changed, 1 embedded again"
    entry.refresh_from_db()
    assert {f: getattr(entry, f) for f in current} == current
    assert entry.title == "Broadcast fails (edited by hand)"
    assert entry.remedy_markdown == "Make the parameters contiguous before deepspeed.initialize."
    assert Embedding.objects.get(entry_id=entry.pk).text_sha1 == _sha1(entry.signature_text)
    other_before = other.updated_at
    other.refresh_from_db()
    assert other.updated_at == other_before  # unchanged, not written

    # A second run finds nothing to do.
    out = io.StringIO()
    call_command("reread_entries", stdout=out)
    assert out.getvalue().splitlines()[-1] == "2 entries read again: 0 changed, 0 embedded again"


def test_on_every_start_the_entries_are_read_again_only_when_the_scanner_changed(db):
    entry = entry_make(WRAPPED, "Make the parameters contiguous before deepspeed.initialize.")
    call_command("reread_entries", "--if-changed", stdout=io.StringIO())  # the first start of this version

    # An entry left with an older reading is not looked at while the version is the same...
    Entry.all_objects.filter(pk=entry.pk).update(fingerprint="old")
    out = io.StringIO()
    call_command("reread_entries", "--if-changed", stdout=out)
    assert out.getvalue().splitlines()[-1] == "entries already read by this version"
    assert Entry.all_objects.get(pk=entry.pk).fingerprint == "old"

    # ...and is read again by the first start of another version.
    KbState.objects.filter(pk=1).update(reading="an older version")
    out = io.StringIO()
    call_command("reread_entries", "--if-changed", stdout=out)
    assert out.getvalue().splitlines()[-1] == "1 entries read again: 1 changed, 0 embedded again"
    assert Entry.all_objects.get(pk=entry.pk).fingerprint != "old"
