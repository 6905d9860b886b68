"""One-sided paired Wilcoxon signed-rank tests for every ordered pair of algorithms, for many resamples at once.

The test is R's ``wilcox.test(x, y, paired = TRUE, exact = FALSE)`` as challengeR 1.0.5 calls it
(``R/testBased.R``, ``Decision``): zero differences dropped, average ranks of |d|, normal
approximation with tie correction and continuity correction; equal to ``scipy.stats.wilcoxon(x, y,
alternative=..., zero_method="wilcox", correction=True, method="approx")`` (proved in
test/ranking/test_significance.py). With no non-zero difference R's statistic has zero variance and
its p-value is 1 (never significant); scipy returns NaN there.

A resample is a vector of case multiplicities (weights). For each unordered pair the cases are sorted
by |d| ONCE; a resample's average ranks then follow from cumulative sums of the weights in that order,
so no resample is re-sorted and no test function is called per pair per resample. The statistic of
the reversed pair is n(n+1)/2 - V, so one pass serves both directions.
"""

from __future__ import annotations

import numpy as np

from evaluation.ranking.primitives import holm

_CHUNK_ELEMENTS = 4_000_000


def _pair_layout(values: np.ndarray) -> dict[str, np.ndarray]:
    """Per unordered pair: the |d| sort order, validity, sign and tie-group boundaries in that order."""
    n_algorithms = values.shape[0]
    first, second = np.triu_indices(n_algorithms, 1)
    difference = values[first] - values[second]
    valid = np.isfinite(difference) & (difference != 0)
    magnitude = np.where(valid, np.abs(difference), np.inf)
    order = np.argsort(magnitude, axis=1, kind="stable")
    ordered = np.take_along_axis(magnitude, order, axis=1)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones(ordered.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    return {
        "first": first,
        "second": second,
        "order": order,
        "valid": np.take_along_axis(valid, order, axis=1).astype(np.int16),
        "positive": np.take_along_axis(difference > 0, order, axis=1).astype(np.int16),
        "starts": starts,
        "ends": ends,
    }


def _statistics(layout: dict[str, np.ndarray], weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """V (sum of positive ranks), n (non-zero pairs) and sum(t^3 - t) per (resample, pair).

    Integer arithmetic throughout (twice the average rank is an integer), so the statistics are exact.
    Cumulative counts never decrease along |d| order, so the count before a tie group is a running
    maximum over group starts and the count through a group a reversed running minimum over group ends.
    """
    drawn = weights[:, layout["order"]] * layout["valid"]  # (resamples, pairs, cases) in |d| order
    through_here = np.cumsum(drawn, axis=2, dtype=drawn.dtype)
    before_here = through_here - drawn
    before = np.maximum.accumulate(np.where(layout["starts"], before_here, 0), axis=2)
    big = np.iinfo(drawn.dtype).max
    through = np.flip(
        np.minimum.accumulate(np.flip(np.where(layout["ends"], through_here, big), axis=2), axis=2), axis=2
    )
    tied = through - before
    twice_statistic = np.einsum("bpc,bpc->bp", drawn * layout["positive"], 2 * before + tied + 1, dtype=np.int64)
    ties = np.where(layout["starts"], tied.astype(np.int64) ** 3 - tied, 0).sum(axis=2)
    return twice_statistic / 2.0, through_here[..., -1].astype(float), ties.astype(float)


def _one_sided(statistic: np.ndarray, n: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """P(V this large) under H0, R's normal approximation with continuity correction; 1 when n = 0.

    The upper normal tail is ``scipy.special.ndtr(-z)``, which is what ``scipy.stats.norm.sf`` computes,
    imported here so that runs without a test do not pay for SciPy."""
    from scipy.special import ndtr

    variance = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - ties / 48.0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (statistic - n * (n + 1.0) / 4.0 - 0.5) / np.sqrt(variance)
    return np.where(n > 0, ndtr(-z), 1.0)


def better_pvalues(values: np.ndarray, weights: np.ndarray, smaller_better: bool = False) -> np.ndarray:
    """``p[b, i, j]``: one-sided p-value that algorithm i is better than j in resample b (diagonal NaN).

    ``values`` is (algorithms, cases) with NaN for a pair to leave out (challengeR ``na.rm``: the test uses
    the cases both algorithms have); ``weights`` is (resamples, cases), the multiplicity of each case.
    """
    n_algorithms, n_cases = values.shape
    weights = np.atleast_2d(np.asarray(weights))
    # counts, cumulative counts and twice the ranks stay below 2 * n_cases + 2: int16 halves memory traffic
    weights = weights.astype(np.int16 if 2 * n_cases + 2 < np.iinfo(np.int16).max else np.int32)
    layout = _pair_layout(values)
    n_pairs = layout["first"].size
    result = np.full((weights.shape[0], n_algorithms, n_algorithms), np.nan)
    step = max(1, _CHUNK_ELEMENTS // max(1, n_pairs * n_cases))
    for start in range(0, weights.shape[0], step):
        chunk = slice(start, start + step)
        statistic, n, ties = _statistics(layout, weights[chunk])
        forward = _one_sided(statistic, n, ties)  # first better than second when larger is better
        backward = _one_sided(n * (n + 1.0) / 2.0 - statistic, n, ties)
        if smaller_better:
            forward, backward = backward, forward
        result[chunk, layout["first"], layout["second"]] = forward
        result[chunk, layout["second"], layout["first"]] = backward
    return result


def decisions(pvalues: np.ndarray, alpha: float, adjust: str) -> np.ndarray:
    """Significant wins ``[b, i, j]`` after adjusting over all n(n-1) ordered tests (``none`` or ``holm``)."""
    n = pvalues.shape[-1]
    off = ~np.eye(n, dtype=bool)
    flat = pvalues[:, off]
    if adjust == "holm":
        flat = holm(flat)
    wins = np.zeros(pvalues.shape, dtype=bool)
    wins[:, off] = flat <= alpha
    return wins
