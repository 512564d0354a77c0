from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.models import Document
from ingest.services import STREAM_THRESHOLD, IngestError, document_process, document_submit_path
from ingest.tasks import ingest_document

TEXT_SUFFIXES = {".md", ".txt", ".log", ".out", ".err", ".json", ".gz", ".markdown"}


def expand(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in TEXT_SUFFIXES))
        elif p.exists():
            out.append(p)
        else:
            raise CommandError(f"No such file or folder: {raw}")
    return out


class Command(BaseCommand):
    help = "Ingest documents (files or folders): chat transcripts, annotated notes, raw logs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--format", default="", help="Override format detection: specstory, notes, log.")
        parser.add_argument("--queue", action="store_true", help="Queue to Celery workers instead of running here.")

    def _progress(self, path: Path) -> Callable[[int, int], None]:
        def show(scanned: int, total: int) -> None:
            width = 30
            done = int(width * scanned / total) if total else width
            self.stderr.write(
                f"\r{path.name}: [{'#' * done}{'.' * (width - done)}] {scanned / 1e6:.0f}/{total / 1e6:.0f} MB",
                ending="",
            )
            self.stderr.flush()

        return show

    def handle(self, *args: Any, **opts: Any) -> None:
        failed = 0
        for path in expand(opts["paths"]):
            try:
                submitted = document_submit_path(path, opts["format"])
            except IngestError as exc:
                failed += 1
                self.stderr.write(f"{path}: refused: {exc}")
                continue
            doc = submitted.document
            if opts["queue"]:
                ingest_document.delay(doc.pk)
                self.stdout.write(f"{path}: queued as document {doc.pk}")
                continue
            if not submitted.created and doc.status == Document.Status.DONE:
                self.stdout.write(f"{path}: already ingested (document {doc.pk}, {doc.entries_created} entries)")
                continue
            doc = document_process(doc.pk, on_progress=self._progress(path))
            if doc.size > STREAM_THRESHOLD:
                self.stderr.write("")  # end the progress bar's line
            if doc.status != Document.Status.DONE:
                failed += 1
                self.stderr.write(f"{path}: failed: {doc.error}")
                continue
            self.stdout.write(
                f"{path}: {doc.format}, {doc.entries_parsed} problem→fix pairs, {doc.entries_created} new entries, "
                f"{doc.entries_grouped} repeats of an entry"
            )
        if failed:
            raise CommandError(f"{failed} file(s) failed")
