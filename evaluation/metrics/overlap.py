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
