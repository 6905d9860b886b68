"""Overlap metrics on binary masks and label maps: Dice, IoU, volume difference, aggregated Dice."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.regions import Region, region_pairs


def dice(reference: np.ndarray, prediction: np.ndarray, empty: float = 1.0, empty_reference: float = 0.0) -> float:
    """Dice similarity coefficient 2|R∩P| / (|R| + |P|) of two boolean masks of one shape.

    ``empty`` is returned when both masks are empty (0/0); 1.0 is the usual convention
    (e.g. BioMedIA-MBZUAI/HECKTOR2025 Task1/utils/metrics.py), NaN lets a caller exclude the case.
    ``empty_reference`` is returned when only the reference is empty: 0.0 is the formula's value;
    autoPET IV gives NaN there (lab-midas/autoPETCTIV ``evaluation_metrics/evaluation_metrics.py``,
    ``dice_score``: NaN whenever the reference is empty).
    """
    reference = np.asarray(reference, dtype=bool)
    prediction = np.asarray(prediction, dtype=bool)
    if reference.shape != prediction.shape:
        raise ValueError(f"mask shapes differ: {reference.shape} vs {prediction.shape}")
    ref_count, pred_count = int(np.count_nonzero(reference)), int(np.count_nonzero(prediction))
    if ref_count + pred_count == 0:
        return float(empty)
    if ref_count == 0:
        return float(empty_reference)
    return 2.0 * int(np.count_nonzero(reference & prediction)) / (ref_count + pred_count)


def _counts(intersections: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-case ``|G ∩ P|`` and ``|G| + |P|`` as (n,) finite arrays, each 0 <= 2|G ∩ P| <= |G| + |P|."""
    intersections = checks.as_finite("intersections", intersections, ndim=1)
    totals = checks.as_finite("totals", totals, ndim=1)
    checks.same_length(intersections=intersections, totals=totals)
    if np.any(intersections < 0) or np.any(2 * intersections > totals):
        raise ValueError("each intersection must lie between 0 and half its total |G| + |P|")
    return intersections, totals


def dice_from_counts(intersections: np.ndarray, totals: np.ndarray, empty: float = 1.0) -> np.ndarray:
    """Each case's Dice ``2|G ∩ P| / (|G| + |P|)`` (:func:`dice`) from its counts, all cases at once.

    ``intersections`` and ``totals``: (n,) per-case ``|G ∩ P|`` and ``|G| + |P|`` (mm³ or voxels), as
    for :func:`aggregated_dice`; ``empty``: the value of a case with both masks empty (0/0; 1.0 as
    :func:`dice`, NaN lets a caller exclude the case). Returns an (n,) float array.
    """
    intersections, totals = _counts(intersections, totals)
    value = np.divide(2.0 * intersections, totals, out=np.zeros_like(totals), where=totals > 0)
    return np.where(totals > 0, value, float(empty))


def aggregated_dice(
    intersections: np.ndarray, totals: np.ndarray, weights: np.ndarray | None = None, empty: float = 1.0
) -> float | np.ndarray:
    """Aggregated Dice ``2 * sum(|G ∩ P|) / sum(|G| + |P|)`` over cases, from per-case numbers.

    ``intersections`` and ``totals`` are per-case ``|G ∩ P|`` and ``|G| + |P|`` (mm³ or voxels).
    Reference: voreille/hecktor notebooks/evaluate_segmentation2022.ipynb and BioMedIA-MBZUAI/HECKTOR2025
    Task1/utils/metrics.py (``DiceAggScore``, 1.0 when the label is absent everywhere: ``empty``).
    ``weights`` (resamples x cases, bootstrap draw counts) gives one value per resample at once.
    """
    intersections, totals = _counts(intersections, totals)
    if weights is None:
        total = totals.sum()
        return float(2.0 * intersections.sum() / total) if total > 0 else float(empty)
    weights = checks.as_finite("weights", weights, ndim=2)
    if weights.shape[1] != intersections.size:
        raise ValueError(f"weights has {weights.shape[1]} columns for {intersections.size} cases")
    numerator, denominator = 2.0 * (weights @ intersections), weights @ totals
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, empty)


def dice_per_label(
    reference: np.ndarray, prediction: np.ndarray, labels: Sequence[Region], empty: float = 1.0
) -> np.ndarray:
    """Dice (:func:`dice`) of each label, or region of labels, of two integer label maps.

    Parameters
    ----------
    reference, prediction : (*shape) integer label maps of one shape (any dimensionality).
    labels : the label values to score, e.g. ``[1, 2, 3]``, or regions (label unions, scored as one
        mask; :mod:`evaluation.metrics.regions`), e.g. KiTS23's ``[(1, 2, 3), (2, 3), 2]``; a label
        absent from both maps gets ``empty``.
    empty : value when a label is absent from both maps (0/0); 1.0 as in :func:`dice`.

    Returns
    -------
    (len(labels),) float array, in the order of ``labels``.
    """
    return np.array([dice(r, p, empty) for r, p in region_pairs(reference, prediction, labels)])


