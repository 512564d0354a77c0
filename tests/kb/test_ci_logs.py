"""Issue 12: real CI job logs (tests/data/ci_logs/cases.json: fragments pasted in public issue
threads, each with the line a careful reader marks as the failure). The root error must cover
that line in at least 90% of them; the agreement is printed."""

from __future__ import annotations

import json

from kb.signature import signature_from_text
from tests.conftest import DATA

CASES = json.loads((DATA / "ci_logs" / "cases.json").read_text(encoding="utf-8"))


def agreement() -> tuple[int, list[str]]:
    hits, misses = 0, []
    for case in CASES:
        root = signature_from_text(case["log"])[1].root
        if root is not None and root.line_start <= case["failing_line"] <= root.line_end:
            hits += 1
        else:
            misses.append(
                f"{case['id']}: wanted line {case['failing_line']}, got {root and (root.line_start, root.line_end)}"
            )
    return hits, misses


def test_the_root_error_lands_on_the_marked_line_of_real_ci_logs():
    hits, misses = agreement()
    print(f"CI-log suite: {hits}/{len(CASES)} root errors on the marked line")
    assert len(CASES) >= 30
    assert hits >= 0.9 * len(CASES), "\n".join(misses)


def test_ci_prefixes_do_not_move_the_line_numbers():
    log = (
        "2026-07-30T10:35:18.6494363Z ##[group]Run pytest\n"
        "2026-07-30T10:35:18.6494363Z ##[endgroup]\n"
        "2026-07-30T10:36:01.1234567Z RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "2026-07-30T10:36:02.0000000Z ##[error]Process completed with exit code 1.\n"
    )
    sig, choice = signature_from_text(log)
    assert (choice.root.line_start, choice.root.line_end) == (3, 3)
    assert sig.headline.startswith("RuntimeError: CUDA error: no kernel image")  # no timestamp in the message
    assert [b.pattern for b in choice.secondary] == ["exit_code"]  # the exit code is a symptom, listed after


def test_a_pytest_failure_is_named_by_its_test_and_a_build_by_its_diagnostic():
    failed = signature_from_text("FAILED tests/trainer/test_grpo.py::test_loss - assert 0.5 == 0.4\n")[0]
    assert "tests.trainer.test_grpo.py::test_loss" in failed.message
    built = signature_from_text(
        "/home/runner/work/p/csrc/a.cpp:120:5: error: 'x' was not declared in this scope\n"
        "ninja: build stopped: subcommand failed.\n"
    )
    assert (
        built[0].message.startswith("a.cpp: error: 'x' was not declared") and built[1].root.pattern == "compiler_error"
    )
