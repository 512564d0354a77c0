from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from kb.pack import pack_load


class Command(BaseCommand):
    help = (
        "Load the starter pack (starter_pack/entries/*.json): common public failures with their fixes "
        "and sources. Idempotent; a newer pack updates its entries but never the team's edits to them."
    )

    def handle(self, *args: Any, **opts: Any) -> None:
        out = pack_load()
        self.stdout.write(
            f"starter pack v{out.version}: {out.created} new, {out.updated} updated, "
            f"{out.kept_team_edits} kept as the team edited them, {out.unchanged} unchanged"
        )
