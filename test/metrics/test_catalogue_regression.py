"""Catalogue regression and survival metrics against scikit-learn, NumPy, SciPy and lifelines."""

from __future__ import annotations

import numpy as np
import pytest
from lifelines.utils import concordance_index as lifelines_c_index
from sklearn.metrics import mean_absolute_error as sklearn_mae
from sklearn.metrics import root_mean_squared_error as sklearn_rmse

from evaluation.metrics import catalogue
from evaluation.metrics.regression import mean_absolute_error, pearson, root_mean_squared_error, spearman


def case(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = np.round(rng.normal(50, 10, 40), 0)  # ties on purpose (Spearman's average ranks)
    return truth, np.round(truth + rng.normal(0, 6, 40), 0)


def ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks by hand (1-based; ties share the mean of their positions)."""
    order = np.argsort(values, kind="stable")
    result = np.empty(values.size)
    sorted_values = values[order]
    start = 0
    for end in range(1, values.size + 1):
        if end == values.size or sorted_values[end] != sorted_values[start]:
            result[order[start:end]] = (start + end + 1) / 2.0
            start = end
    return result


@pytest.mark.parametrize("seed", range(3))
def test_equal_independent_references(seed):
    truth, prediction = case(seed)
    assert mean_absolute_error(truth, prediction) == pytest.approx(sklearn_mae(truth, prediction), abs=1e-12)
    assert root_mean_squared_error(truth, prediction) == pytest.approx(sklearn_rmse(truth, prediction), abs=1e-12)
    assert pearson(truth, prediction) == pytest.approx(np.corrcoef(truth, prediction)[0, 1], abs=1e-12)
    expected = np.corrcoef(ranks(truth), ranks(prediction))[0, 1]
    assert spearman(truth, prediction) == pytest.approx(expected, abs=1e-12)


def test_c_index_by_name_equals_lifelines():
    rng = np.random.default_rng(7)
    time = rng.integers(10, 100, 50).astype(float)
    event = rng.random(50) < 0.6
    risk = np.round(rng.normal(size=50), 1)
    expected = lifelines_c_index(time, -risk, event)
    assert catalogue.compute("c_index", time, event, risk) == pytest.approx(expected, abs=1e-12)


def test_edge_cases_by_hand():
    assert mean_absolute_error([1.0], [3.0]) == 2.0 and root_mean_squared_error([0, 0], [3, 4]) == pytest.approx(
        np.sqrt(12.5)
    )
    constant = np.array([2.0, 2.0, 2.0])
    varying = np.array([1.0, 2.0, 3.0])
    for metric in (pearson, spearman):
        assert metric(constant, varying) == 0.0
        assert metric(varying, constant, constant=-1.0) == -1.0
        assert metric(varying, varying) == pytest.approx(1.0)
        assert metric(varying, -varying) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="at least 2"):
        pearson([1.0], [1.0])
    with pytest.raises(ValueError, match="inconsistent"):
        mean_absolute_error([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        root_mean_squared_error([1.0, np.inf], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 1"):
        mean_absolute_error([], [])
