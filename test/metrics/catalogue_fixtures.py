"""Small deterministic 3D masks for the catalogue's golden tests (numpy only, no random draws).

The same functions generated the reference numbers written in ``test_catalogue_segmentation.py``
from panoptica and MetricsReloaded (run outside this repository's venv, see that file).
"""

from __future__ import annotations

import numpy as np

SHAPE = (12, 20, 24)


def _box(mask: np.ndarray, z: tuple[int, int], y: tuple[int, int], x: tuple[int, int]) -> None:
    mask[z[0] : z[1], y[0] : y[1], x[0] : x[1]] = True


def lesion_case(index: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference and prediction masks with several lesions: matches at varied IoU, split and merged
    lesions, misses and false positives (``index`` 0..3 shifts and resizes them)."""
    reference = np.zeros(SHAPE, dtype=bool)
    prediction = np.zeros(SHAPE, dtype=bool)
    s = index
    _box(reference, (1, 5), (1, 6), (1, 6))  # A: well predicted
    _box(prediction, (1, 5), (2, 6 + s % 2), (1, 5 + s))
    _box(reference, (1, 4), (10, 14), (2, 10))  # B: predicted as two halves (each a partial match)
    _box(prediction, (1, 4), (10, 14), (2, 5 + s))
    _box(prediction, (1, 4), (10, 14), (6 + s, 10))
    _box(reference, (7, 10), (2, 5), (2, 5))  # C and D: predicted as one merged blob
    _box(reference, (7, 10), (2, 5), (7, 10 + s))
    _box(prediction, (7, 10), (2, 5), (2, 10))
    _box(reference, (7, 11), (12, 18), (14, 20))  # E: missed
    if s != 1:
        _box(prediction, (6, 8), (15, 19), (1, 3 + s))  # F: a false positive
    _box(reference, (1, 3), (16, 19), (18, 22))  # G: small, matched at a low IoU
    _box(prediction, (1, 4), (16, 19), (19, 23))
    return reference, prediction


def surface_case(index: int) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float]]:
    """Two overlapping blobs (a box and a shifted, resized box with a notch) and an anisotropic spacing."""
    reference = np.zeros(SHAPE, dtype=bool)
    prediction = np.zeros(SHAPE, dtype=bool)
    _box(reference, (2, 9), (3, 15), (4, 17 + index))
    _box(reference, (4, 7), (15, 18), (8, 12))
    _box(prediction, (3, 10), (4 + index, 16), (3, 15))
    prediction[5:7, 8:10, 6 + index : 9 + index] = False
    spacings = ((1.0, 1.0, 1.0), (3.0, 0.8, 0.8), (2.0, 1.5, 0.7), (1.25, 1.0, 2.0))
    return reference, prediction, spacings[index]


def greedy_trap_case() -> tuple[np.ndarray, np.ndarray]:
    """Lines along x where greedy matching by IoU is suboptimal at an IoU threshold of 0.2.

    R1 = x 0..9, R2 = x 12..19; P1 = x 4..15 overlaps R1 (IoU 6/16) and R2 (4/16); P2 = x 0..2 lies
    in R1 (IoU 3/10). Greedy takes (R1, P1) first and is left with 1 match; the maximum-IoU
    assignment takes (R1, P2) and (R2, P1): 2 matches.
    """
    reference = np.zeros((3, 3, 24), dtype=bool)
    prediction = np.zeros((3, 3, 24), dtype=bool)
    reference[1, 1, 0:10] = reference[1, 1, 12:20] = True
    prediction[1, 1, 4:16] = prediction[1, 1, 0:3] = True
    return reference, prediction


def binary_case() -> tuple[np.ndarray, np.ndarray]:
    """40 reference labels (16 positives) and informative scores in (0, 1] with ties (2 decimals)."""
    i = np.arange(40)
    truth = ((i * 7) % 5 < 2).astype(int)
    scores = np.round(np.minimum(0.3 * truth + ((i * 37) % 41 + 1) / 60.0, 1.0), 2)
    return truth, scores


def multiclass_case() -> tuple[np.ndarray, np.ndarray]:
    """45 labels of 3 classes and row-normalised probabilities leaning to the right class."""
    i = np.arange(45)
    truth = (i * 7 + i // 9) % 3
    raw = np.stack([((i * (5 + 3 * c)) % 17 + 1) / 17.0 for c in range(3)], axis=1)
    raw[i, truth] += 0.35
    return truth, raw / raw.sum(axis=1, keepdims=True)


def ordinal_case() -> tuple[np.ndarray, np.ndarray]:
    """30 ordinal grades 0..3 and predicted grades off by 0, 1 or 2."""
    i = np.arange(30)
    truth = (i * 5) % 4
    offset = np.array([0, 0, 1, -1, 0, 2, 0, -1, 1, 0])[i % 10]
    return truth, np.clip(truth + offset, 0, 3)
