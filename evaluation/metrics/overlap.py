"""Overlap metrics on binary masks."""

from __future__ import annotations

import numpy as np


def dice(reference: np.ndarray, prediction: np.ndarray, empty: float = 1.0) -> float:
    """Dice similarity coefficient 2|R∩P| / (|R| + |P|) of two boolean masks of one shape.

    ``empty`` is returned when both masks are empty (0/0); 1.0 is the usual convention
    (e.g. BioMedIA-MBZUAI/HECKTOR2025 Task1/utils/metrics.py), NaN lets a caller exclude the case.
    """
    reference = np.asarray(reference, dtype=bool)
    prediction = np.asarray(prediction, dtype=bool)
    if reference.shape != prediction.shape:
        raise ValueError(f"mask shapes differ: {reference.shape} vs {prediction.shape}")
    total = int(np.count_nonzero(reference)) + int(np.count_nonzero(prediction))
    if total == 0:
        return float(empty)
    return 2.0 * int(np.count_nonzero(reference & prediction)) / total


def aggregated_dice(
    intersections: np.ndarray, totals: np.ndarray, weights: np.ndarray | None = None, empty: float = 1.0
) -> float | np.ndarray:
    """Aggregated Dice ``2 * sum(|G ∩ P|) / sum(|G| + |P|)`` over cases, from per-case numbers.

    ``intersections`` and ``totals`` are per-case ``|G ∩ P|`` and ``|G| + |P|`` (mm³ or voxels).
    Reference: voreille/hecktor notebooks/evaluate_segmentation2022.ipynb and BioMedIA-MBZUAI/HECKTOR2025
    Task1/utils/metrics.py (``DiceAggScore``, 1.0 when the label is absent everywhere: ``empty``).
    ``weights`` (resamples x cases, bootstrap draw counts) gives one value per resample at once.
    """
    intersections = np.asarray(intersections, dtype=float)
    totals = np.asarray(totals, dtype=float)
    if weights is None:
        total = totals.sum()
        return float(2.0 * intersections.sum() / total) if total > 0 else float(empty)
    weights = np.asarray(weights, dtype=float)
    numerator, denominator = 2.0 * (weights @ intersections), weights @ totals
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, empty)
