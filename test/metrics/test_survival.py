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


def _pairwise_oracle(time, event, risk, missing, policy, weights=None):
    """The module docstring's definition, pair by pair (O(n^2)); the reference for the counting code."""
    n = len(time)
    weights = np.ones(n) if weights is None else weights
    missing_credit = 0.0 if policy == "non-concordant" else 0.5
    credit = pairs = 0.0
    for i in range(n):
        for j in range(n):
            if not event[i] or not (time[i] < time[j] or (time[i] == time[j] and not event[j])):
                continue
            weight = weights[i] * weights[j]
            pairs += weight
            if missing[i] or missing[j]:
                credit += weight * missing_credit
            else:
                credit += weight * ((risk[i] > risk[j]) + 0.5 * (risk[i] == risk[j]))
    return credit / pairs if pairs else float("nan")


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("policy", ["non-concordant", "tie"])
def test_equals_pairwise_definition_with_ties_missing_and_weights(seed, policy):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 45))
    time = rng.integers(1, 9, n).astype(float)  # many equal times, with and without events
    event = rng.random(n) < 0.5
    risk = np.round(rng.normal(size=n))  # many tied risks
    missing = rng.random(n) < 0.2
    expected = _pairwise_oracle(time, event, risk, missing, policy)
    got = concordance_index(time, event, risk, missing, policy)
    assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    weights = rng.integers(0, 4, size=(6, n))
    batch = concordance_index(time, event, risk, missing, policy, weights=weights)
    one_by_one = [_pairwise_oracle(time, event, risk, missing, policy, w) for w in weights]
    np.testing.assert_allclose(batch, one_by_one, rtol=0, atol=1e-12)


def test_equal_times_count_only_event_before_censored():
    # t equal: (event, censored) comparable; (event, event) and (censored, censored) not
    time, event = np.array([5.0, 5.0, 5.0, 5.0]), np.array([1, 1, 0, 0], dtype=bool)
    risk = np.array([0.9, 0.1, 0.5, 0.5])
    # comparable: (0,2) (0,3) concordant, (1,2) (1,3) discordant
    assert concordance_index(time, event, risk) == pytest.approx(0.5, abs=1e-12)
    risk = np.array([0.9, 0.5, 0.5, 0.1])  # (1,2) tie 0.5, (1,3) concordant
    assert concordance_index(time, event, risk) == pytest.approx(3.5 / 4, abs=1e-12)


@pytest.mark.parametrize("n", [500, 5000])
def test_equals_lifelines_at_scale_with_tied_times_and_predictions(n):
    rng = np.random.default_rng(n)
    time = rng.integers(1, n // 10, n).astype(float)
    event = rng.random(n) < 0.35
    risk = np.round(rng.normal(size=n), 1)
    assert concordance_index(time, event, risk) == pytest.approx(lifelines_c_index(time, -risk, event), abs=1e-12)


def test_bootstrap_rows_equal_single_calls_on_drawn_patients():
    rng = np.random.default_rng(11)
    n = 400
    time, event, risk = rng.integers(1, 60, n).astype(float), rng.random(n) < 0.4, np.round(rng.normal(size=n), 1)
    draws = rng.integers(0, n, size=(5, n))
    weights = np.stack([np.bincount(row, minlength=n) for row in draws])
    batch = concordance_index(time, event, risk, weights=weights)
    expected = [lifelines_c_index(time[d], -risk[d], event[d]) for d in draws]
    np.testing.assert_allclose(batch, expected, rtol=0, atol=1e-12)


def test_bad_inputs_are_one_line_value_errors():
    """Each of these used to give an IndexError traceback or a silent value (a NaN time, an event of 2)."""
    bad = [
        ((TIME, EVENT[:-1], RISK), {}, "inconsistent numbers of samples"),
        ((TIME, EVENT, RISK[:-1]), {}, "inconsistent numbers of samples"),
        ((TIME, EVENT, RISK, np.zeros(5, bool)), {}, "inconsistent numbers of samples"),
        ((np.where(TIME == 300, np.nan, TIME), EVENT, RISK), {}, "time contains NaN"),
        ((TIME[None], EVENT[None], RISK[None]), {}, "time must be 1-dimensional"),
        ((TIME, EVENT * 2, RISK), {}, "event must hold only 0 and 1"),
        ((TIME, EVENT, RISK), {"weights": np.ones((2, 5), dtype=int)}, "weights has 5 columns for 6 cases"),
        ((TIME, EVENT, RISK), {"weights": np.ones((2, 2, 6), dtype=int)}, "weights must be 2-dimensional"),
    ]
    for arguments, keywords, message in bad:
        with pytest.raises(ValueError, match=message):
            concordance_index(*arguments, **keywords)
