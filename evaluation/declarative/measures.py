"""The metric adapters of declared challenges: a declared metric name -> a computation on the small
per-case numbers the workers return (segmentation) or on the case-level outputs (values).

THE ONE PLACE to switch to the shared catalogue (``evaluation.metrics.catalogue``) once it exists:
``VALUE_METRICS`` maps a name to ``f(truth, predicted, weight, params) -> float`` and the
``*_values`` / ``*_dataset`` functions below turn counts into per-case and dataset-level values;
replacing their bodies by catalogue calls changes nothing else in the engine.

Definitions and their references:
- Dice 2|R∩P| / (|R|+|P|) and its aggregated (dataset) form 2Σ|R∩P| / Σ(|R|+|P|)
  (``evaluation.metrics.overlap.aggregated_dice``; voreille/hecktor); IoU = |R∩P| / |R∪P| (and its
  dataset form ΣI / Σ|R∪P|), computed as D / (2 - D), an identity that holds for both forms;
- HD95 and NSD: DeepMind's surface-element definition (``evaluation.metrics.surface``);
- lesion F1: connected components matched one-to-one (``evaluation.metrics.lesions``);
- AUROC and average precision: ``sklearn.metrics.roc_auc_score`` / ``average_precision_score``;
  balanced accuracy: ``sklearn.metrics.balanced_accuracy_score`` (mean recall over the classes present
  in the reference);
- Brier score (Brier 1950, Mon. Weather Rev. 78:1): mean of (p - y)²;
- expected calibration error (Naeini et al., AAAI 2015; Guo et al., ICML 2017) of a binary
  probability: ``bins`` equal-width bins on [0, 1] (bin k holds k/bins <= p < (k+1)/bins, the last
  also p = 1), ECE = Σ_b (n_b / n) |mean(y in b) - mean(p in b)|;
- MAE, RMSE: mean absolute error, root of the mean squared error.
Every function takes case weights (bootstrap draw counts; 1 without a bootstrap), so one definition
serves the value and its confidence interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from evaluation.metrics.lesions import f1_score
from evaluation.metrics.overlap import aggregated_dice

# ------------------------------------------------------------------------- segmentation, per case


def _edge(values: np.ndarray, where: np.ndarray, value: float | str) -> np.ndarray:
    """``values`` with the declared ``value`` at ``where``; "exclude" is NaN (left out of means)."""
    return np.where(where, np.nan if isinstance(value, str) else float(value), values)


def dice_values(inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str) -> np.ndarray:
    """Per-case Dice; ``both_empty`` (a number, or "exclude" = NaN) where both masks lack the label."""
    raw = np.array([aggregated_dice(i, r + p, empty=np.nan) for i, r, p in zip(inter, ref, pred, strict=True)])
    return _edge(raw, ref + pred == 0, both_empty)


def iou_values(inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str) -> np.ndarray:
    """Per-case IoU = D / (2 - D); ``both_empty`` as for Dice."""
    dice = dice_values(inter, ref, pred, np.nan)
    return _edge(dice / (2.0 - dice), ref + pred == 0, both_empty)


def surface_values(
    raw: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str, one_empty: float | str
) -> np.ndarray:
    """HD95 / NSD per case with the declared edge values: ``both_empty`` (a number or "exclude"), and
    ``one_empty`` (a number, or "diagonal": the raw value, the image diagonal in mm, for HD95)."""
    one = (ref == 0) != (pred == 0)
    values = raw if one_empty == "diagonal" else _edge(raw, one, one_empty)
    return _edge(values, (ref == 0) & (pred == 0), both_empty)


def lesion_f1_values(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, no_lesions: float) -> np.ndarray:
    """Per-case lesion F1 2TP / (2TP + FP + FN); ``no_lesions`` when neither mask has a lesion."""
    return np.atleast_1d(f1_score(tp, fp, fn, empty=no_lesions))


# --------------------------------------------------------------------- segmentation, over cases


def mean_over_cases(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray | float:
    """The mean of the non-NaN per-case values (NaN = excluded); per weight row when ``weights``."""
    counted = np.isfinite(values)
    if weights is None:
        return float(values[counted].mean()) if counted.any() else float("nan")
    sums, counts = weights[:, counted] @ values[counted], weights[:, counted].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def overlap_dataset(
    metric: str, inter: np.ndarray, totals: np.ndarray, absent: float, weights: np.ndarray | None = None
) -> np.ndarray | float:
    """Dataset-level Dice 2ΣI / Σ(|R|+|P|) or IoU ΣI / Σ|R∪P| (= D / (2 - D)); ``absent`` when the
    label is in no reference and no prediction (in mm³ or voxels, as the caller scaled them)."""
    dice = aggregated_dice(inter, totals, weights, empty=np.nan)
    value = dice if metric == "dice" else dice / (2.0 - dice)
    return np.where(np.isnan(dice), absent, value) if weights is not None else (absent if np.isnan(dice) else value)


def lesion_f1_dataset(counts: np.ndarray, no_lesions: float, weights: np.ndarray | None = None) -> Any:
    """F1 of TP / FP / FN summed over cases (``counts``: cases x 3)."""
    summed = counts.sum(axis=0) if weights is None else weights @ counts
    return f1_score(*summed.T, empty=no_lesions)


# -------------------------------------------------------------------------- case-level outputs


def _quiet(function: Callable[..., float], *args: Any, **kwargs: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(function(*args, **kwargs))


def _single_class(truth: np.ndarray, weight: np.ndarray) -> bool:
    return np.unique(truth[weight > 0]).size < 2


def auroc(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    from sklearn.metrics import roc_auc_score

    if _single_class(truth, weight):
        return float("nan")
    return _quiet(roc_auc_score, truth, predicted, sample_weight=weight)


def average_precision(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    from sklearn.metrics import average_precision_score

    if _single_class(truth, weight):
        return float("nan")
    return _quiet(average_precision_score, truth, predicted, sample_weight=weight)


def brier(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    return float(np.sum(weight * (predicted - truth) ** 2) / np.sum(weight))


def ece(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    bins = int(params["bins"])
    edges = np.arange(bins + 1) / bins  # bin k: edges[k] <= p < edges[k + 1], the last bin closed
    index = np.clip(np.searchsorted(edges, predicted, side="right") - 1, 0, bins - 1)
    gaps = np.bincount(index, weights=weight * (truth - predicted), minlength=bins)
    return float(np.abs(gaps).sum() / np.sum(weight))


def mae(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    return float(np.sum(weight * np.abs(predicted - truth)) / np.sum(weight))


def rmse(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    return float(np.sqrt(np.sum(weight * (predicted - truth) ** 2) / np.sum(weight)))


def balanced_accuracy(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    from sklearn.metrics import balanced_accuracy_score

    keep = weight > 0  # scikit-learn counts a class of zero weight as present (recall 0/0)
    return _quiet(balanced_accuracy_score, truth[keep], predicted[keep], sample_weight=weight[keep])


def accuracy(truth: np.ndarray, predicted: np.ndarray, weight: np.ndarray, params: Mapping[str, Any]) -> float:
    return float(np.sum(weight * (truth == predicted)) / np.sum(weight))


def _ranked_counts(truth: np.ndarray, predicted: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted true and false positives (resamples x distinct scores, from 0) at each threshold,
    scores descending: the points of the ROC and precision-recall curves of every weight row."""
    order = np.argsort(-predicted, kind="stable")
    scores, positive = predicted[order], truth[order] == 1
    rows = weights[:, order].astype(float)
    ends = np.r_[np.flatnonzero(np.diff(scores)), scores.size - 1]  # the last case of each tied group
    zero = np.zeros((rows.shape[0], 1))
    tp = np.hstack([zero, np.cumsum(rows * positive, axis=1)[:, ends]])
    fp = np.hstack([zero, np.cumsum(rows * ~positive, axis=1)[:, ends]])
    return tp, fp


