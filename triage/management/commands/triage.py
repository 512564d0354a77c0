from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from triage.presenters import result_as_dict
from triage.services import triage_log


class Command(BaseCommand):
    help = "Triage a log file (or - for standard input) against the knowledge base."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--top-k", type=int, default=5)

    def handle(self, *args: Any, **opts: Any) -> None:
        text = sys.stdin.read() if opts["file"] == "-" else self._read(opts["file"])
        if not text.strip():
            raise CommandError("The log is empty.")
        result = triage_log(text, top_k=opts["top_k"])
        data = result_as_dict(result)
        if opts["json"]:
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
            return
        sig = data["signature"]
        self.stdout.write(
            f"verdict: {data['verdict']}   root error: {sig['exception'] or sig['pattern'] or sig['kind']}: {sig['message'][:150]}"
        )
        for note in data["notes"]:
            self.stdout.write(f"note: {note}")
        for rank, m in enumerate(data["matches"], 1):
            src = ", ".join(f"{s['filename']}:{s['line_start']}-{s['line_end']}" for s in m["sources"])
            self.stdout.write(f"{rank}. [{m['score']:.3f}] #{m['entry_id']} {m['title'][:100]}  ({src})")
            if rank == 1 and data["verdict"] == "match":
                remedy = m["remedy_markdown"].strip() or "(needs a fix)"
                self.stdout.write("   remedy: " + remedy[:400].replace("\n", "\n           "))

    def _read(self, path: str) -> str:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc}") from exc