def iou(reference: np.ndarray, prediction: np.ndarray, empty: float = 1.0) -> float:
    """Intersection over union (Jaccard index) |R∩P| / |R∪P| of two boolean masks of one shape.

    Jaccard, "The distribution of the flora in the alpine zone", New Phytologist 1912; MetricsReloaded
    ``MetricsReloaded/metrics/pairwise_measures.py`` (``intersection_over_union``).

    Parameters
    ----------
    reference, prediction : boolean masks of one shape.
    empty : value when both masks are empty (0/0); 1.0, as for :func:`dice`.

    Returns
    -------
    float in [0, 1].
    """
    reference = np.asarray(reference, dtype=bool)
    prediction = np.asarray(prediction, dtype=bool)
    checks.same_shape(reference, prediction)
    union = int(np.count_nonzero(reference | prediction))
    if union == 0:
        return float(empty)
    return int(np.count_nonzero(reference & prediction)) / union


def iou_per_label(
    reference: np.ndarray, prediction: np.ndarray, labels: Sequence[Region], empty: float = 1.0
) -> np.ndarray:
    """IoU (:func:`iou`) of each label or region of two integer label maps; (len(labels),) float array."""
    return np.array([iou(r, p, empty) for r, p in region_pairs(reference, prediction, labels)])


def volume_difference(
    reference: np.ndarray,
    prediction: np.ndarray,
    voxel_volume: float = 1.0,
    relative: bool = False,
    absolute: bool = True,
    empty_reference: float = float("inf"),
) -> float:
    """Volume difference ``V(P) - V(R)`` of two boolean masks, optionally absolute and/or relative to V(R).

    The relative absolute form is MetricsReloaded's ``absolute_volume_difference_ratio``
    (``MetricsReloaded/metrics/pairwise_measures.py``; Maier-Hein et al., "Metrics reloaded", Nature
    Methods 2024).

    Parameters
    ----------
    reference, prediction : boolean masks of one shape.
    voxel_volume : volume of one voxel (e.g. mm³, the product of the spacing); 1.0 counts voxels.
    relative : divide by the reference volume V(R).
    absolute : take ``|V(P) - V(R)|``; otherwise the signed difference (positive = over-segmentation).
    empty_reference : the relative value when V(R) = 0 and V(P) > 0 (division by zero); both empty
        gives 0.0 in every form.

    Returns
    -------
    float: in ``voxel_volume`` units, or a ratio when ``relative``.
    """
    reference = np.asarray(reference, dtype=bool)
    prediction = np.asarray(prediction, dtype=bool)
    checks.same_shape(reference, prediction)
    checks.as_finite("voxel_volume", voxel_volume)
    ref_count, pred_count = int(np.count_nonzero(reference)), int(np.count_nonzero(prediction))
    difference = float(pred_count - ref_count)
    if absolute:
        difference = abs(difference)
    if not relative:
        return difference * float(voxel_volume)
    if ref_count == 0:
        return 0.0 if pred_count == 0 else float(empty_reference)
    return difference / ref_count


def voxel_sensitivity(
    reference: np.ndarray, prediction: np.ndarray, both_empty: float = 1.0, one_empty: float = 0.0
) -> float:
    """Voxel-wise sensitivity |R∩P| / |R| of two boolean masks of one shape.

    BraTS 2023 (github rachitsaluja/BraTS-2023-Metrics, ``metrics.py``
    ``get_sensitivity_and_specificity``, from mlcommons/GaNDLF ``GANDLF/metrics/segmentation.py``):
    an empty reference gives 1.0 when the prediction is empty too (``both_empty``) and 0.0 otherwise
    (``one_empty``; its ``TP / (TP + FN + tiny)`` is 0 there).
    """
    reference, prediction = checks.binary_pair(reference, prediction)
    positives = int(np.count_nonzero(reference))
    if positives == 0:
        return float(both_empty if not prediction.any() else one_empty)
    return int(np.count_nonzero(reference & prediction)) / positives


def voxel_specificity(reference: np.ndarray, prediction: np.ndarray, empty: float = 0.0) -> float:
    """Voxel-wise specificity |¬R∩¬P| / |¬R| of two boolean masks of one shape.

    BraTS 2023 (as :func:`voxel_sensitivity`); ``empty``: the value when the reference covers every
    voxel (0/0; BraTS's ``TN / (TN + FP + tiny)`` gives 0.0).
    """
    reference, prediction = checks.binary_pair(reference, prediction)
    negatives = reference.size - int(np.count_nonzero(reference))
    if negatives == 0:
        return float(empty)
    return int(np.count_nonzero(~(reference | prediction))) / negatives
