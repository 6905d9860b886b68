"""The batched signed-rank statistics equal scipy.stats.wilcoxon (= R wilcox.test(paired, exact = FALSE))."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wilcoxon

from evaluation.ranking.primitives import holm
from evaluation.ranking.significance import better_pvalues


def scipy_p(x: np.ndarray, y: np.ndarray, alternative: str) -> float:
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if np.all(x == y):
        return 1.0  # R: zero variance, p = 1 (scipy returns NaN)
    return float(wilcoxon(x, y, alternative=alternative, zero_method="wilcox", correction=True, method="approx").pvalue)


@pytest.mark.parametrize("smaller_better", [False, True])
def test_every_ordered_pair_and_resample_matches_scipy(smaller_better: bool) -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 6, size=(4, 15)) / 5.0  # coarse values: ties and zero differences
    values[1, 3] = np.nan  # a missing pair: the test uses the cases both have
    indices = rng.integers(0, 15, size=(6, 15))
    weights = np.stack([np.bincount(row, minlength=15) for row in indices])
    p = better_pvalues(values, weights, smaller_better)
    alternative = "less" if smaller_better else "greater"
    for b, row in enumerate(indices):
        drawn = values[:, row]  # the resample written out, copies as separate cases
        for i in range(4):
            for j in range(4):
                if i != j:
                    assert p[b, i, j] == pytest.approx(scipy_p(drawn[i], drawn[j], alternative), rel=1e-12, abs=1e-15)


def test_all_zero_differences_give_p_one() -> None:
    values = np.array([[0.5, 0.6, 0.7], [0.5, 0.6, 0.7]])
    assert better_pvalues(values, np.ones((1, 3)))[0, 0, 1] == 1.0


def test_holm_matches_hand_computation() -> None:
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.2), "holm") = 0.04 0.09 0.09 0.2
    np.testing.assert_allclose(holm(np.array([[0.01, 0.04, 0.03, 0.2]])), [[0.04, 0.09, 0.09, 0.2]])
