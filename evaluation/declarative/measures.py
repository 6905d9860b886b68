"""The metric adapters of declared challenges: a declared metric name -> a call of the metric catalogue
(``evaluation.metrics``) on the small per-case numbers the workers return (segmentation) or on the
case-level outputs (values). No metric is defined here: each comes from the catalogue, and this
module only maps the declaration onto it (names, parameters, edge values, aggregate forms).

- Dice per case ``overlap.dice_from_counts`` and aggregated (dataset) Dice ``overlap.aggregated_dice``
  (voreille/hecktor); IoU = D / (2 - D), an identity that holds per case and for the dataset form
  ΣI / Σ|R∪P|; HD95 and NSD as ``evaluation.metrics.surface`` (DeepMind surface-distance); lesion
  F1 as ``evaluation.metrics.lesions``;
- value metrics: ``VALUE_METRICS`` maps a declared name to its catalogue entry (``auroc``,
  ``average_precision``, ``brier_score``, ``expected_calibration_error``, ``mae``, ``rmse``,
  ``accuracy``, ``balanced_accuracy``), ``PARAMETERS`` a declared key to the catalogue's parameter
  (``bins`` -> ``n_bins``); a declared edge value (``single_class``, ``no_positive``) is the
  catalogue's parameter of that name, ``"error"`` asks the engine to refuse the edge case.
Bootstrap CIs pass the resamples' draw counts as the catalogue's ``weights`` (one value per
resample, equal to the metric of the expanded resample); a resample that hits an edge case is NaN,
left out of the percentile interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.metrics import catalogue
from evaluation.metrics.lesions import f1_score
from evaluation.metrics.overlap import aggregated_dice, dice_from_counts

# ------------------------------------------------------------------------- segmentation, per case


def _edge(values: np.ndarray, where: np.ndarray, value: float | str) -> np.ndarray:
    """``values`` with the declared ``value`` at ``where``; "exclude" is NaN (left out of means)."""
    return np.where(where, np.nan if isinstance(value, str) else float(value), values)


def dice_values(inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str) -> np.ndarray:
    """Per-case Dice; ``both_empty`` (a number, or "exclude" = NaN) where both masks lack the label."""
    return _edge(dice_from_counts(inter, ref + pred, empty=np.nan), ref + pred == 0, both_empty)


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

VALUE_METRICS = {  # declared name -> catalogue name
    "auroc": "auroc",
    "average_precision": "average_precision",
    "brier": "brier_score",
    "ece": "expected_calibration_error",
    "mae": "mae",
    "rmse": "rmse",
    "balanced_accuracy": "balanced_accuracy",
    "accuracy": "accuracy",
}
PARAMETERS = {"bins": "n_bins"}  # a declared key -> the catalogue's parameter, where they differ
# every edge-case parameter of a catalogue entry above (the declared key, "error" or a number) -> what it means
EDGE_CASES = {"single_class": "a single class", "no_positive": "no positive case"}


def value_metric(
    metric: str, truth: np.ndarray, predicted: np.ndarray, params: Mapping[str, Any], weights: np.ndarray | None = None
) -> float | np.ndarray:
    """The catalogue's ``VALUE_METRICS[metric]`` of the scored cases with the declared ``params``; with
    ``weights`` (resamples x cases draw counts) one value per resample, NaN for a resample that hits an
    edge case. A declared edge value ``"error"`` gives NaN (the engine refuses it with a message)."""
    entry = catalogue.get(VALUE_METRICS[metric])
    keywords: dict[str, Any] = {PARAMETERS.get(key, key): value for key, value in params.items()}
    for edge in entry.edge_cases:
        if weights is not None or keywords.get(edge) == "error":
            keywords[edge] = float("nan")
    if weights is not None:
        keywords["weights"] = weights
    return catalogue.compute(entry.name, truth, predicted, **keywords)
