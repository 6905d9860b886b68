"""``summary_statistics``: pandas ``Series.describe()`` as evalutils writes it (comic/evalutils v0.3.1
``BaseEvaluation.aggregate_series``: "25%" -> "25pc"), checked against pandas itself and by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evaluation.metrics.bootstrap import resample_weights
from evaluation.metrics.summary_statistics import STATISTICS, describe, resampled_statistic, statistic


def _pandas(values: np.ndarray) -> dict[str, float]:
    """pandas' describe() of the values under evalutils' names (the oracle)."""
    summary = pd.Series(values, dtype=float).describe()
    return {key.replace("%", "pc"): float(summary[key]) for key in summary.index}


def _same(ours: dict[str, float], theirs: dict[str, float]) -> None:
    assert sorted(ours) == sorted(theirs) == sorted(STATISTICS)
    for key, value in theirs.items():
        if math.isnan(value):
            assert math.isnan(ours[key]), key
        else:
            assert ours[key] == pytest.approx(value, abs=1e-12, rel=1e-12), key


@pytest.mark.parametrize("seed", range(12))
def test_equals_pandas_describe_with_null_cases(seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=int(rng.integers(1, 30))) * 10.0 ** rng.integers(-3, 4)
    values[rng.random(values.size) < 0.3] = np.nan  # cases without a value: skipped, not counted
    values[rng.random(values.size) < 0.2] = 0.5  # ties
    _same(describe(values), _pandas(values))


@pytest.mark.parametrize(
    "values",
    [[], [np.nan, np.nan], [3.0], [np.nan, 2.0], [1.0, np.inf, 2.0], [-np.inf, 1.0], [2.0, 2.0, 2.0, 2.0]],
    ids=["none", "all-null", "one", "one-and-null", "inf", "minus-inf", "constant"],
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_edge_values_equal_pandas(values):
    """No value: count 0 and the rest NaN; one value: std NaN (ddof 1); infinite values count."""
    _same(describe(np.array(values, dtype=float)), _pandas(np.array(values, dtype=float)))


def test_by_hand():
    """[1, null, 3, 4]: count 3; quartiles by linear interpolation between the sorted values."""
    found = describe(np.array([1.0, np.nan, 3.0, 4.0]))
    assert found["count"] == 3.0 and found["mean"] == pytest.approx(8 / 3)
    assert found["std"] == pytest.approx(math.sqrt(((1 - 8 / 3) ** 2 + (3 - 8 / 3) ** 2 + (4 - 8 / 3) ** 2) / 2))
    assert (found["min"], found["25pc"], found["50pc"], found["75pc"], found["max"]) == (1.0, 2.0, 3.0, 3.5, 4.0)


def test_resamples_are_the_statistic_of_the_drawn_cases():
    values = np.array([0.1, np.nan, 0.7, 0.4, 0.9])
    weights = resample_weights(values.size, 50, 7)
    for name in STATISTICS:
        expected = [statistic(np.repeat(values, row), name) for row in weights]
        np.testing.assert_array_equal(resampled_statistic(values, name, weights), expected)


def test_unknown_statistic_and_bad_weights_are_refused():
    with pytest.raises(ValueError, match="statistic must be one of"):
        statistic(np.ones(3), "median")
    with pytest.raises(ValueError, match="weights must be"):
        resampled_statistic(np.ones(3), "mean", np.ones((2, 4)))
