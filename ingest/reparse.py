"""Documents an older version of the parsers read, parsed again after an upgrade.

A document keeps the stamp of the parsers that read it (`ingest.reading.parser_reading`); one read by
an older version may hold problems that version could not see (a traceback wrapped at a fixed width,
a warning asked about). Only the problems not stored yet are added.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction

from ingest.models import Document
from ingest.parsers import ParseError
from ingest.reading import parser_reading
from ingest.services import candidate_entries, document_parse
from kb.services import entries_ingest

logger = logging.getLogger("fixbase.ingest")


@dataclass(frozen=True)
class Reparsed:
    documents: int  # read again
    created: int  # new entries from problems the older reading did not see
    grouped: int  # such problems that repeat an entry


def documents_reparse() -> Reparsed:
    """Parse again every ingested document that an older version of the parsers read, and store
    the problems it now finds that are not stored yet (a problem already stored at the same place
    in the document is left as it is). A document whose stored text is gone, or that no longer
    parses, keeps what it has."""
    current = parser_reading()
    documents = created = grouped = 0
    for pk in (
        Document.objects.filter(status=Document.Status.DONE).exclude(reading=current).values_list("pk", flat=True)
    ):
        doc = Document.objects.get(pk=pk)
        try:
            _, candidates = document_parse(doc)
        except (OSError, ParseError) as exc:
            logger.warning("%s not read again: %s", doc.filename, exc)
            continue
        with transaction.atomic():
            locked = Document.objects.select_for_update().get(pk=pk)
            outcome = entries_ingest(candidate_entries(locked, candidates))
            Document.objects.filter(pk=pk).update(
                entries_parsed=len(candidates),
                entries_created=locked.entries_created + len(outcome.created),
                entries_grouped=locked.entries_grouped + outcome.folded,
                entries_embedded=locked.entries_embedded + outcome.embedded,
                reading=current,
            )
        documents, created, grouped = documents + 1, created + len(outcome.created), grouped + outcome.folded
        if outcome.created or outcome.folded:
            logger.info("%s read again: %d new entries, %d repeats", doc.filename, len(outcome.created), outcome.folded)
    return Reparsed(documents=documents, created=created, grouped=grouped)
