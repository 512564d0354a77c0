"""Issue 11: loading the starter pack, provenance, and the pack never swallowing the team's entries."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from kb.models import Entry
from kb.pack import PACK_DIR, pack_entries, pack_load, pack_reports
from tests.conftest import DATA
from triage.services import triage_log

TEST_PACK = DATA / "pack"
ZMQ = "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5555')\n"


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    shutil.copytree(TEST_PACK, tmp_path / "pack")
    return tmp_path / "pack"


def test_loading_twice_changes_nothing(db, pack):
    first = pack_load(pack)
    assert (first.created, first.updated) == (2, 0)
    before = list(Entry.objects.order_by("pk").values_list("pk", "title", "remedy_markdown", "updated_at"))
    second = pack_load(pack)
    assert (second.created, second.updated, second.unchanged) == (0, 0, 2)
    assert list(Entry.objects.order_by("pk").values_list("pk", "title", "remedy_markdown", "updated_at")) == before


def test_a_newer_pack_updates_its_entries_but_never_the_teams_edits(db, pack, editor):
    from kb.services import entry_update

    pack_load(pack)
    zmq = Entry.objects.get(pack_id="test-zmq-port-in-use")
    entry_update(zmq, title=zmq.title, remedy_markdown="Our cluster: run `fuser -k 5555/tcp` first.", user=editor)
    data = json.loads((pack / "entries" / "test.json").read_text())
    for e in data:
        e["fix"] += " (Updated in pack v2.)"
        e["references"].append("https://example.org/v2")
    (pack / "entries" / "test.json").write_text(json.dumps(data))
    (pack / "VERSION").write_text("2")
    out = pack_load(pack)
    assert (out.updated, out.kept_team_edits) == (1, 1)
    zmq.refresh_from_db()
    assert (
        zmq.remedy_markdown == "Our cluster: run `fuser -k 5555/tcp` first."
        and "https://example.org/v2" in zmq.references
    )
    disk = Entry.objects.get(pack_id="test-disk-full")
    assert "Updated in pack v2." in disk.remedy_markdown and disk.pack_version == 2


def test_migrate_and_ingest_never_load_the_pack(db, tmp_path):
    call_command(
        "ingest", str(Path(__file__).resolve().parents[2] / "samples" / "swift_grpo_notes.txt"), stdout=StringIO()
    )
    assert not Entry.objects.filter(origin="pack").exists()


def test_results_say_where_the_knowledge_came_from(db, pack, viewer_client):
    pack_load(pack)
    page = viewer_client.post("/", {"log": ZMQ}).content.decode()
    assert "from the starter pack" in page and "https://example.org/issues/1" in page
    entry = Entry.objects.get(pack_id="test-zmq-port-in-use")
    detail = viewer_client.get(f"/kb/entries/{entry.pk}/").content.decode()
    assert "from the starter pack" in detail and "Checked 2026-11-23" in detail


def test_a_team_entry_of_the_same_failure_ranks_above_the_packs(db, pack):
    from kb.services import entry_create_from_paste, entry_update

    pack_load(pack)
    team = entry_create_from_paste(ZMQ)  # the team hits it and writes its own fix
    assert team.origin == "team" and team.pack_id is None  # not swallowed into the pack's entry
    entry_update(team, title=team.title, remedy_markdown="Our launcher leaks port 5555: kill it.")
    result = triage_log(ZMQ)
    ids = [m.entry_id for m in result.matches]
    pack_entry = Entry.objects.get(pack_id="test-zmq-port-in-use").pk
    assert ids[0] == team.pk and pack_entry in ids and result.matches[0].origin == "team"


def test_second_reports_are_test_queries_and_are_not_stored(db, pack):
    pack_load(pack)
    reports = pack_reports(pack)
    assert [r["case"] for r in reports] == ["test-zmq-port-in-use"]
    assert not Entry.objects.filter(problem_excerpt__contains="10.0.0.3").exists()


@pytest.mark.skipif(not list((PACK_DIR / "entries").glob("*.json")), reason="no starter pack yet")
def test_the_shipped_pack_is_valid_and_large_enough():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(PACK_DIR / "validate.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
    entries = pack_entries()
    assert len(entries) >= 200 and sum(len(e.reports) > 1 for e in entries) >= 100
    assert all(e.references for e in entries)


@pytest.mark.skipif(not list((PACK_DIR / "entries").glob("*.json")), reason="no starter pack yet")
def test_the_shipped_pack_answers_its_own_reports_and_other_users_reports(db):
    pack_load()
    ids = dict(Entry.objects.filter(origin="pack").values_list("pack_id", "pk"))
    own = [p.id for p in pack_entries() if (m := triage_log(p.reports[0][0]).matches) and m[0].entry_id == ids[p.id]]
    assert len(own) == len(ids), sorted(set(ids) - set(own))  # self-consistency
    reports = pack_reports()
    answers = [triage_log(r["log"]) for r in reports]
    hit1 = sum(
        bool(a.matches) and a.matches[0].entry_id == ids[r["case"]] for a, r in zip(answers, reports, strict=True)
    )
    no_match = sum(a.verdict == "no_match" for a in answers)
    print(f"second reports: Hit@1 {hit1 / len(reports):.3f}, no_match {no_match / len(reports):.3f}")
    assert hit1 / len(reports) >= 0.85 and no_match / len(reports) <= 0.10


def test_a_team_entry_still_needing_a_fix_does_not_hide_the_packs_fix(db, pack):
    from kb.services import entry_create_from_paste

    pack_load(pack)
    team = entry_create_from_paste(ZMQ)  # seen by the team, no fix written yet
    result = triage_log(ZMQ)
    pack_entry = Entry.objects.get(pack_id="test-zmq-port-in-use").pk
    ids = [m.entry_id for m in result.matches]
    assert team.pk in ids and pack_entry in ids
    assert ids.index(pack_entry) < ids.index(team.pk) or result.matches[0].score == result.matches[1].score
