"""Robustness analyses: five schemes, leave one case out, annotators, missing-data manipulation, significance map."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from evaluation.ranking.data import Task, tasks_from_columns
from evaluation.ranking.robustness import (
    annotator_sensitivity,
    leave_one_out,
    manipulation_check,
    scheme_sensitivity,
    significance_map,
)
from evaluation.ranking.schemes import Scheme, rank_task

NA = np.nan
GOLDEN = Task(
    name="t",
    algorithms=("A", "B", "C", "D"),
    cases=tuple(f"c{i}" for i in range(1, 7)),
    values=np.array(
        [
            [0.90, 0.85, 0.70, 0.95, 0.80, 0.60],
            [0.88, 0.86, 0.75, 0.90, 0.80, 0.65],
            [0.70, 0.60, 0.65, 0.85, 0.55, 0.50],
            [0.92, NA, 0.80, 0.96, 0.40, 0.62],
        ]
    ),
)


def test_five_schemes_give_challenger_ranks_and_tau() -> None:
    result = scheme_sensitivity(GOLDEN, Scheme(na=0))
    expected = {  # challengeR 1.0.5, issue 5 (NA = 0, ties min)
        "test-then-rank": [1, 1, 3, 3],
        "mean-then-rank": [2, 1, 3, 4],
        "median-then-rank": [2, 1, 4, 3],
        "rank-then-mean": [2, 1, 4, 2],
        "rank-then-median": [3, 1, 4, 1],
    }
    assert {k: list(v.values()) for k, v in result.ranks.items()} == expected
    tau = kendalltau(expected["mean-then-rank"], expected["rank-then-median"]).statistic
    assert result.kendall_tau["mean-then-rank"]["rank-then-median"] == pytest.approx(tau)
    assert result.skipped == {}


def test_schemes_needing_an_na_rule_are_skipped_without_one() -> None:
    result = scheme_sensitivity(GOLDEN, Scheme())
    assert set(result.ranks) == {"rank-then-mean", "rank-then-median"}
    assert "--na" in result.skipped["mean-then-rank"]


def test_leave_one_case_out() -> None:
    scheme = Scheme(na=0)
    full = rank_task(GOLDEN.values, scheme)
    result = leave_one_out(GOLDEN, scheme, full)
    # sums over 6 cases (NA = 0): A 4.80, B 4.84, C 3.85, D 3.70; leaving out case k (5 cases each):
    # c1 A 3.90 B 3.96; c2 A 3.95 B 3.98 (D 3.70); c3 A 4.10 B 4.09; c4 A 3.85 B 3.94; c5 A 4.00 B 4.04;
    # c6 A 4.20 B 4.19 -> A wins without c3 and without c6, B otherwise
    assert result.n_rankings == 6
    assert result.cases_changing_winner == ["c3", "c6"]
    assert result.winner_counts == {"A": 2, "B": 4, "C": 0, "D": 0}


def test_manipulation_check_finds_the_climber() -> None:
    values = np.array(
        [
            [0.80, 0.80, 0.80, 0.80],  # steady
            [0.95, 0.95, 0.20, 0.20],  # two failures: mean .575 (third), mean of the rest .95
            [0.70, 0.70, 0.70, 0.70],
        ]
    )
    task = Task("t", ("steady", "gambler", "low"), ("a", "b", "c", "d"), values)
    ignoring = manipulation_check(task, Scheme("aggregate-then-rank", na="drop"))
    assert ignoring.threshold == 0.5
    assert ignoring.algorithms["gambler"].to_json() == {
        "withheld_cases": 2,
        "original_rank": 3.0,
        "rank_if_ignored": 1.0,
        "rank_under_chosen_design": 1.0,
    }
    assert ignoring.could_win_by_withholding == ["gambler"]
    assert not ignoring.prevented_by_chosen_design
    worst = manipulation_check(task, Scheme("aggregate-then-rank", na=0))
    assert worst.algorithms["gambler"].rank_under_chosen_design == 3.0  # (0.95 * 2) / 4 = .475
    assert worst.prevented_by_chosen_design


def test_significance_map_holm() -> None:
    result = significance_map(GOLDEN, Scheme(na=0))
    assert result.p_adjust == "holm"
    assert result.matrix == [[0] * 4] * 4  # challengeR: with Holm no pair is significant here


def test_annotators_ranked_separately() -> None:
    rows = []
    for annotator, shift in (("r1", 0.0), ("r2", 0.3)):
        for case in ("x", "y", "z"):
            rows += [
                {"algorithm": "A", "case": case, "annotator": annotator, "value": str(0.9 - shift)},
                {"algorithm": "B", "case": case, "annotator": annotator, "value": str(0.7)},
            ]
    task = tasks_from_columns({column: [row[column] for row in rows] for column in rows[0]})["task"]
    result = annotator_sensitivity(task, Scheme())
    assert result.ranks == {"r1": {"A": 1.0, "B": 2.0}, "r2": {"A": 2.0, "B": 1.0}}
    assert result.kendall_tau["r1"]["r2"] == pytest.approx(-1.0)
