"""Ingest documents: store the upload (secrets removed), parse it, write entries to the kb."""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
import re
import socket
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ingest.dispatch import ingest_later
from ingest.models import Document
from ingest.parsers import FORMATS, Candidate, ParseError, decode_document, parse_document
from ingest.parsers.rawlog import candidates_from_stream
from ingest.parsers.stream import open_log
from ingest.reading import parser_reading
from kb.redact import redact
from kb.services import NewEntry, entries_ingest
from kb.textdecode import looks_binary, sniff_encoding

logger = logging.getLogger("fixbase.ingest")

STREAM_THRESHOLD = 16 << 20  # larger documents are scanned as logs, in bounded memory
REDACT_BATCH = 4 << 20


class IngestError(ValueError):
    """Bad input from a user: shown to them, nothing stored."""


@dataclass(frozen=True)
class Submitted:
    document: Document
    created: bool  # False when the same content was already uploaded

    @property
    def needs_processing(self) -> bool:
        """New, or uploaded before but never finished (a failed document is tried again)."""
        return self.created or self.document.status != Document.Status.DONE


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _media_dir() -> Path:
    path = Path(settings.MEDIA_ROOT) / "documents"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _redacted_lines(raw: Path, encoding: str, limit: int) -> Iterator[tuple[str, int, bool]]:
    """Decoded text of the stored upload in batches of whole lines, secrets removed, and whether
    the batch holds undecodable bytes; more than `limit` bytes of (decompressed) text is refused."""
    # Undecodable bytes become lone surrogates: replaced in the stored text, restored in the
    # kept original (document_submit).
    decoder = codecs.getincrementaldecoder(encoding)(errors="surrogateescape")
    pending = ""
    total = 0
    with open_log(raw) as fh:
        while True:
            chunk = fh.read(REDACT_BATCH)
            total += len(chunk)
            if total > limit:
                raise IngestError(
                    f"The file expands to more than {limit // 1024**2} MB of text; "
                    "upload the part of the log around the failure, or raise FIXBASE_MAX_EXPANDED_BYTES."
                )
            text = pending + decoder.decode(chunk, final=not chunk)
            if chunk:
                cut = text.rfind("\n") + 1
                if cut == 0 and len(text) > REDACT_BATCH:
                    cut = len(text)  # no newline in sight: do not hold an endless line in memory
                text, pending = text[:cut], text[cut:]
            text = text.replace("\r\n", "\n")
            lossy = not text.isascii() and SURROGATE_RE.search(text) is not None
            if lossy:
                text = text.translate(_HIDE_UNDECODABLE)  # RE2 reads UTF-8 only
            out = redact(text, mask_hosts=settings.FIXBASE_MASK_HOSTS)
            yield out.text, out.count, lossy
            if not chunk:
                return


# A byte the detected encoding could not decode: surrogateescape makes it a lone surrogate, which
# the redaction's RE2 cannot take, so it travels as a private-use character (U+F780 + byte - 0x80).
_HIDE_UNDECODABLE = {0xDC80 + b: 0xF780 + b for b in range(128)}
_SHOW_UNDECODABLE = {v: k for k, v in _HIDE_UNDECODABLE.items()}
UNDECODABLE_RE = re.compile("[\uf780-\uf7ff]")
SURROGATE_RE = re.compile("[\udc80-\udcff]")


def _byte_encoding(encoding: str) -> str:
    """The codec that writes the kept original back: without a byte-order mark per write."""
    return {"utf-16": "utf-16-le", "utf-8-sig": "utf-8"}.get(encoding, encoding)


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def document_submit(
    filename: str, chunks: Iterable[bytes], requested_format: str = "", uploaded_by: Any = None
) -> Submitted:
    """Validate and store an upload with its secrets removed; identical content is recognised.

    1. Stream the bytes to a temporary file, hashing and counting them (over the limit: refused).
    2. Same hash as a stored document: return that one.
    3. Refuse empty and binary files (gzip is opened first).
    4. Write the decoded text with secrets redacted: the original never stays on disk.
    Any refusal raises IngestError and leaves nothing behind.
    """
    if requested_format and requested_format not in FORMATS:
        raise IngestError(f"Unknown format {requested_format!r}; expected one of {', '.join(FORMATS)}.")
    media = _media_dir()
    # Named after this process, so a restarted one knows the partial files of a dead one.
    fd, tmp_name = tempfile.mkstemp(dir=media, prefix=f".upload-{worker_name().replace(':', '-')}-")
    tmp = Path(tmp_name)
    try:
        content_hash, size = _receive(chunks, fd)
        existing = Document.objects.filter(content_hash=content_hash).first()
        if existing is not None:
            if existing.status == Document.Status.FAILED:
                Document.objects.filter(pk=existing.pk).requeue()
                existing.refresh_from_db()
            return Submitted(existing, created=False)
        head = _readable_head(tmp)
        safe_name = filename.replace("\\", "/").rsplit("/", 1)[-1][:200] or "upload.txt"
        stored_name = f"{content_hash[:16]}-{safe_name.removesuffix('.gz')}"
        limit = settings.FIXBASE_MAX_EXPANDED_BYTES
        if _is_gzip(tmp):  # a gzip bomb is refused before it fills the disk
            limit = min(limit, max(64 * 1024**2, settings.FIXBASE_MAX_EXPANSION_RATIO * size))
        secrets, lossy = _write_redacted(tmp, media, stored_name, sniff_encoding(head), limit)
        with transaction.atomic():
            doc = Document.objects.create(
                filename=safe_name,
                content_hash=content_hash,
                size=size,
                file=f"documents/{stored_name}",
                requested_format=requested_format,
                secrets_redacted=secrets,
                undecodable_bytes=lossy,
                uploaded_by=uploaded_by if uploaded_by is not None and uploaded_by.is_authenticated else None,
            )
        return Submitted(doc, created=True)
    finally:
        tmp.unlink(missing_ok=True)


