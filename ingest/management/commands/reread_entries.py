from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ingest.reading import parser_reading
from ingest.reparse import documents_reparse
from kb.services import entries_reread


class Command(BaseCommand):
    help = (
        "After upgrading Fixbase: parse again the documents an older version read, storing the problems it "
        "could not see, then read every entry's problem text again and store what changed (type, message, "
        "frames, fingerprint, embedded text). Titles, remedies and history are kept; running it again finds "
        "nothing to do."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-changed",
            action="store_true",
            help="Read the entries again only when this version reads logs differently from the last run "
            "(what `make run` and the compose file's migrate step use on every start).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        docs = documents_reparse()
        self.stdout.write(
            f"{docs.documents} documents parsed again: {docs.created} new entries, {docs.grouped} repeats of an entry"
        )
        done = entries_reread(parser_reading(), only_if_changed=opts["if_changed"])
        if done is None:
            self.stdout.write("entries already read by this version")
            return
        self.stdout.write(
            f"{done.checked} entries read again: {len(done.changed)} changed, {done.embedded} embedded again"
        )
