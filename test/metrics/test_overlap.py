"""Per-case and aggregated Dice: the issue's hand-computed goldens."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics.overlap import aggregated_dice, dice


def line(*ranges: tuple[int, int], length: int = 10) -> np.ndarray:
    mask = np.zeros(length, dtype=bool)
    for start, stop in ranges:
        mask[start:stop] = True
    return mask


def test_aggregated_and_per_patient_dice_golden():
    # 1x1x10 patients, spacing (1, 1, 2): every voxel 2 mm³, a common factor
    gtvp = [(line((0, 4)), line((1, 5))), (line((2, 5)), line((2, 5))), (line((0, 2)), line())]
    gtvn = [(line((6, 8)), line((6, 7), (9, 10))), (line(), line((8, 9))), (line(), line())]

    def sums(pairs):
        inter = np.array([2.0 * np.count_nonzero(g & p) for g, p in pairs])
        total = np.array([2.0 * (np.count_nonzero(g) + np.count_nonzero(p)) for g, p in pairs])
        return inter, total

    p, n = aggregated_dice(*sums(gtvp)), aggregated_dice(*sums(gtvn))
    assert p == pytest.approx(0.75) and n == pytest.approx(0.4) and (p + n) / 2 == pytest.approx(0.575)
    assert np.mean([dice(g, q) for g, q in gtvp]) == pytest.approx(0.583333, abs=1e-6)


def test_mm3_versus_voxels():
    # A: spacing (1,1,1), GT 0:4, pred 2:6; B: spacing z=3, GT = pred = 0:2
    inter_voxels, total_voxels = np.array([2, 2]), np.array([8, 4])
    volume = np.array([1.0, 3.0])
    assert aggregated_dice(inter_voxels * volume, total_voxels * volume) == pytest.approx(0.8)
    assert aggregated_dice(inter_voxels, total_voxels) == pytest.approx(0.666667, abs=1e-6)


def test_absent_label_and_bootstrap_weights():
    assert aggregated_dice(np.zeros(3), np.zeros(3)) == 1.0
    inter, total = np.array([1.0, 0.0, 3.0]), np.array([4.0, 2.0, 6.0])
    weights = np.array([[1, 1, 1], [3, 0, 0], [0, 3, 0]])
    assert aggregated_dice(inter, total, weights).tolist() == pytest.approx([8 / 12, 0.5, 0.0])
    assert aggregated_dice(np.zeros(2), np.zeros(2), np.array([[2, 0]]), empty=1.0).tolist() == [1.0]
