from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kb.services import entries_reread


class Command(BaseCommand):
    help = (
        "Read every entry's problem text again with this version's scanner and store what changed (type, "
        "message, frames, fingerprint, embedded text). Run it after upgrading Fixbase: entries ingested by "
        "an older version keep their older reading until then. Titles, remedies and history are kept."
    )

    def handle(self, *args: Any, **opts: Any) -> None:
        done = entries_reread()
        self.stdout.write(
            f"{done.checked} entries read again: {len(done.changed)} changed, {done.embedded} embedded again"
        )
