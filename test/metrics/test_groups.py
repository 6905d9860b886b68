"""Case groups: per-group metrics, their combination over groups, combined scores (hand computations,
scikit-learn per group, picai_eval's ranking score, bootstrap weights against explicit resamples)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import mean_absolute_error as sklearn_mae

from evaluation.metrics import bootstrap
from evaluation.metrics.groups import combined_score, group_codes, over_groups, per_group
from evaluation.metrics.regression import mean_absolute_error

GROUP = np.array(["b", "a", "b", "a", "c"])
TRUTH = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
PREDICTION = np.array([2.0, 2.0, 5.0, 1.0, 5.5])


def test_per_group_by_hand():
    labels, values = per_group(mean_absolute_error, GROUP, TRUTH, PREDICTION)
    assert labels.tolist() == ["a", "b", "c"]
    # a: |2-2|, |1-4| -> 1.5; b: |2-1|, |5-3| -> 1.5; c: 0.5
    np.testing.assert_allclose(values, [1.5, 1.5, 0.5], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_per_group_equals_scikit_learn_on_each_subset(seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 4, 50)
    truth, prediction = rng.normal(size=50), rng.normal(size=50)
    labels, values = per_group(mean_absolute_error, group, truth, prediction)
    expected = [sklearn_mae(truth[group == g], prediction[group == g]) for g in labels]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


def test_over_groups_by_hand():
    values = np.array([0.6, 0.8, 0.7])
    assert over_groups(values) == pytest.approx(0.7, abs=1e-12)
    # population standard deviation of (0.6, 0.8, 0.7): sqrt(0.02 / 3)
    assert over_groups(values, "mean_minus_std") == pytest.approx(0.7 - np.sqrt(0.02 / 3), abs=1e-12)
    with_undefined = np.array([0.6, np.nan, 0.8])
    assert over_groups(with_undefined) == pytest.approx(0.7, abs=1e-12)  # excluded
    assert over_groups(with_undefined, "mean_minus_std") == pytest.approx(0.6, abs=1e-12)  # 0.7 - 0.1
    assert over_groups(with_undefined, undefined=0.5) == pytest.approx(1.9 / 3, abs=1e-12)  # counted as 0.5
    assert np.isnan(over_groups(np.array([np.nan, np.nan])))
    with pytest.raises(ValueError, match="undefined"):
        over_groups(with_undefined, undefined="error")


def test_over_groups_rows_are_resamples():
    values = np.array([[0.6, 0.8, 0.7], [0.5, np.nan, 0.9], [np.nan, np.nan, np.nan]])
    np.testing.assert_allclose(over_groups(values), [0.7, 0.7, np.nan], rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        over_groups(values, "mean_minus_std"), [0.7 - np.sqrt(0.02 / 3), 0.5, np.nan], rtol=0, atol=1e-12
    )


def test_combined_score_by_hand_and_per_resample():
    assert combined_score([0.8, 0.6]) == pytest.approx(0.7, abs=1e-12)
    assert combined_score([0.8, 0.6], [0.25, 0.75]) == pytest.approx(0.65, abs=1e-12)
    np.testing.assert_allclose(combined_score([np.array([0.8, 0.4]), np.array([0.6, 0.2])]), [0.7, 0.3], atol=1e-12)
    assert np.isnan(combined_score([0.8, np.nan]))


def test_combined_score_is_picai_ranking_score():
    metrics_module = pytest.importorskip("picai_eval.metrics")
    # lesion results per case: (is a reference lesion, candidate confidence, overlap)
    lesion_results = {
        "0": [(1, 0.9, 0.5), (0, 0.4, 0.0)],
        "1": [(0, 0.7, 0.0)],
        "2": [(1, 0.0, 0.0), (1, 0.6, 0.3)],
        "3": [(0, 0.2, 0.0)],
    }
    metrics = metrics_module.Metrics(lesion_results=lesion_results)
    assert combined_score([metrics.auroc, metrics.AP]) == pytest.approx(metrics.score, abs=1e-12)


def test_bootstrap_weights_equal_explicit_resamples():
    rng = np.random.default_rng(4)
    group = np.repeat(["x", "y", "z"], [12, 5, 1])  # "z" is absent from most resamples
    truth, prediction = rng.normal(size=18), rng.normal(size=18)
    weights = bootstrap.resample_weights(18, 30, seed=2)
    labels, values = per_group(mean_absolute_error, group, truth, prediction, weights=weights)
    assert values.shape == (30, 3)
    for row, drawn in zip(values, bootstrap.drawn_cases(weights), strict=True):
        for column, label in enumerate(labels):
            cases = drawn[group[drawn] == label]
            expected = np.mean(np.abs(prediction[cases] - truth[cases])) if cases.size else np.nan
            np.testing.assert_allclose(row[column], expected, rtol=0, atol=1e-12)
    assert np.isnan(values[:, 2]).any()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: group_codes(np.array([])), "groups is empty"),
        (lambda: group_codes(np.array([[1, 2]])), "1-dimensional"),
        (lambda: group_codes(np.array([1.0, np.nan])), "NaN"),
        (lambda: group_codes(np.array(["a", None], dtype=object)), "missing label"),
        (lambda: group_codes(np.array(["a", 1], dtype=object)), "one type"),
        (lambda: per_group(mean_absolute_error, GROUP[:4], TRUTH, PREDICTION), "inconsistent numbers"),
        (lambda: per_group(mean_absolute_error, GROUP, TRUTH, PREDICTION, weights=np.ones((2, 4))), "weights"),
        (lambda: over_groups(np.array([0.5]), "median"), "form"),
        (lambda: over_groups(np.array([0.5]), undefined="skip"), "undefined"),
        (lambda: over_groups(np.array([0.5]), undefined=np.inf), "finite"),
        (lambda: over_groups(np.array([]), "mean"), "group"),
        (lambda: over_groups(np.array([np.inf]), "mean"), "infinite"),
        (lambda: combined_score([]), "empty"),
        (lambda: combined_score([0.5, np.array([0.5, 0.6])]), "shape"),
        (lambda: combined_score([0.5, 0.6], [1.0]), "coefficients"),
    ],
)
def test_bad_inputs_are_one_line_value_errors(call, message):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert "\n" not in str(error.value)
