"""The wiki's writes: edit and revert an entry, a pasted log as a "needs a fix" entry, merge and
unmerge. Each is a revision (django-reversion) by the user who made it."""

from __future__ import annotations

from typing import Any

import numpy as np
import reversion
from django.db import transaction
from django.utils import timezone
from reversion.models import Version

from kb.embedding import get_embedder
from kb.models import Embedding, Entry, KbState, Merge, Occurrence
from kb.redact import redact
from kb.remedy_markdown import fences_closed
from kb.services.entries import NewEntry, entries_ingest
from kb.services.vectors import entries_embed, index_add
from kb.signature import signature_from_text
from kb.vector_index import get_index


def _first_revision(entry: Entry) -> None:
    """An entry made by ingest has no revision yet: record it as it was, so the first edit can
    be reverted."""
    if not Version.objects.get_for_object(entry).exists():
        with reversion.create_revision():
            reversion.set_comment("as first recorded")
            reversion.add_to_revision(entry)


def entry_update(entry: Entry, *, title: str, remedy_markdown: str, user: Any = None, comment: str = "") -> Entry:
    """Change an entry's title and remedy; the change is a revision by `user`."""
    title = title.replace("\x00", "")
    # A browser sends a textarea's lines with CRLF; the stored remedy has LF.
    remedy_markdown = remedy_markdown.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    if (title.strip()[:300] or entry.title) == entry.title and remedy_markdown == entry.remedy_markdown:
        return entry  # nothing changed: no empty revision in the history
    _first_revision(entry)
    with transaction.atomic(), reversion.create_revision():
        entry.title = title.strip()[:300] or entry.title
        entry.remedy_markdown = remedy_markdown
        entry.save(update_fields=["title", "remedy_markdown", "updated_at"])
        reversion.set_user(user if user is not None and user.is_authenticated else None)
        reversion.set_comment(comment or "edited")
        KbState.bump()
    return entry


def entry_revert(entry: Entry, version_id: int, user: Any = None) -> Entry:
    """Bring back an earlier revision's title and remedy, as a new revision."""
    version = Version.objects.get_for_object(entry).get(pk=version_id)
    fields = version.field_dict
    when = version.revision.date_created.strftime("%Y-%m-%d %H:%M")
    return entry_update(
        entry,
        title=str(fields.get("title", entry.title)),
        remedy_markdown=str(fields.get("remedy_markdown", "")),
        user=user,
        comment=f"reverted to the revision of {when}",
    )


def entry_create_from_paste(log: str, title: str = "", user: Any = None) -> Entry:
    """A pasted log with no known match becomes a "needs a fix" entry the team fills in later."""
    log = redact(log.replace("\x00", "")).text
    title = title.replace("\x00", "")
    sig, _ = signature_from_text(log)
    n_lines = max(1, len(log.splitlines()))
    outcome = entries_ingest(
        [
            NewEntry(
                title=title or sig.headline[:200] or "Pasted log",
                problem_text=log,
                remedy_markdown="",
                filename="pasted log",
                document_id=None,
                line_start=1,
                line_end=n_lines,
                problem_start=1,
                problem_end=n_lines,
            )
        ]
    )
    entry = Entry.objects.get(pk=(outcome.created or outcome.grouped)[0])
    if outcome.created and user is not None and user.is_authenticated:
        with reversion.create_revision():
            reversion.set_user(user)
            reversion.set_comment("added from a pasted log")
            reversion.add_to_revision(entry)
    return entry


def entry_merge(target: Entry, source: Entry, user: Any = None) -> Merge:
    """Fold `source` into `target`: its occurrences move over, its remedy is kept if the target
    has none (otherwise appended under a heading), and `source` is hidden from the wiki and the
    index. Nothing is deleted: `entry_unmerge` undoes it."""
    if target.pk == source.pk:
        raise ValueError("An entry cannot be merged into itself.")
    if target.merged_into_id or source.merged_into_id:
        raise ValueError("That entry was merged already.")
    _first_revision(target)
    who = user if user is not None and user.is_authenticated else None
    with transaction.atomic(), reversion.create_revision():
        moved = list(Occurrence.objects.filter(entry=source).values_list("pk", flat=True))
        Occurrence.objects.filter(pk__in=moved).update(entry=target)
        before = target.remedy_markdown
        extra = source.remedy_markdown.strip()
        if extra and extra not in target.remedy_markdown:
            target.remedy_markdown = (
                f"{fences_closed(target.remedy_markdown.rstrip())}\n\n### Also (from “{source.title}”)\n\n{extra}"
                if target.remedy_markdown.strip()
                else extra
            )
        target.save(update_fields=["remedy_markdown", "updated_at"])
        source.merged_into = target
        source.save(update_fields=["merged_into", "updated_at"])
        reversion.set_user(who)
        reversion.set_comment(f"merged #{source.pk} “{source.title[:80]}” into #{target.pk}")
        merge = Merge.objects.create(
            target=target,
            source=source,
            occurrence_ids=moved,
            target_remedy_before=before,
            target_remedy_after=target.remedy_markdown,
            merged_by=who,
        )
        KbState.bump()
    get_index().remove([source.pk])
    return merge


def entry_unmerge(merge: Merge, user: Any = None) -> Entry:
    """Undo a merge: the source entry comes back with its occurrences, and the target's remedy
    goes back to what it was if nobody edited it since."""
    if merge.undone_at is not None:
        raise ValueError("That merge was undone already.")
    who = user if user is not None and user.is_authenticated else None
    source = Entry.all_objects.get(pk=merge.source_id)
    target = Entry.all_objects.get(pk=merge.target_id)
    with transaction.atomic(), reversion.create_revision():
        Occurrence.objects.filter(pk__in=merge.occurrence_ids, entry=target).update(entry=source)
        if target.remedy_markdown == merge.target_remedy_after:
            target.remedy_markdown = merge.target_remedy_before
        target.save(update_fields=["remedy_markdown", "updated_at"])
        source.merged_into = None
        source.save(update_fields=["merged_into", "updated_at"])
        reversion.set_user(who)
        reversion.set_comment(f"undid the merge of #{source.pk} into #{target.pk}")
        merge.undone_at = timezone.now()
        merge.undone_by = who
        merge.save(update_fields=["undone_at", "undone_by"])
        KbState.bump()
    emb = Embedding.objects.filter(entry=source, model_name=get_embedder().name).first()
    if emb is not None:
        index_add([source.pk], np.frombuffer(bytes(emb.vector), dtype=np.float32).reshape(1, -1))
    else:
        entries_embed([source.pk])
    return source
