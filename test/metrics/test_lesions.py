"""Lesion matching: a 2D case built by hand (TP 1, FP 3, FN 2) and the one-to-one greedy rule."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics.lesions import LesionCounts, f1_score, match_lesions


def test_hand_built_2d_case_f1():
    reference = np.zeros((12, 12), dtype=bool)
    prediction = np.zeros((12, 12), dtype=bool)
    reference[0:3, 0:3] = True  # lesion R1 (9 px)
    prediction[0:3, 1:3] = True  # P1 inside R1: IoU 6/9 -> TP
    reference[6:8, 6:8] = True  # R2 (4 px)
    prediction[7:9, 7:9] = True  # P2: overlap 1 px, IoU 1/7 <= 0.3 -> FP, and R2 FN
    reference[11, 0] = True  # R3: isolated pixel, never predicted -> FN
    prediction[4, 10] = prediction[10, 10] = True  # P3, P4: far from anything -> FP
    counts = match_lesions(reference, prediction)
    assert counts == LesionCounts(tp=1, fp=3, fn=2)
    assert f1_score(counts.tp, counts.fp, counts.fn) == pytest.approx(2 / 7)
    assert round(2 / 7, 6) == 0.285714


def test_diagonal_pixels_are_one_lesion_in_3d():
    reference = np.zeros((3, 3, 3), dtype=bool)
    reference[0, 0, 0] = reference[1, 1, 1] = reference[2, 2, 2] = True  # 26-connected: one lesion
    assert match_lesions(reference, reference) == LesionCounts(1, 0, 0)


def test_one_to_one_greedy_by_descending_iou():
    reference = np.zeros((1, 1, 20), dtype=bool)
    prediction = reference.copy()
    reference[0, 0, 0:10] = True  # one lesion of 10 voxels
    prediction[0, 0, 0:4] = True  # IoU 0.4
    prediction[0, 0, 5:10] = True  # IoU 0.5: matched first; the other is a false positive
    assert match_lesions(reference, prediction) == LesionCounts(1, 1, 0)
    prediction[0, 0, 5:10] = False
    prediction[0, 0, 7:10] = True  # IoU 0.3 is not > 0.3
    assert match_lesions(reference, prediction) == LesionCounts(1, 1, 0)


def test_empty_and_f1_conventions():
    empty = np.zeros((2, 2, 2), dtype=bool)
    full = ~empty
    assert match_lesions(empty, empty) == LesionCounts(0, 0, 0)
    assert match_lesions(full, empty) == LesionCounts(0, 0, 1)
    assert match_lesions(empty, full) == LesionCounts(0, 1, 0)
    assert f1_score(0, 0, 0) == 1.0
    assert f1_score(np.array([1, 0]), np.array([0, 1]), np.array([1, 0])).tolist() == pytest.approx([2 / 3, 0.0])