def _receive(chunks: Iterable[bytes], fd: int) -> tuple[str, int]:
    """Write the upload to the open file `fd`: its SHA-256 and size (over the limit: refused)."""
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            size += len(chunk)
            if size > settings.FIXBASE_MAX_UPLOAD_BYTES:
                raise IngestError(f"The file is larger than the {settings.FIXBASE_MAX_UPLOAD_BYTES} byte limit.")
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest(), size


def _readable_head(tmp: Path) -> bytes:
    """The first 64 KiB of the upload as text bytes (gzip opened): refused when damaged, empty or binary."""
    try:
        with open_log(tmp) as fh:
            head = fh.read(65536)
    except (OSError, EOFError, zlib.error) as exc:
        raise IngestError(f"The gzip file is damaged: {exc}.") from exc
    if not head.strip():
        raise IngestError("The file is empty.")
    if looks_binary(head, sniff_encoding(head)):
        raise IngestError("This looks like a binary file, not a log or a transcript; upload text (or .gz of text).")
    return head


def _write_redacted(tmp: Path, media: Path, stored_name: str, encoding: str, limit: int) -> tuple[int, int]:
    """Write the upload decoded, with secrets redacted, as `stored_name`; from the first byte that
    does not decode, also the original bytes (redacted) beside it as `.orig`. Returns the secrets
    redacted and the bytes that did not decode. A refusal or a read error leaves neither file."""
    original = media / f"{stored_name}.orig"
    secrets = lossy = 0
    try:
        with open(media / stored_name, "w", encoding="utf-8") as out_text:
            out_orig = None  # opened at the first undecodable byte: most uploads never need it
            for text, count, has_undecodable in _redacted_lines(tmp, encoding, limit):
                undecodable = len(UNDECODABLE_RE.findall(text)) if has_undecodable else 0
                lossy += undecodable
                if undecodable and out_orig is None:
                    out_text.flush()
                    out_orig = open(original, "wb")  # noqa: SIM115 - closed below
                    # What was written so far decoded cleanly: it is the original, re-encoded.
                    done = (media / stored_name).read_text(encoding="utf-8")
                    out_orig.write(done.encode(_byte_encoding(encoding), "surrogateescape"))
                out_text.write(UNDECODABLE_RE.sub("\ufffd", text) if undecodable else text)
                if out_orig is not None:
                    back = text.translate(_SHOW_UNDECODABLE) if undecodable else text
                    out_orig.write(back.encode(_byte_encoding(encoding), "surrogateescape"))
                secrets += count
            if out_orig is not None:
                out_orig.close()
    except IngestError:
        (media / stored_name).unlink(missing_ok=True)
        original.unlink(missing_ok=True)
        raise
    except (OSError, EOFError, zlib.error) as exc:
        (media / stored_name).unlink(missing_ok=True)
        original.unlink(missing_ok=True)
        raise IngestError(f"The file could not be read: {exc}.") from exc
    return secrets, lossy


def document_upload(
    filename: str, chunks: Iterable[bytes], requested_format: str = "", uploaded_by: Any = None
) -> Submitted:
    """An upload from the page or the API: stored (`document_submit`), then its ingest queued once
    the request's transaction commits, unless the same content is already done or on its way."""
    submitted = document_submit(filename, chunks, requested_format, uploaded_by=uploaded_by)
    if submitted.needs_processing:
        pk = submitted.document.pk
        transaction.on_commit(lambda: ingest_later(pk))
    return submitted


def document_submit_path(path: Path, requested_format: str = "") -> Submitted:
    def chunks() -> Iterator[bytes]:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                yield block

    return document_submit(path.name, chunks(), requested_format)


def document_claim(document_id: int) -> bool:
    """Mark a document as being processed by this worker; False when it is already done."""
    return bool(Document.objects.filter(pk=document_id).claim(worker_name()))


