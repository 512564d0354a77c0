"""How bench/grouped_cv.py chooses the match threshold that `make fit-ranker` ships."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from grouped_cv import choose_threshold


def rows(known_right: list[float], unknown: list[float]) -> list[tuple[bool, float, bool]]:
    return [(True, p, True) for p in known_right] + [(False, p, False) for p in unknown]


def test_the_threshold_answers_most_queries_right():
    # Known reports answered at 0.6-0.9, undocumented failures at 0.2-0.5: anything between refuses
    # every one of them and answers every known one.
    t = choose_threshold(rows([0.6, 0.7, 0.8, 0.9], [0.2, 0.3, 0.5]))
    assert 0.5 < t < 0.6


def test_many_undocumented_rows_count_only_as_the_share_they_are_chosen_for():
    # Ten known right answers at 0.35-0.8, two undocumented failures at 0.3 and 0.4; then forty more
    # undocumented failures at 0.45 (a gathered set with many). Counted one each, they push the
    # threshold over 0.45 and lose the known answer at 0.40; weighted to the first rows' share (1/6),
    # one known answer weighs more than all forty together.
    known = [0.35, 0.40, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.78, 0.8]
    first = rows(known, [0.3, 0.4])
    assert choose_threshold(first) < 0.40
    more = first + rows([], [0.45] * 40)
    assert choose_threshold(more) > 0.45
    assert choose_threshold(more, share=2 / 12) < 0.40
    # A share the rows already hold weighs nothing differently.
    assert choose_threshold(first, share=2 / 12) == choose_threshold(first)
