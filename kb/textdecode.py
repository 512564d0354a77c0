"""The text of a file whose encoding nobody said: an upload to ingest, a log posted to triage.

Read by both stages, so it lives here (kb imports neither). gzip is opened; binary is refused with
a message meant for the user.
"""

from __future__ import annotations

import codecs
import gzip
import zlib


class DocumentError(ValueError):
    """A document that cannot be read or parsed; the message is shown to the user."""


MAX_DECOMPRESSED = 2 << 30


def gunzip(data: bytes) -> bytes:
    try:
        out = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise DocumentError(f"The gzip file is damaged: {exc}.") from exc
    if len(out) > MAX_DECOMPRESSED:
        raise DocumentError("The gzip file expands to more than 2 GB.")
    return out


def looks_binary(sample: bytes, encoding: str = "") -> bool:
    if encoding.startswith("utf-16"):
        sample = sample.decode(encoding, errors="replace").encode("utf-8")
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls > max(8, len(sample) // 100)


def decode_document(data: bytes) -> str:
    """Text of an uploaded file (gzip is opened); binary files are refused with a clear error."""
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data)
    if not data.strip():
        raise DocumentError("The file is empty.")
    encoding = sniff_encoding(data[:65536])
    if looks_binary(data[:65536], encoding):
        raise DocumentError("This looks like a binary file, not a log or a transcript; upload text (or .gz of text).")
    return data.decode(encoding, errors="replace").replace("\r\n", "\n")


def sniff_encoding(sample: bytes) -> str:
    """The encoding of an upload from its first bytes.

    1. A byte-order mark: UTF-8 or UTF-16 (PowerShell's default for `>` redirection).
    2. ASCII text with a NUL after (or before) nearly every byte: UTF-16 without a mark.
    3. Valid UTF-8.
    4. Otherwise GB18030 or Latin-1, whichever charset-normalizer finds plausible: both decode
       almost any bytes, but Latin-1 "Größe" read as GB18030 is "Gr鲞e"."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    head = sample[:4096]
    if len(head) >= 16 and head.count(0) > len(head) // 3:
        guess = "utf-16-le" if head[1::2].count(0) > head[0::2].count(0) else "utf-16-be"
        text = head[: len(head) // 2 * 2].decode(guess, errors="replace")
        if sum(1 for c in text if c < "\x80") >= 0.9 * len(text):  # a log, not binary zeros
            return guess
    try:
        # A multi-byte character may be cut at the end of the sample.
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(sample[:65536], cp_isolation=["gb18030", "latin_1"]).best()
    return "gb18030" if best is not None and best.encoding == "gb18030" else "latin-1"