ProgressCallback = Callable[[int, int], None]  # (bytes scanned, bytes in all)


def _progress(document_id: int, total: int, extra: ProgressCallback | None) -> Callable[[int], None]:
    """Record progress on the document (and its heartbeat) at most once a second."""
    last = [timezone.now()]

    def report(scanned: int) -> None:
        now = timezone.now()
        if now - last[0] >= timedelta(seconds=1):
            Document.objects.filter(pk=document_id).heartbeat(scanned)
            last[0] = now
            if extra is not None:
                extra(scanned, total)

    return report


def document_parse(doc: Document, on_progress: ProgressCallback | None = None) -> tuple[str, list[Candidate]]:
    path = Path(doc.file.path)
    size = path.stat().st_size
    if size > STREAM_THRESHOLD and doc.requested_format in ("", "log"):
        return "log", candidates_from_stream(path, on_progress=_progress(doc.pk, size, on_progress))
    return parse_document(decode_document(path.read_bytes()), doc.requested_format)


def document_process(document_id: int, on_progress: ProgressCallback | None = None) -> Document:
    """Parse a stored document and write its entries; safe to run again on the same document.

    1. Claim it (processing, this worker, a heartbeat). 2. Parse it (big logs are streamed).
    3. In one transaction, under a row lock so two workers cannot both do it: store entries,
    occurrences and embeddings and mark the document done. A worker that dies before the
    commit leaves no entry behind, and the document is picked up again (`documents_requeue_stale`).
    """
    if not document_claim(document_id):
        return Document.objects.get(pk=document_id)
    doc = Document.objects.get(pk=document_id)
    try:
        fmt, candidates = document_parse(doc, on_progress)
    except ParseError as exc:
        Document.objects.filter(pk=doc.pk).mark_failed(str(exc))
        doc.refresh_from_db()
        return doc
    Document.objects.filter(pk=doc.pk).update(entries_parsed=len(candidates), bytes_scanned=doc.size)
    items = candidate_entries(doc, candidates)
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=doc.pk)
        if locked.status == Document.Status.DONE:
            return locked
        outcome = entries_ingest(items)
        Document.objects.filter(pk=doc.pk).mark_done(
            format=fmt,
            entries_parsed=len(candidates),
            entries_created=len(outcome.created),
            entries_grouped=outcome.folded,
            entries_embedded=outcome.embedded,
            reading=parser_reading(),
        )
    doc.refresh_from_db()
    logger.info(
        "ingested %s: %d candidates, %d new entries, %d repeats of an entry",
        doc.filename,
        len(candidates),
        len(outcome.created),
        outcome.folded,
    )
    return doc


def candidate_entries(doc: Document, candidates: list[Candidate]) -> list[NewEntry]:
    """The document's parsed problems as entries to store, each with its place in the document."""
    return [
        NewEntry(
            title=c.title,
            problem_text=c.problem_text,
            remedy_markdown=c.remedy_markdown,
            filename=doc.filename,
            document_id=doc.pk,
            line_start=c.line_start,
            line_end=c.line_end,
            problem_start=c.problem_start,
            problem_end=c.problem_end,
        )
        for c in candidates
    ]


def document_mark_failed(document_id: int, error: str) -> None:
    Document.objects.filter(pk=document_id).mark_failed(error)


def process_alive(claimed_by: str) -> bool:
    """Is the process that claimed a document (host:pid, this host) still running?"""
    pid = claimed_by.rsplit(":", 1)[-1]
    if not pid.isdigit():
        return False
    if claimed_by == worker_name():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def documents_requeue_stale(worker_prefix: str, stale_after: timedelta) -> list[int]:
    """Documents a dead worker left behind: processing with no heartbeat for `stale_after`, or
    claimed by an earlier process on this host (a restarted worker), or queued for that long."""
    before = timezone.now() - stale_after
    stale = Document.objects.stale(before)
    mine = Document.objects.processing().filter(
        claimed_by__in=[
            c
            for c in Document.objects.processing()
            .filter(claimed_by__startswith=worker_prefix)
            .values_list("claimed_by", flat=True)
            if not process_alive(c)
        ],
    )
    waiting = Document.objects.waiting(before)
    ids = sorted(
        set(stale.values_list("pk", flat=True))
        | set(mine.values_list("pk", flat=True))
        | set(waiting.values_list("pk", flat=True))
    )
    if ids:
        Document.objects.filter(pk__in=ids).requeue()
    return ids


def document_delete(doc: Document) -> None:
    """Remove a document and its stored files. Entries found in it stay, and their occurrences keep
    the file name and lines (the document id is cleared)."""
    from kb.models import Occurrence

    paths = [Path(doc.file.path), Path(doc.original_path)] if doc.file else []
    with transaction.atomic():
        Occurrence.objects.filter(document_id=doc.pk).update(document_id=None)
        doc.delete()
    for path in paths:
        path.unlink(missing_ok=True)
