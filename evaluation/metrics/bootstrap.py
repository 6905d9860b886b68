"""Seeded bootstrap resampling and percentile intervals.

Bootstraps resample per-case results (never re-read or recompute images): draw an index matrix
once, then evaluate a vectorised statistic on it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from evaluation.metrics import checks

_BLOCK_ELEMENTS = 4_000_000  # draws counted at once by row_counts (32 MB of int64 offsets)


def resample_indices(n_cases: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n_cases)`` indices drawn with replacement by ``numpy.random.default_rng(seed)``."""
    if n_cases < 1:
        raise ValueError("cannot resample an empty set of cases")
    return np.random.default_rng(seed).integers(0, n_cases, size=(n_resamples, n_cases))


def row_counts(indices: np.ndarray, width: int) -> np.ndarray:
    """``counts[i, k]``: how often ``k`` occurs in row ``i`` of ``indices`` (a draw matrix becomes the
    integer case weights of each resample)."""
    indices = np.asarray(indices)
    counts = np.empty((indices.shape[0], width), dtype=np.int64)
    block = max(1, _BLOCK_ELEMENTS // max(1, indices.shape[1], width))  # no second full-size offset matrix
    for start in range(0, indices.shape[0], block):
        part = indices[start : start + block]
        offsets = part + width * np.arange(part.shape[0])[:, None]
        counts[start : start + block] = np.bincount(offsets.ravel(), minlength=width * part.shape[0]).reshape(-1, width)
    return counts


def resample_weights(n_cases: int, n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, n_cases)`` draw counts of :func:`resample_indices`."""
    return row_counts(resample_indices(n_cases, n_resamples, seed), n_cases)


def drawn_cases(weights: np.ndarray) -> Iterator[np.ndarray]:
    """Each resample's drawn case indices, case ``k`` repeated ``weights[i, k]`` times (in case
    order): the resample itself, for a metric that has no weighted form."""
    cases = np.arange(np.shape(weights)[1])
    return (np.repeat(cases, row) for row in np.asarray(weights, dtype=np.int64))


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval (numpy ``linear`` = R type 7), NaNs ignored."""
    tail = 100.0 * (1.0 - level) / 2.0
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return float("nan"), float("nan")
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def case_weights(weights: np.ndarray, n_cases: int) -> np.ndarray:
    """``weights`` as a (resamples, n_cases) float array of non-negative, finite case weights with a
    positive sum per row (a row's weights are the draw counts of one resample); ``ValueError`` otherwise."""
    weights = checks.as_finite("weights", weights, ndim=2)
    if weights.shape[1] != n_cases:
        raise ValueError(f"weights has {weights.shape[1]} columns for {n_cases} cases")
    if np.any(weights < 0) or not np.all(weights.sum(axis=1) > 0):
        raise ValueError("weights must be non-negative with a positive sum in every row")
    return weights


def resample_means(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The weighted mean of per-case ``values`` (n,) under each row of ``weights`` (resamples, n):
    the mean over each resample's expanded set of cases."""
    return (weights @ values) / weights.sum(axis=1)
