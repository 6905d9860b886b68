"""The summary statistics of a per-case metric that every evalutils evaluation container writes
beside its mean: ``mean``, ``std``, ``min``, ``25pc``, ``50pc``, ``75pc``, ``max``, ``count``.

Reference: comic/evalutils (v0.3.1, ``evalutils/evalutils.py``, ``BaseEvaluation.score_aggregates`` and
``aggregate_series``): each per-case column's ``pandas.Series.describe()``, written as
``aggregates.<metric>.<statistic>`` with "%" replaced by "pc" ("25%" -> "25pc"). pandas' definitions
(``Series.describe`` of a numeric series): NaN (a case without a value) is skipped by every statistic;
``count`` is the number of the other values; ``std`` is the sample standard deviation (ddof 1: NaN for
fewer than two values); the quartiles are ``Series.quantile`` with linear interpolation (NumPy's
default ``percentile`` method); with no value every statistic but ``count`` (0) is NaN. Infinite
values are values (pandas counts them).
"""

from __future__ import annotations

import numpy as np

# pandas describe()'s statistics in its order, under evalutils' names
STATISTICS = ("mean", "std", "min", "25pc", "50pc", "75pc", "max", "count")
_QUANTILES = {"25pc": 25.0, "50pc": 50.0, "75pc": 75.0}


def statistic(values: np.ndarray, name: str) -> float:
    """One of ``STATISTICS`` of the per-case ``values`` (NaN: no value, skipped); ``count`` as a float."""
    if name not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {name!r}")
    values = np.asarray(values, dtype=float).ravel()
    kept = values[~np.isnan(values)]
    if name == "count":
        return float(kept.size)
    if kept.size == 0 or (name == "std" and kept.size < 2):
        return float("nan")
    if name == "mean":
        return float(kept.mean())
    if name == "std":
        return float(kept.std(ddof=1))
    if name == "min":
        return float(kept.min())
    if name == "max":
        return float(kept.max())
    return float(np.percentile(kept, _QUANTILES[name]))


def describe(values: np.ndarray) -> dict[str, float]:
    """Every statistic of ``values``, as pandas ``Series.describe()`` under evalutils' names."""
    return {name: statistic(values, name) for name in STATISTICS}


def resampled_statistic(values: np.ndarray, name: str, weights: np.ndarray) -> np.ndarray:
    """``statistic`` of each bootstrap resample: ``weights`` holds (resamples, n) draw counts of the
    ``values`` (``bootstrap.resample_weights``); one value per resample."""
    values = np.asarray(values, dtype=float).ravel()
    counts = np.asarray(weights)
    if counts.ndim != 2 or counts.shape[1] != values.size:
        raise ValueError(f"weights must be (resamples, {values.size}), got shape {counts.shape}")
    return np.array([statistic(np.repeat(values, row.astype(np.int64)), name) for row in counts], dtype=float)
