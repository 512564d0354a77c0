"""Random bytes and random truncations must never crash a parser: they parse or raise ParseError."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.parsers import FORMATS, ParseError, decode_document, parse_document
from kb.logscan import scan_log
from kb.signature import signature_from_text
from tests.conftest import DATA, ROOT

SAMPLES = [p.read_bytes() for p in sorted((ROOT / "samples").iterdir())] + [
    p.read_bytes() for p in sorted((DATA / "docs").iterdir())
]


def _parse_every_way(data: bytes) -> None:
    try:
        text = decode_document(data)
    except ParseError:
        return
    for fmt in ("", *FORMATS):
        try:
            _, cands = parse_document(text, fmt)
        except ParseError:
            continue
        for c in cands:
            assert 1 <= c.line_start <= c.line_end


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000))
def test_random_bytes_never_crash(data):
    _parse_every_way(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.integers(min_value=0), st.integers(min_value=0))
def test_truncated_and_sliced_documents_never_crash(doc, a, b):
    a, b = sorted((a % (len(doc) + 1), b % (len(doc) + 1)))
    _parse_every_way(doc[:b])
    _parse_every_way(doc[a:b])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=3000))
def test_random_text_through_scanner_and_signature(text):
    for block in scan_log(text):
        assert block.line_start <= block.line_end
    sig, _ = signature_from_text(text)
    assert isinstance(sig.fingerprint, str) and len(sig.fingerprint) == 16
