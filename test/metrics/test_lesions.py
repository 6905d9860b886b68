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


def whole_mask_pairs(reference: np.ndarray, prediction: np.ndarray) -> tuple[int, int, dict[tuple[int, int], float]]:
    """The oracle: scipy's 26-connected labelling of the whole masks (numbered in scan order), every
    pair's IoU counted voxel by voxel."""
    from scipy import ndimage

    structure = np.ones((3, 3, 3), dtype=bool)
    ref_labels, n_ref = ndimage.label(reference, structure)
    pred_labels, n_pred = ndimage.label(prediction, structure)
    pairs = {}
    for r in range(1, n_ref + 1):
        for p in np.unique(pred_labels[ref_labels == r]):
            if p:
                both = np.count_nonzero((ref_labels == r) & (pred_labels == p))
                either = np.count_nonzero((ref_labels == r) | (pred_labels == p))
                pairs[(r, int(p))] = both / either
    return n_ref, n_pred, pairs


@pytest.mark.parametrize("seed", range(8))
def test_lesions_far_apart_paired_part_by_part_as_the_whole_masks(seed):
    """Lesions apart from each other are labelled box by box (issue 20); their numbers (the greedy
    tie-break) and IoUs are those of labelling the whole masks at once, and so are the matches."""
    from evaluation.metrics.boxes import bounding_box, separated_boxes
    from evaluation.metrics.lesions import lesion_pairs

    rng = np.random.default_rng(seed)
    reference, prediction = np.zeros((16, 70, 70), dtype=bool), np.zeros((16, 70, 70), dtype=bool)
    for _ in range(7):
        centre = rng.integers((3, 6, 6), (13, 64, 64))
        for mask in (reference, prediction):
            if rng.random() < 0.8:
                low, size = centre - rng.integers(0, 3, 3), rng.integers(1, 6, 3)
                mask[tuple(slice(int(a), int(a) + int(n)) for a, n in zip(low, size, strict=True))] = True
    assert len(separated_boxes((reference | prediction)[bounding_box(reference, prediction)]) or ()) > 1
    found = lesion_pairs(reference, prediction)
    n_ref, n_pred, expected = whole_mask_pairs(reference, prediction)
    assert (found.n_reference, found.n_prediction) == (n_ref, n_pred)
    got = {(int(r), int(p)): float(iou) for r, p, iou in zip(found.ref_ids, found.pred_ids, found.iou, strict=True)}
    assert got == expected
    for threshold in (0.0, 0.3):
        assert match_lesions(reference, prediction, threshold) == _greedy_counts(expected, n_ref, n_pred, threshold)


def _greedy_counts(pairs: dict[tuple[int, int], float], n_ref: int, n_pred: int, threshold: float) -> LesionCounts:
    """Greedy one-to-one by descending IoU, ties by reference then predicted number (the module's rule)."""
    used_ref, used_pred, tp = set(), set(), 0
    for (r, p), iou in sorted(pairs.items(), key=lambda item: (-item[1], item[0])):
        if iou > threshold and r not in used_ref and p not in used_pred:
            used_ref.add(r)
            used_pred.add(p)
            tp += 1
    return LesionCounts(tp, n_pred - tp, n_ref - tp)
