"""Harrell's C-index: hand-computed golden values, lifelines on complete data, bootstrap weights."""

from __future__ import annotations

import numpy as np
import pytest
from lifelines.utils import concordance_index as lifelines_c_index

from evaluation.metrics.survival import concordance_index

TIME = np.array([100, 200, 300, 400, 500, 600])
EVENT = np.array([1, 0, 1, 1, 0, 0])
RISK = np.array([0.9, 0.5, 0.7, 0.2, 0.3, 0.1])


def test_golden_values_by_hand():
    # comparable pairs (event first): (0,1..5) 5, (2,3..5) 3, (3,4..5) 2 = 10; only (3,4) discordant
    assert concordance_index(TIME, EVENT, RISK) == pytest.approx(0.9, abs=1e-12)
    tied = RISK.copy()
    tied[4] = 0.2  # (3,4) becomes a tie: 9.5 / 10
    assert concordance_index(TIME, EVENT, tied) == pytest.approx(0.95, abs=1e-12)
    missing = np.arange(6) == 2  # pairs with patient 2: (0,2), (2,3), (2,4), (2,5)
    assert concordance_index(TIME, EVENT, RISK, missing, "tie") == pytest.approx(0.7, abs=1e-12)
    assert concordance_index(TIME, EVENT, RISK, missing, "non-concordant") == pytest.approx(0.5, abs=1e-12)
    nan_risk = RISK.copy()
    nan_risk[2] = np.nan  # a NaN risk is a missing prediction
    assert concordance_index(TIME, EVENT, nan_risk) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_equals_lifelines_on_complete_data(seed):
    rng = np.random.default_rng(seed)
    n = 60
    time = rng.integers(50, 400, n).astype(float)  # ties in time on purpose
    event = rng.random(n) < 0.4
    risk = np.round(rng.normal(size=n), 1)  # ties in risk on purpose
    expected = lifelines_c_index(time, -risk, event)
    assert concordance_index(time, event, risk) == pytest.approx(expected, abs=1e-12)


def test_bootstrap_weights_equal_explicit_resamples():
    rng = np.random.default_rng(3)
    n = 25
    time, event, risk = rng.integers(1, 50, n), rng.random(n) < 0.5, rng.normal(size=n)
    missing = rng.random(n) < 0.1
    draws = rng.integers(0, n, size=(7, n))
    weights = np.stack([np.bincount(row, minlength=n) for row in draws])
    for policy in ("tie", "non-concordant"):
        batch = concordance_index(time, event, risk, missing, policy, weights=weights)
        one_by_one = [concordance_index(time[d], event[d], risk[d], missing[d], policy) for d in draws]
        assert batch == pytest.approx(one_by_one, abs=1e-12)


def test_no_comparable_pair_is_nan():
    assert np.isnan(concordance_index([1, 2], [0, 0], [0.1, 0.2]))
