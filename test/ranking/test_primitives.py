"""The numpy rank primitive against scipy.stats.rankdata, which it replaces to keep SciPy out of start-up."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata as scipy_rankdata

from evaluation.ranking.primitives import rankdata


@pytest.mark.parametrize("method", ["min", "max", "average", "ordinal"])
@pytest.mark.parametrize("seed", range(20))
def test_rankdata_equals_scipy_on_ties_and_infinities(method, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 7, size=int(rng.integers(1, 4))))
    values = np.round(rng.normal(size=shape))  # many ties
    values[rng.random(shape) < 0.15] = np.inf  # how rank_na sets NAs aside
    expected = scipy_rankdata(values, method=method, axis=-1).astype(float)
    np.testing.assert_array_equal(rankdata(values, method), expected)