def auroc_rows(truth: np.ndarray, predicted: np.ndarray, weights: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    """``auroc`` for every weight row at once: the trapezoidal area under the weighted ROC points
    (scikit-learn's ``roc_auc_score``; tied scores share one point); NaN for a single-class row."""
    tp, fp = _ranked_counts(truth, predicted, weights)
    area = np.sum(np.diff(fp, axis=1) * (tp[:, 1:] + tp[:, :-1]) / 2.0, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return area / (tp[:, -1] * fp[:, -1])


def average_precision_rows(
    truth: np.ndarray, predicted: np.ndarray, weights: np.ndarray, params: Mapping[str, Any]
) -> np.ndarray:
    """``average_precision`` for every weight row at once: Σ (R_k - R_k-1) P_k over thresholds by
    descending score (scikit-learn's step-wise definition); NaN for a row without a positive or a
    negative case (scikit-learn's single-class rows are left out the same way)."""
    tp, fp = _ranked_counts(truth, predicted, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.nan_to_num(tp[:, 1:] / (tp[:, 1:] + fp[:, 1:]))
        value = np.sum(np.diff(tp, axis=1) * precision, axis=1) / tp[:, -1]
    return np.where((tp[:, -1] > 0) & (fp[:, -1] > 0), value, np.nan)


VALUE_METRICS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray, Mapping[str, Any]], float]] = {
    "auroc": auroc,
    "average_precision": average_precision,
    "brier": brier,
    "ece": ece,
    "mae": mae,
    "rmse": rmse,
    "balanced_accuracy": balanced_accuracy,
    "accuracy": accuracy,
}

# vectorised forms for the bootstrap (one call for every resample); the others run once per resample
RESAMPLED: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray, Mapping[str, Any]], np.ndarray]] = {
    "auroc": auroc_rows,
    "average_precision": average_precision_rows,
}
