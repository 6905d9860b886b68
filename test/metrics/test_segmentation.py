"""summarise_label_maps: counts by numpy, HD95 / NSD by DeepMind's ``surface-distance`` on the full
volume, lesion counts and the edge cases by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import surface_distance as deepmind
from scipy import ndimage

from evaluation.metrics.segmentation import summarise_label_maps


@pytest.mark.parametrize("seed", range(6))
def test_counts_and_surfaces_equal_numpy_and_deepmind(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(8, 24, 3))
    spacing = tuple(float(s) for s in rng.uniform(0.5, 3.0, 3))
    reference = np.zeros(shape, np.uint8)
    prediction = np.zeros(shape, np.uint8)
    for label in (1, 2):
        reference[ndimage.binary_dilation(rng.random(shape) < 0.01, iterations=2)] = label
        prediction[ndimage.binary_dilation(rng.random(shape) < 0.01, iterations=2)] = label
    found = summarise_label_maps(reference, prediction, spacing, (1, 2), (1.0, 2.0))
    assert found.voxel_volume == pytest.approx(math.prod(spacing), rel=1e-15)
    for label in (1, 2):
        r, p = reference == label, prediction == label
        counts = found.labels[label]
        expected = (np.count_nonzero(r), np.count_nonzero(p), np.count_nonzero(r & p))
        assert (counts.reference_voxels, counts.prediction_voxels, counts.intersection_voxels) == expected
        if not r.any() or not p.any():
            continue
        distances = deepmind.compute_surface_distances(r, p, spacing)
        assert counts.hd95 == pytest.approx(deepmind.compute_robust_hausdorff(distances, 95), abs=1e-9)
        nsd = [deepmind.compute_surface_dice_at_tolerance(distances, t) for t in (1.0, 2.0)]
        assert counts.nsd == pytest.approx(nsd, abs=1e-9)


def test_lesion_counts_by_hand():
    """Label 2: reference lesions at x 0-3 and 10-13; the prediction covers x 1-3 (IoU 3/4 > 0.3: TP),
    misses the second (FN) and adds x 20-21 (FP)."""
    reference = np.zeros((1, 1, 30), np.uint8)
    prediction = np.zeros_like(reference)
    reference[0, 0, 0:4] = reference[0, 0, 10:14] = 2
    prediction[0, 0, 1:4] = prediction[0, 0, 20:22] = 2
    found = summarise_label_maps(reference, prediction, (1.0, 1.0, 1.0), (1, 2), surface=False, lesion_labels=(2,))
    assert (found.lesions[2].tp, found.lesions[2].fp, found.lesions[2].fn) == (1, 1, 1)
    assert math.isnan(found.labels[2].hd95)  # surface off: not computed
    assert 1 not in found.lesions


def test_edge_cases():
    empty = np.zeros((4, 5, 6), np.uint8)
    both_empty = summarise_label_maps(empty, empty, (2.0, 1.0, 1.0), (1, 2), (1.0,), surface=False, lesion_labels=(2,))
    # both maps empty everywhere: the values of two empty surfaces, whatever ``surface`` says; no lesion
    assert both_empty.labels[1].hd95 == 0.0 and both_empty.labels[1].nsd == (1.0,)
    assert (both_empty.lesions[2].tp, both_empty.lesions[2].fp, both_empty.lesions[2].fn) == (0, 0, 0)
    reference = empty.copy()
    reference[1, 1, 1] = 1
    one_empty = summarise_label_maps(reference, empty, (2.0, 1.0, 1.0), (1,), (1.0,))
    # a mask against an empty one: the grid diagonal sqrt(8² + 5² + 6²) mm, NSD 0
    assert one_empty.labels[1].hd95 == pytest.approx(math.sqrt(8**2 + 5**2 + 6**2), abs=1e-12)
    assert one_empty.labels[1].nsd == (0.0,)
    with pytest.raises(ValueError, match="shapes differ"):
        summarise_label_maps(reference, empty[:, :, :5], (1.0, 1.0, 1.0), (1,))
