"""How bench/grouped_cv.py chooses the match threshold that `make fit-ranker` ships."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import numpy as np
from benchsets import QueryTable
from grouped_cv import COLUMNS, choose_threshold, fit_all

from triage.ranking import ANSWER_FEATURES, FEATURES, MODEL_FEATURES


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


def table(name: str, problem: str, known: bool, msg_cos: float, coverage: float) -> QueryTable:
    """A query with two candidates: the first scored on `coverage` (the right entry when `known`),
    the second a weak one; the first candidate's message similarity is `msg_cos`."""
    x = np.zeros((2, len(COLUMNS)))
    x[0, COLUMNS.index("coverage")] = coverage
    x[0, COLUMNS.index("msg_cos")] = msg_cos
    x[1, COLUMNS.index("coverage")] = 0.1
    return QueryTable(
        set_name=name,
        qid=f"{problem}#1",
        problem=problem,
        known=known,
        entry_ids=np.array([1, 2]),
        entry_problems=[frozenset({problem}) if known else frozenset({"other"}), frozenset({"another"})],
        X=x,
        y=np.array([1.0 if known else 0.0, 0.0]),
        factor=np.ones(2),
        latency_ms=1.0,
    )


def test_the_gathered_sets_rows_teach_the_answer_model_the_first_candidates_evidence():
    # In the judged rows the message similarity says nothing (0.5 everywhere); in the gathered sets'
    # rows it is what tells a known report (0.9) from an undocumented failure whose first candidate
    # scores just as high (0.1). Only with those rows does the answer model weigh it.
    rng = np.random.default_rng(0)
    judged = [table("train", f"p{i}", i % 5 != 0, 0.5, float(rng.uniform(0.5, 0.9))) for i in range(40)]
    gathered = [table("fresh", f"g{i}", i % 3 != 0, 0.9 if i % 3 else 0.1, 0.7) for i in range(300)]
    cols = [FEATURES.index(f) for f in MODEL_FEATURES]
    alone = fit_all(judged, set(), cols, 1.0, 5)
    with_rows = fit_all(judged, set(), cols, 1.0, 5, gathered)
    k = ANSWER_FEATURES.index("msg_cos")
    assert abs(alone.answer_coef[k]) < 0.5 < with_rows.answer_coef[k]
