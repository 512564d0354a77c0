from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ingest.models import Document


def _doc(name: str, status: str = "queued") -> Document:
    return Document.objects.create(
        filename=name, content_hash=name * 8, size=1, file=f"documents/{name}", status=status
    )


@pytest.mark.django_db
def test_a_claim_takes_a_queued_or_failed_document_but_never_a_done_one():
    queued, failed, done = _doc("a"), _doc("b", "failed"), _doc("c", "done")
    assert Document.objects.filter(pk=queued.pk).claim("host:1") == 1
    assert Document.objects.filter(pk=failed.pk).claim("host:1") == 1
    assert Document.objects.filter(pk=done.pk).claim("host:1") == 0
    queued.refresh_from_db()
    assert (queued.status, queued.claimed_by, queued.heartbeat_at is not None) == ("processing", "host:1", True)
    done.refresh_from_db()
    assert done.status == "done"


@pytest.mark.django_db
def test_marking_failed_keeps_the_reason_frees_the_claim_and_leaves_done_documents_alone():
    working, done = _doc("a", "processing"), _doc("b", "done")
    Document.objects.filter(pk__in=[working.pk, done.pk]).update(claimed_by="host:1")
    assert Document.objects.filter(pk__in=[working.pk, done.pk]).mark_failed("x" * 3000) == 1
    working.refresh_from_db()
    done.refresh_from_db()
    assert (working.status, len(working.error), working.claimed_by) == ("failed", 2000, "")
    assert (done.status, done.claimed_by) == ("done", "host:1")


@pytest.mark.django_db
def test_stale_and_waiting_select_what_a_dead_worker_or_a_lost_task_left_behind():
    long_ago = timezone.now() - timedelta(hours=1)
    silent, beating, queued_old = _doc("a", "processing"), _doc("b", "processing"), _doc("c")
    Document.objects.filter(pk=silent.pk).update(heartbeat_at=long_ago)
    Document.objects.filter(pk=beating.pk).update(heartbeat_at=timezone.now())
    Document.objects.filter(pk=queued_old.pk).update(updated_at=long_ago)
    before = timezone.now() - timedelta(minutes=2)
    assert list(Document.objects.stale(before)) == [silent]
    assert list(Document.objects.waiting(before)) == [queued_old]
    assert Document.objects.filter(pk=silent.pk).requeue() == 1
    silent.refresh_from_db()
    assert (silent.status, silent.claimed_by) == ("queued", "")
