from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

# Exit codes, distinct per answer (documented in the README):
EXIT = {"match": 0, "no_match": 1, "error": 2, "possible": 3}


class Command(BaseCommand):
    help = (
        "Triage a log file (or - for standard input). With FIXBASE_URL (and FIXBASE_TOKEN) set, a running "
        "server answers, in its time; --local (or no FIXBASE_URL) loads the model here. "
        "Exit codes: 0 match, 1 no match, 3 possibly related, 2 error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--top-k", type=int, default=5)
        parser.add_argument("--local", action="store_true", help="triage in this process even if FIXBASE_URL is set")
        parser.add_argument("--timeout", type=float, default=60.0)

    def handle(self, *args: Any, **opts: Any) -> None:
        text = sys.stdin.read() if opts["file"] == "-" else self._read(opts["file"])
        if not text.strip():
            self.stderr.write("The log is empty.")
            sys.exit(EXIT["error"])
        url = os.environ.get("FIXBASE_URL", "")
        data = self._remote(url, text, opts) if url and not opts["local"] else self._here(text, opts["top_k"])
        if opts["json"]:
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            self._print(data)
        sys.exit(EXIT.get(str(data.get("verdict")), EXIT["error"]))

    def _here(self, text: str, top_k: int) -> dict[str, Any]:
        from triage.presenters import result_as_dict
        from triage.services import triage_and_record

        result, _ = triage_and_record(text, "cli", top_k=top_k)
        return result_as_dict(result)

    def _remote(self, url: str, text: str, opts: dict[str, Any]) -> dict[str, Any]:
        import urllib.error

        from clients.fixbase_ci import ask, keep_what_matters

        try:
            return ask(
                url, os.environ.get("FIXBASE_TOKEN", ""), keep_what_matters(text), {}, opts["top_k"], opts["timeout"]
            )
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500]
            self.stderr.write(f"{url} answered {exc.code}: {detail}")
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
            self.stderr.write(f"Could not ask {url}: {getattr(exc, 'reason', exc)} (--local triages here).")
        sys.exit(EXIT["error"])

    def _print(self, data: dict[str, Any]) -> None:
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
            raise CommandError(f"Cannot read {path}: {exc}", returncode=EXIT["error"]) from exc
