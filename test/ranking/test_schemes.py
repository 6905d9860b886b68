"""Golden tests: numbers computed by challengeR 1.0.5 (recorded in issue 5) on a 4 x 6 table.

A = .90 .85 .70 .95 .80 .60; B = .88 .86 .75 .90 .80 .65; C = .70 .60 .65 .85 .55 .50;
D = .92 NA .80 .96 .40 .62; larger is better. Expected values are challengeR's, never our output.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau

from evaluation.errors import ConfigurationError
from evaluation.ranking.primitives import kendall_tau_b, rank_na
from evaluation.ranking.schemes import Scheme, consensus_euclidean, rank_task

NA = np.nan
TABLE = np.array(
    [
        [0.90, 0.85, 0.70, 0.95, 0.80, 0.60],
        [0.88, 0.86, 0.75, 0.90, 0.80, 0.65],
        [0.70, 0.60, 0.65, 0.85, 0.55, 0.50],
        [0.92, NA, 0.80, 0.96, 0.40, 0.62],
    ]
)

GOLDEN = [
    # (scheme, challengeR scores, challengeR ranks)
    (Scheme("aggregate-then-rank", "mean", na=0), [0.8, 0.806667, 0.641667, 0.616667], [2, 1, 3, 4]),
    (Scheme("aggregate-then-rank", "mean", na="drop"), [0.8, 0.806667, 0.641667, 0.74], [2, 1, 4, 3]),
    (Scheme("aggregate-then-rank", "median", na=0), [0.825, 0.83, 0.625, 0.71], [2, 1, 4, 3]),
    (Scheme("rank-then-aggregate", "mean"), [2.166667, 1.833333, 3.666667, 2.166667], [2, 1, 4, 2]),
    (Scheme("rank-then-aggregate", "median"), [2, 1.5, 4, 1.5], [3, 1, 4, 1]),
    (Scheme("rank-then-aggregate", "mean", ties="average"), [2.25, 1.916667, 3.666667, 2.166667], [3, 1, 4, 2]),
    (Scheme("test-then-rank", na=0, alpha=0.05, p_adjust="none"), [1 / 3, 1 / 3, 0, 0], [1, 1, 3, 3]),
    (Scheme("test-then-rank", na=0, alpha=0.05, p_adjust="holm"), [0, 0, 0, 0], [1, 1, 1, 1]),
]


@pytest.mark.parametrize(("scheme", "scores", "ranks"), GOLDEN, ids=[g[0].label() + str(g[0].na) for g in GOLDEN])
def test_challenger_golden(scheme: Scheme, scores: list[float], ranks: list[int]) -> None:
    result = rank_task(TABLE, scheme)
    np.testing.assert_allclose(result.scores, scores, atol=5e-7)  # challengeR printed 6 decimals
    np.testing.assert_array_equal(result.ranks, ranks)


def test_one_sided_pvalue_a_vs_c() -> None:
    from evaluation.ranking.significance import better_pvalues

    p = better_pvalues(TABLE[[0, 2]], np.ones((1, 6)))
    assert p[0, 0, 1] == pytest.approx(0.0175074905, abs=1e-10)  # challengeR / R wilcox.test


def test_consensus_euclidean() -> None:
    scores = consensus_euclidean(
        {"T1": {"A": 1, "B": 2, "C": 3}, "T2": {"A": 2, "B": 1, "C": 2}, "T3": {"A": 3, "B": 2, "C": 1}}
    )
    assert scores == pytest.approx({"B": 1.6667, "A": 2.1667, "C": 2.1667}, abs=5e-5)


def test_consensus_weights() -> None:
    scores = consensus_euclidean({"T1": {"A": 1, "B": 2}, "T2": {"A": 2, "B": 1}}, {"T1": 3.0, "T2": 1.0})
    assert scores == pytest.approx({"A": 1.25, "B": 1.75})


@pytest.mark.parametrize(
    ("a", "b", "expected"), [((1, 2, 3, 4), (1, 3, 2, 4), 0.6667), ((1, 1, 3, 4), (1, 2, 3, 4), 0.9129)]
)
def test_kendall_tau_b(a: tuple[int, ...], b: tuple[int, ...], expected: float) -> None:
    assert kendall_tau_b(np.array([a], float), np.array(b, float))[0] == pytest.approx(expected, abs=5e-5)
    assert kendalltau(a, b).statistic == pytest.approx(kendall_tau_b(np.array([a], float), np.array(b, float))[0])


def test_kendall_tau_matches_scipy_on_random_rankings() -> None:
    rng = np.random.default_rng(1)
    rankings = rng.integers(1, 5, size=(50, 7)).astype(float)
    reference = rng.integers(1, 5, size=7).astype(float)
    expected = [kendalltau(r, reference).statistic for r in rankings]
    np.testing.assert_allclose(kendall_tau_b(rankings, reference), expected, atol=1e-12)


def complete_tie_table() -> np.ndarray:
    """All 120 orderings of 5 values across 5 algorithms: each algorithm takes each value 24 times."""
    orderings = np.array(list(itertools.permutations([0.1, 0.3, 0.5, 0.7, 0.9])))
    return orderings.T  # (algorithms, cases)


@pytest.mark.parametrize(
    "scheme",
    [
        Scheme("aggregate-then-rank", "mean"),
        Scheme("aggregate-then-rank", "median"),
        Scheme("rank-then-aggregate", "mean"),
        Scheme("rank-then-aggregate", "median"),
        Scheme("test-then-rank"),
        Scheme("test-then-rank", p_adjust="holm"),
    ],
    ids=lambda s: s.label(),
)
def test_complete_tie_under_every_scheme(scheme: Scheme) -> None:
    assert rank_task(complete_tie_table(), scheme).ranks.tolist() == [1.0] * 5


@pytest.mark.parametrize(
    ("ties", "expected"),
    [
        ("min", [1, 2, 2, 4, 5, 5]),  # R: rankNA2(c(1, 2, 2, 3, NA, NA), "min") -> NAs max + 1
        ("average", [1, 2.5, 2.5, 4, 5.5, 5.5]),  # max 4 + mean(1:2)
    ],
)
def test_rank_na_rules(ties: str, expected: list[float]) -> None:
    np.testing.assert_array_equal(rank_na(np.array([1, 2, 2, 3, NA, NA]), ties), expected)


def test_rank_na_compat_leaves_na_unranked_under_max_and_first() -> None:
    for ties in ("max", "first"):
        ranks = rank_na(np.array([1.0, 2.0, NA]), ties, compat=True)
        assert np.isnan(ranks[2]) and ranks[:2].tolist() == [1, 2]
        assert rank_na(np.array([1.0, 2.0, NA]), ties)[2] == 3  # default: NA ranked last


def test_rank_na_all_missing_and_random_ties() -> None:
    assert rank_na(np.array([NA, NA]), "min").tolist() == [1, 1]  # maxrank 0 + 1
    ranks = rank_na(np.array([1.0, 1.0, 1.0, 0.0]), "random", rng=np.random.default_rng(3))
    assert ranks[3] == 1 and sorted(ranks[:3]) == [2, 3, 4]


def test_smaller_better_reverses() -> None:
    result = rank_task(-TABLE, Scheme("aggregate-then-rank", "mean", na="drop", smaller_better=True))
    np.testing.assert_array_equal(result.ranks, [2, 1, 4, 3])


def test_na_worst_uses_the_worst_observed_value() -> None:
    result = rank_task(TABLE, Scheme("aggregate-then-rank", "mean", na="worst"))
    assert result.scores[3] == pytest.approx((0.92 + 0.40 + 0.80 + 0.96 + 0.40 + 0.62) / 6)


def test_rank_then_aggregate_with_an_na_rule_treats_values_first() -> None:
    # as challengeR's as.challenge(na.treat = 0): D's NA becomes 0, ranked last in c2 (as without a rule here)
    zero = rank_task(TABLE, Scheme("rank-then-aggregate", na=0.0))
    np.testing.assert_allclose(zero.scores, [13 / 6, 11 / 6, 22 / 6, 13 / 6])
    # na.rm: D has no row in c2, so its mean rank is over 5 cases: c1 1, c3 1, c4 1, c5 4, c6 2
    dropped = rank_task(TABLE, Scheme("rank-then-aggregate", na="drop"))
    assert dropped.scores[3] == pytest.approx(9 / 5)


def test_compat_drops_missing_cases_under_ties_max() -> None:
    # challengeR: rankNA2 leaves D's NA in c2 unranked under "max", aggregate drops it: D's mean over 5 cases
    # max ranks: c1 A2 B3 C4 D1; c3 A3 B2 C4 D1; c4 A2 B3 C4 D1; c5 A2 B2 C3 D4; c6 A3 B1 C4 D2; c2 A2 B1 C3
    result = rank_task(TABLE, Scheme("rank-then-aggregate", ties="max"), compat=True)
    np.testing.assert_allclose(result.scores, [14 / 6, 12 / 6, 22 / 6, 9 / 5])
    assert rank_task(TABLE, Scheme("rank-then-aggregate", ties="max")).scores[3] == pytest.approx(13 / 6)


def test_missing_values_without_rule_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="--na"):
        rank_task(TABLE, Scheme("aggregate-then-rank"))
