"""HD95 and NSD against DeepMind's ``surface-distance`` package (the definition's reference) as oracle."""

from __future__ import annotations

import numpy as np
import pytest
import surface_distance as deepmind
from scipy import ndimage

from evaluation.metrics.boxes import bounding_box, crop_padded
from evaluation.metrics.surface import surface_distances


def blobs(rng: np.random.Generator, shape: tuple[int, ...], density: float) -> np.ndarray:
    return ndimage.binary_dilation(rng.random(shape) < density, iterations=int(rng.integers(1, 3)))


def oracle(reference: np.ndarray, prediction: np.ndarray, spacing) -> list[float]:
    found = deepmind.compute_surface_distances(reference, prediction, spacing)
    return [
        deepmind.compute_robust_hausdorff(found, 95),
        deepmind.compute_surface_dice_at_tolerance(found, 1.0),
        deepmind.compute_surface_dice_at_tolerance(found, 2.0),
        deepmind.compute_robust_hausdorff(found, 100),
    ]


@pytest.mark.parametrize("seed", range(12))
def test_equals_deepmind_on_random_shapes(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(6, 28, 3))
    spacing = tuple(float(s) for s in rng.uniform(0.4, 3.5, 3))  # anisotropic
    reference, prediction = blobs(rng, shape, 0.02), blobs(rng, shape, 0.02)
    if seed % 3 == 0:  # objects touching the volume border
        reference[0] = True
        prediction[:, -1] = True
    if not reference.any() or not prediction.any():
        pytest.skip("an empty draw")
    expected = oracle(reference, prediction, spacing)
    box = bounding_box(reference, prediction)
    cropped = surface_distances(crop_padded(reference, box), crop_padded(prediction, box), spacing)
    full = surface_distances(reference, prediction, spacing)
    for found in (cropped, full):
        assert [found.hd(95), found.nsd(1.0), found.nsd(2.0), found.hd(100)] == pytest.approx(expected, abs=1e-12)


def test_ct_like_spacing_and_a_shifted_sphere():
    z, y, x = np.mgrid[:20, :40, :40]
    spacing = (3.0, 0.98, 0.98)
    reference = ((z - 10) * 3.0) ** 2 + ((y - 20) * 0.98) ** 2 + ((x - 20) * 0.98) ** 2 < 12.0**2
    prediction = ((z - 11) * 3.0) ** 2 + ((y - 22) * 0.98) ** 2 + ((x - 20) * 0.98) ** 2 < 11.0**2
    found = surface_distances(reference, prediction, spacing)
    assert [found.hd(95), found.nsd(1.0), found.nsd(2.0), found.hd(100)] == pytest.approx(
        oracle(reference, prediction, spacing), abs=1e-12
    )


def test_documented_values_for_empty_masks():
    empty = np.zeros((4, 5, 6), dtype=bool)
    some = empty.copy()
    some[1:3, 2:4, 2:4] = True
    both_empty = surface_distances(empty, empty, (1.0, 1.0, 1.0), empty_distance=99.0)
    assert both_empty.hd(95) == 0.0 and both_empty.nsd(1.0) == 1.0
    for reference, prediction in ((some, empty), (empty, some)):
        one_empty = surface_distances(reference, prediction, (2.0, 1.0, 1.0), empty_distance=99.0)
        assert one_empty.hd(95) == 99.0 and one_empty.nsd(2.0) == 0.0
    assert bounding_box(empty, empty) is None


def test_bounding_box_is_the_union():
    a = np.zeros((5, 6, 7), dtype=np.uint8)
    b = a.copy()
    a[1, 2, 3] = 1
    b[3, 0, 5] = 2
    assert bounding_box(a, b) == (slice(1, 4), slice(0, 3), slice(3, 6))
    assert crop_padded(a, bounding_box(a, b)).shape == (5, 5, 5)


def whole_grid(reference: np.ndarray, prediction: np.ndarray, spacing) -> tuple[np.ndarray, ...]:
    """The computation without any shortcut: surfels of the whole grid, every surfel queried in a
    KD-tree of the other surface (scipy), in mm on the uncropped grid's indices; sorted as ours."""
    from scipy.spatial import cKDTree

    from evaluation.metrics.surface import surfels

    (r_border, r_areas), (p_border, p_areas) = surfels(reference, spacing), surfels(prediction, spacing)
    step = np.asarray(spacing, dtype=float)
    r_points, p_points = np.argwhere(r_border) * step, np.argwhere(p_border) * step
    r_to_p, p_to_r = cKDTree(p_points).query(r_points)[0], cKDTree(r_points).query(p_points)[0]
    r_order, p_order = np.argsort(r_to_p, kind="stable"), np.argsort(p_to_r, kind="stable")
    return r_to_p[r_order], r_areas[r_order], p_to_r[p_order], p_areas[p_order]


@pytest.mark.parametrize("seed", range(12))
def test_crops_and_shared_surfels_change_no_bit(seed):
    """The per-mask crop and the shared surfels' zero distances (issue 20) give the whole-grid
    computation's arrays bit for bit, so HD95 / NSD / MASD are unchanged to the last bit."""
    rng = np.random.default_rng(seed)
    reference = np.zeros((14, 40, 36), dtype=bool)
    reference[2:11, 5:30, 8:25] = blobs(rng, (9, 25, 17), 0.6)
    prediction = np.roll(reference, tuple(rng.integers(-2, 3, 3)), axis=(0, 1, 2)) | blobs(rng, reference.shape, 0.02)
    spacing = (3.0, 0.98, 0.98) if seed % 2 else (2.5, 0.8, 0.7)
    found = surface_distances(reference, prediction, spacing)
    ours = (found.reference_to_prediction, found.reference_areas, found.prediction_to_reference, found.prediction_areas)
    for got, expected in zip(ours, whole_grid(reference, prediction, spacing), strict=True):
        assert got.tobytes() == expected.tobytes()
