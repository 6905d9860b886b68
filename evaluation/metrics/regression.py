"""Regression metrics of a continuous prediction against a reference value, one value per case.

Errors (MAE, RMSE) by their textbook definitions; correlations by SciPy (``scipy.stats.pearsonr``,
``scipy.stats.spearmanr``). Harrell's C-index for survival lives in :mod:`evaluation.metrics.survival`.
"""

from __future__ import annotations

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.bootstrap import case_weights, resample_means


def _pairs(truth: np.ndarray, prediction: np.ndarray, minimum: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(n,) finite reference and prediction of one length, at least ``minimum`` cases."""
    truth = checks.as_finite("truth", truth, ndim=1)
    prediction = checks.as_finite("prediction", prediction, ndim=1)
    if checks.same_length(truth=truth, prediction=prediction) < minimum:
        raise ValueError(f"at least {minimum} cases are needed, got {truth.size}")
    return truth, prediction


def mean_absolute_error(
    truth: np.ndarray, prediction: np.ndarray, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """MAE ``mean(|prediction - truth|)`` of (n,) finite values (as ``sklearn.metrics.mean_absolute_error``);
    ``weights``: (resamples, n) case weights, for one value per row."""
    truth, prediction = _pairs(truth, prediction)
    if weights is not None:
        return resample_means(case_weights(weights, truth.size), np.abs(prediction - truth))
    return float(np.mean(np.abs(prediction - truth)))


def root_mean_squared_error(
    truth: np.ndarray, prediction: np.ndarray, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """RMSE ``sqrt(mean((prediction - truth)²))`` of (n,) finite values
    (as ``sklearn.metrics.root_mean_squared_error``); ``weights``: (resamples, n) case weights, for
    one value per row."""
    truth, prediction = _pairs(truth, prediction)
    if weights is not None:
        return np.sqrt(resample_means(case_weights(weights, truth.size), (prediction - truth) ** 2))
    return float(np.sqrt(np.mean((prediction - truth) ** 2)))


def pearson(truth: np.ndarray, prediction: np.ndarray, constant: float = 0.0) -> float:
    """Pearson's correlation coefficient r: ``scipy.stats.pearsonr`` (Pearson 1895).

    Parameters: ``truth``, ``prediction`` (n,) finite values, n >= 2; ``constant``: the value when
    either array is constant (r undefined, 0/0; SciPy warns and returns NaN). Returns a float in [-1, 1].
    """
    truth, prediction = _pairs(truth, prediction, minimum=2)
    if np.all(truth == truth[0]) or np.all(prediction == prediction[0]):
        return float(constant)
    from scipy import stats  # on first use: a segmentation worker never loads scipy.stats

    return float(stats.pearsonr(truth, prediction).statistic)


def spearman(truth: np.ndarray, prediction: np.ndarray, constant: float = 0.0) -> float:
    """Spearman's rank correlation rho (Pearson's r of the average ranks, ties averaged):
    ``scipy.stats.spearmanr`` (Spearman 1904).

    Parameters: ``truth``, ``prediction`` (n,) finite values, n >= 2; ``constant``: the value when
    either array is constant (rho undefined). Returns a float in [-1, 1].
    """
    truth, prediction = _pairs(truth, prediction, minimum=2)
    if np.all(truth == truth[0]) or np.all(prediction == prediction[0]):
        return float(constant)
    from scipy import stats

    return float(stats.spearmanr(truth, prediction).statistic)
