from __future__ import annotations

from ingest.selectors import LINE_LIMIT, document_excerpt


def test_the_range_comes_with_its_context_numbered_as_ingest_numbers_lines(tmp_path):
    doc = tmp_path / "train.log"
    doc.write_bytes(b"".join(b"line %d\n" % n for n in range(1, 101)).replace(b"line 5\n", b"line 5\rredrawn\n"))

    excerpt = document_excerpt(doc, 40, 42, context=2)

    assert [n for n, _ in excerpt.lines] == [38, 39, 40, 41, 42, 43, 44]
    assert excerpt.lines[2] == (40, "line 40") and excerpt.more_below
    assert dict(document_excerpt(doc, 5, 5, context=0).lines) == {5: "line 5\rredrawn"}  # \r ends no line


def test_a_line_longer_than_the_limit_is_cut_and_the_lines_after_it_keep_their_numbers(tmp_path):
    doc = tmp_path / "bar.log"
    doc.write_bytes(b"start\n" + b"\r 12%|#####" * 200_000 + b"\nRuntimeError: boom\n")

    excerpt = document_excerpt(doc, 2, 3, context=0)

    (n2, bar), (n3, error) = excerpt.lines
    assert (n2, n3, error) == (2, 3, "RuntimeError: boom")
    assert len(bar) < LINE_LIMIT + 40 and bar.endswith("(the line goes on)")


def test_a_range_past_the_end_says_where_the_document_ends(tmp_path):
    doc = tmp_path / "short.log"
    doc.write_bytes(b"a\nb\nc")  # no newline after the last line

    excerpt = document_excerpt(doc, 50, 60, context=5)

    assert excerpt.lines == () and excerpt.last_line == 3 and not excerpt.more_below
    assert document_excerpt(doc, 3, 3).lines[-1] == (3, "c")
