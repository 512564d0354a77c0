"""The starter pack: public failures of RL fine-tuning stacks, with their fixes and sources.

`starter_pack/entries/*.json` (format in starter_pack/validate.py) and `starter_pack/VERSION`.
Each pack entry becomes one entry of origin "pack", made from its first report (a log as a user
really pasted it); its other reports are test queries, never stored. Loading is idempotent and
versioned: a newer pack updates its entries unless the team edited them since.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

PACK_DIR = Path(settings.BASE_DIR) / "starter_pack"


@dataclass(frozen=True)
class PackEntry:
    id: str
    title: str
    frameworks: tuple[str, ...]
    versions: str
    category: str
    error: str
    cause: str
    fix: str
    references: tuple[str, ...]
    checked: str
    reports: tuple[tuple[str, str], ...]  # (log, source URL); the first is the entry's problem

    @property
    def remedy_markdown(self) -> str:
        versions = f"\n\n**Versions.** {self.versions}" if self.versions.strip() else ""
        # The fix starts on the line under its label: prose reads on as one paragraph, and a list
        # is a list (the renderer lets a list start right under a line of text).
        return f"**Cause.** {self.cause.strip()}\n\n**Fix.**\n{self.fix.strip()}{versions}"


@dataclass(frozen=True)
class LoadOutcome:
    version: int
    created: int
    updated: int
    kept_team_edits: int
    unchanged: int


def pack_version(pack_dir: Path = PACK_DIR) -> int:
    path = pack_dir / "VERSION"
    return int(path.read_text().strip()) if path.exists() else 0


def pack_entries(pack_dir: Path = PACK_DIR) -> list[PackEntry]:
    out: list[PackEntry] = []
    for f in sorted((pack_dir / "entries").glob("*.json")):
        for e in json.loads(f.read_text(encoding="utf-8")):
            out.append(
                PackEntry(
                    id=e["id"],
                    title=e["title"],
                    frameworks=tuple(e.get("frameworks", ())),
                    versions=e.get("versions", ""),
                    category=e.get("category", "other"),
                    error=e.get("error", ""),
                    cause=e["cause"],
                    fix=e["fix"],
                    references=tuple(e.get("references", ())),
                    checked=e.get("checked", ""),
                    reports=tuple((r["log"], r["source"]) for r in e["reports"]),
                )
            )
    return out


def _hash(title: str, remedy: str) -> str:
    return hashlib.sha1(f"{title}\0{remedy}".encode()).hexdigest()


def pack_load(pack_dir: Path = PACK_DIR) -> LoadOutcome:
    """Create the pack's entries that are missing, update those a newer pack changed (unless the
    team edited them since: their title and remedy stay, their references are refreshed), and
    leave everything else alone. Nothing is grouped with a team entry."""
    from kb.models import Entry, KbState
    from kb.services import NewEntry, entries_create_separate, entry_problem_replace

    version = pack_version(pack_dir)
    existing = {e.pack_id: e for e in Entry.all_objects.filter(origin="pack")}
    created = updated = kept = unchanged = 0
    new_items: list[tuple[PackEntry, NewEntry]] = []
    for p in pack_entries(pack_dir):
        log = p.reports[0][0]
        meta = {
            "frameworks": list(p.frameworks),
            "versions": p.versions,
            "category": p.category,
            "checked": p.checked,
            "error": p.error,
        }
        entry = existing.get(p.id)
        if entry is None:
            n = max(1, len(log.splitlines()))
            new_items.append((p, NewEntry(p.title, log, p.remedy_markdown, f"starter pack: {p.id}", None, 1, n, 1, n)))
            continue
        edited = entry.pack_hash != _hash(entry.title, entry.remedy_markdown)
        if entry.pack_version >= version and not edited and entry.pack_hash == _hash(p.title, p.remedy_markdown):
            unchanged += 1
            continue
        with transaction.atomic():
            entry.references, entry.pack_meta, entry.pack_version = list(p.references), meta, version
            if edited:
                kept += 1  # the team's words win; only the provenance is refreshed
            else:
                entry.title, entry.remedy_markdown = p.title[:300], p.remedy_markdown
                entry.pack_hash = _hash(entry.title, entry.remedy_markdown)
                updated += 1
            entry.save()
            if not edited and entry.problem_excerpt != log[:20000]:
                entry_problem_replace(entry, log)
            KbState.bump()
    if new_items:
        made = entries_create_separate([item for _, item in new_items])
        for (p, _), entry in zip(new_items, made, strict=True):
            entry.origin, entry.pack_id, entry.pack_version = "pack", p.id, version
            entry.references = list(p.references)
            entry.pack_meta = {
                "frameworks": list(p.frameworks),
                "versions": p.versions,
                "category": p.category,
                "checked": p.checked,
                "error": p.error,
            }
            entry.pack_hash = _hash(entry.title, entry.remedy_markdown)
        Entry.objects.bulk_update(
            made, ["origin", "pack_id", "pack_version", "references", "pack_meta", "pack_hash"], batch_size=500
        )
        KbState.bump()
        created = len(made)
    return LoadOutcome(version, created, updated, kept, unchanged)


def pack_reports(pack_dir: Path = PACK_DIR) -> list[dict[str, Any]]:
    """The pack's second (and later) reports as labelled test queries: {"id", "case", "log", "source"}."""
    out = []
    for p in pack_entries(pack_dir):
        for k, (log, source) in enumerate(p.reports[1:], 1):
            out.append({"id": f"{p.id}#{k}", "case": p.id, "log": log, "source": source, "expect": True})
    return out
