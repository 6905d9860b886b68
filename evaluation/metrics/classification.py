"""Multi-class classification metrics as defined by the ISIC Challenge scoring package.

Definitions from ImageMarkup/isic-challenge-scoring 5.6.0, ``isic_challenge_scoring/metrics.py``
and ``confusion.py`` (read, not copied); scikit-learn computes every curve and area:

- labels are each row's argmax; a row whose maximum is tied is *undecided* (always wrong);
- balanced multi-class accuracy is the mean over categories of weighted true positives over the
  weighted reference count, a category without (weighted) reference examples left out; rows whose
  reference label is undecided do not count;
- per-category confusion metrics binarise with ``> 0.5`` and score an empty denominator as 1.0
  (accuracy alone is NaN on zero total weight);
- ``auc_sens_80`` is the raw (not McClish-corrected) area of the ROC curve right of the point where
  the TPR first reaches 0.8, that point's FPR interpolated linearly on the crossing segment.

All functions are pure; ``weights`` default to 1 for every row.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    auc,
    average_precision_score,
    balanced_accuracy_score,
    roc_auc_score,
    roc_curve,
)

UNDECIDED = -1
CONFUSION_METRICS = ("accuracy", "sensitivity", "specificity", "dice", "ppv", "npv")
CURVE_METRICS = ("auc", "auc_sens_80", "ap")
CATEGORY_METRICS = (*CONFUSION_METRICS, *CURVE_METRICS)  # the reference's column order


@contextmanager
def _quiet() -> Iterator[None]:
    """scikit-learn warns on the degenerate inputs the definitions handle on purpose."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def argmax_labels(scores: np.ndarray) -> np.ndarray:
    """Column index of each row's maximum, ``UNDECIDED`` where the maximum is not unique."""
    is_max = scores == scores.max(axis=1, keepdims=True)
    labels = is_max.argmax(axis=1)
    labels[is_max.sum(axis=1) > 1] = UNDECIDED
    return labels


def balanced_multiclass_accuracy(
    truth_labels: np.ndarray, predicted_labels: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """Mean per-category recall of argmax labels (``UNDECIDED`` predictions count as wrong).

    scikit-learn's balanced accuracy is the same mean once rows with an undecided reference are
    dropped: a label without weighted reference examples (``UNDECIDED`` among the predictions, a
    category absent or only zero-weighted) has a NaN recall, which it leaves out.
    """
    decided = truth_labels != UNDECIDED
    truth, predicted = truth_labels[decided], predicted_labels[decided]
    sample_weight = None if weights is None else weights[decided]
    if not decided.any() or (sample_weight is not None and not np.any(sample_weight)):
        return float("nan")
    with _quiet():
        accuracy = balanced_accuracy_score(truth, predicted, sample_weight=sample_weight)
    return float(accuracy)


def _ratio(numerator: np.ndarray, denominator: np.ndarray, empty: float) -> np.ndarray:
    safe = np.where(denominator == 0, 1, denominator)
    return np.where(denominator == 0, empty, numerator / safe)


def confusion_metrics(
    truth: np.ndarray, predicted: np.ndarray, weights: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Per-column accuracy, sensitivity, specificity, dice, PPV, NPV of two (n, k) boolean arrays."""
    row_weights = np.ones(truth.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    # weighted counts as products (scikit-learn's multilabel_confusion_matrix refuses all-zero weights)
    tp, fp = row_weights @ (truth & predicted), row_weights @ (~truth & predicted)
    fn, tn = row_weights @ (truth & ~predicted), row_weights @ (~truth & ~predicted)
    total = tn + fp + fn + tp
    return {
        "accuracy": _ratio(tp + tn, total, float("nan")),
        "sensitivity": _ratio(tp, tp + fn, 1.0),
        "specificity": _ratio(tn, tn + fp, 1.0),
        "dice": _ratio(2 * tp, 2 * tp + fp + fn, 1.0),
        "ppv": _ratio(tp, tp + fp, 1.0),
        "npv": _ratio(tn, tn + fn, 1.0),
    }


def _all_zero(weights: np.ndarray | None) -> bool:
    return weights is not None and not np.any(weights)


def roc_auc(truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Area under the ROC curve; NaN when a class has no (weighted) examples."""
    if _all_zero(weights):
        return float("nan")
    with _quiet():
        return float(roc_auc_score(truth, scores, sample_weight=weights))


def average_precision(truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> float:
    """scikit-learn's average precision (0.0 without weighted positives, as scikit-learn 1.9 gives;
    NaN when every weight is 0)."""
    if _all_zero(weights):
        return float("nan")
    with _quiet():
        return float(average_precision_score(truth, scores, sample_weight=weights))


def auc_above_sensitivity(
    truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None, sensitivity: float = 0.8
) -> float:
    """Raw partial ROC area for TPR >= ``sensitivity``; NaN without weighted positives or negatives.

    Zero-weighted rows are dropped before the curve is drawn (all thresholds kept); the curve is
    cut at the first point whose TPR reaches ``sensitivity``, preceded by the point at exactly that
    TPR on the segment from the previous curve point.
    """
    if not 0 < sensitivity <= 1:
        raise ValueError(f"sensitivity must be in (0, 1], got {sensitivity}")
    truth = np.asarray(truth, dtype=bool)
    if weights is not None:
        kept = weights != 0
        truth, scores, weights = truth[kept], scores[kept], weights[kept]
    row_weights = np.ones(truth.size) if weights is None else weights
    if not np.any(row_weights[truth]) or not np.any(row_weights[~truth]):
        return float("nan")
    fpr, tpr, _ = roc_curve(truth, scores, sample_weight=weights, drop_intermediate=False)
    first = int(np.searchsorted(tpr, sensitivity, side="left"))
    fpr_at = np.interp(sensitivity, tpr[first - 1 : first + 1], fpr[first - 1 : first + 1])
    return float(auc(np.r_[fpr_at, fpr[first:]], np.r_[sensitivity, tpr[first:]]))


def curve_metrics(
    truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Per-column auc, auc_sens_80 and ap of (n, k) reference 0/1 values and scores."""
    columns = range(truth.shape[1])
    return {
        "auc": np.array([roc_auc(truth[:, c], scores[:, c], weights) for c in columns]),
        "auc_sens_80": np.array([auc_above_sensitivity(truth[:, c], scores[:, c], weights) for c in columns]),
        "ap": np.array([average_precision(truth[:, c], scores[:, c], weights) for c in columns]),
    }


def category_metrics(
    truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None, threshold: float = 0.5
) -> dict[str, np.ndarray]:
    """Every per-category metric (``CATEGORY_METRICS``) of (n, k) reference values and scores."""
    confusion = confusion_metrics(truth > threshold, scores > threshold, weights)
    return {**confusion, **curve_metrics(truth > threshold, scores, weights)}


def macro_mean(values: np.ndarray) -> float:
    """Mean over categories skipping NaN (pandas' default); NaN when every value is NaN."""
    values = np.asarray(values, dtype=float)
    finite = values[~np.isnan(values)]
    return float(finite.mean()) if finite.size else float("nan")
