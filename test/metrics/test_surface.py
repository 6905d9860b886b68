"""HD95 and NSD against DeepMind's ``surface-distance`` package (the definition's reference) as oracle."""

from __future__ import annotations

import numpy as np
import pytest
import surface_distance as deepmind
from scipy import ndimage

from evaluation.metrics.boxes import bounding_box, crop_padded, separated_boxes
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
        assert [found.hd(95), found.nsd(1.0), found.nsd(2.0), found.hd(100)] == expected  # to the last bit


def test_ct_like_spacing_and_a_shifted_sphere():
    z, y, x = np.mgrid[:20, :40, :40]
    spacing = (3.0, 0.98, 0.98)
    reference = ((z - 10) * 3.0) ** 2 + ((y - 20) * 0.98) ** 2 + ((x - 20) * 0.98) ** 2 < 12.0**2
    prediction = ((z - 11) * 3.0) ** 2 + ((y - 22) * 0.98) ** 2 + ((x - 20) * 0.98) ** 2 < 11.0**2
    found = surface_distances(reference, prediction, spacing)
    assert [found.hd(95), found.nsd(1.0), found.nsd(2.0), found.hd(100)] == oracle(reference, prediction, spacing)


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


SPACINGS = [(3.0, 0.98, 0.98), (2.5, 0.8, 0.7), (1.0, 1.0, 1.0), (5.0, 0.5, 0.5), (0.6, 0.7, 3.0), (0.1, 0.1, 0.1)]


@pytest.mark.parametrize("seed", range(12))
def test_every_distance_is_the_distance_transforms_to_the_last_bit(seed):
    """The crops, the offset scan and the KD-tree for far surfels (issue 20) give the arrays of DeepMind's
    ``compute_surface_distances`` (a distance transform over the box) bit for bit, so every HD, NSD and
    MASD is the package's to the last bit: the
    prediction is the reference shifted (near surfels, found by the scan), plus scattered blobs and one
    lesion far from everything (left to the tree), under spacings from isotropic to 10:1."""
    rng = np.random.default_rng(seed)
    reference = np.zeros((16, 48, 44), dtype=bool)
    reference[2:11, 5:30, 8:25] = blobs(rng, (9, 25, 17), 0.6)
    prediction = np.roll(reference, tuple(rng.integers(-2, 3, 3)), axis=(0, 1, 2)) | blobs(rng, reference.shape, 0.02)
    far = np.zeros_like(reference)
    far[12:15, 38:46, 34:42] = True
    prediction |= far if seed % 2 else np.zeros_like(far)
    reference |= far if seed % 3 == 1 else np.zeros_like(far)
    assert_deepmind_arrays(reference, prediction, SPACINGS[seed % len(SPACINGS)])


def assert_deepmind_arrays(reference: np.ndarray, prediction: np.ndarray, spacing) -> None:
    found = surface_distances(reference, prediction, spacing)
    expected = deepmind.compute_surface_distances(reference, prediction, spacing)
    assert found.reference_to_prediction.tobytes() == expected["distances_gt_to_pred"].tobytes()
    assert found.reference_areas.tobytes() == expected["surfel_areas_gt"].tobytes()
    assert found.prediction_to_reference.tobytes() == expected["distances_pred_to_gt"].tobytes()
    assert found.prediction_areas.tobytes() == expected["surfel_areas_pred"].tobytes()


def test_separated_boxes_enclose_every_voxel_with_empty_voxels_around():
    mask = np.zeros((10, 30, 30), dtype=bool)
    mask[1:3, 2:5, 2:6] = True  # one part
    mask[6:9, 3:4, 20:25] = True  # same y band, other x band
    mask[2:4, 20:26, 10:12] = True  # other y band ...
    mask[7:8, 22:23, 11:12] = True  # ... same x band, other z band (one empty plane between)
    boxes = separated_boxes(mask)
    assert sorted(boxes) == sorted([
        (slice(1, 3), slice(2, 5), slice(2, 6)),
        (slice(6, 9), slice(2, 5), slice(20, 25)),
        (slice(2, 4), slice(20, 26), slice(10, 12)),
        (slice(7, 8), slice(20, 26), slice(10, 12)),
    ])  # fmt: skip
    inside = np.zeros_like(mask)
    for box in boxes:
        inside[box] = True
        grown = tuple(slice(max(axis.start - 1, 0), axis.stop + 1) for axis in box)
        shell = np.zeros_like(mask)
        shell[grown] = True
        shell[box] = False
        assert not mask[shell].any()
    assert not mask[~inside].any()
    assert separated_boxes(mask, limit=3) is None


@pytest.mark.parametrize("seed", range(6))
def test_lesions_far_apart_found_part_by_part_equal_deepmind_to_the_last_bit(seed):
    """Several lesions apart from each other (their surfels found box by box) and, for odd seeds, more
    specks than ``separated_boxes``' limit (one box again): DeepMind's arrays bit for bit."""
    rng = np.random.default_rng(seed)
    reference, prediction = np.zeros((20, 90, 90), dtype=bool), np.zeros((20, 90, 90), dtype=bool)
    for _ in range(6):
        centre = rng.integers((4, 8, 8), (16, 82, 82))
        for mask, shift in ((reference, 0), (prediction, rng.integers(-1, 2, 3))):
            if rng.random() < 0.85:  # some lesions missed, some extra
                low = centre + shift - rng.integers(1, 4, 3)
                size = rng.integers(2, 7, 3)
                mask[tuple(slice(int(a), int(a) + int(n)) for a, n in zip(low, size, strict=True))] = True
    if seed % 2:
        prediction |= rng.random(prediction.shape) < 0.0004  # ~65 specks
    parts = separated_boxes((reference | prediction)[bounding_box(reference, prediction)])
    assert (parts is None) if seed % 2 else (len(parts) > 1)
    assert_deepmind_arrays(reference, prediction, SPACINGS[seed])


def test_nsd_at_a_tolerance_equal_to_a_lattice_distance():
    """On a 1 mm grid a surfel one voxel from the other surface is at exactly 1.0 mm: NSD at 1 mm counts
    it (``<=``), as DeepMind's, and NSD just below 1 mm does not."""
    reference = np.zeros((8, 12, 12), dtype=bool)
    reference[2:6, 3:9, 3:9] = True
    prediction = np.roll(reference, 1, axis=2)
    found = surface_distances(reference, prediction, (1.0, 1.0, 1.0))
    expected = deepmind.compute_surface_distances(reference, prediction, (1.0, 1.0, 1.0))
    assert found.nsd(1.0) == deepmind.compute_surface_dice_at_tolerance(expected, 1.0)
    assert found.nsd(1.0) > found.nsd(0.999) == deepmind.compute_surface_dice_at_tolerance(expected, 0.999)


def test_a_mask_of_any_nonzero_values_is_its_nonzero_voxels():
    """A label map's own values (7 here) mark the inside, not bits of a neighbourhood code."""
    reference = np.zeros((6, 14, 14), dtype=np.uint8)
    reference[1:5, 2:9, 3:10] = 7
    prediction = np.roll(reference, 2, axis=1).astype(float) * 0.5
    found = surface_distances(reference, prediction, (2.0, 0.9, 0.8))
    expected = surface_distances(reference > 0, prediction > 0, (2.0, 0.9, 0.8))
    for name in ("reference_to_prediction", "reference_areas", "prediction_to_reference", "prediction_areas"):
        assert getattr(found, name).tobytes() == getattr(expected, name).tobytes()
    assert_deepmind_arrays(reference > 0, prediction > 0, (2.0, 0.9, 0.8))


def test_holes_all_through_a_mask_read_from_the_distance_transform(monkeypatch):
    """A prediction with holes all through it has many surfels far from the reference's surface: they
    are read from a distance transform (the package's own computation), DeepMind's arrays bit for bit."""
    import evaluation.metrics.surface as surface

    calls = []
    transform = surface._nearest_by_distance_transform
    monkeypatch.setattr(
        surface, "_nearest_by_distance_transform", lambda *args: calls.append(args[0].size) or transform(*args)
    )
    z, y, x = np.ogrid[:24, :40, :40]
    reference = ((z - 12) * 2.0) ** 2 + ((y - 20) * 0.9) ** 2 + ((x - 20) * 0.9) ** 2 < 16.0**2
    prediction = reference & (np.random.default_rng(0).random(reference.shape) > 0.05)
    assert_deepmind_arrays(reference, prediction, (2.0, 0.9, 0.9))
    assert calls and calls[0] > 1000


@pytest.mark.parametrize("spacing", [(1e-6, 1.0, 1.0), (1.0, 1.0, 1e-5), (100.0, 0.01, 1.0)])
def test_extreme_spacings_stay_exact_with_a_bounded_scan(spacing):
    """A needle-shaped ball of offsets is cut at ``SCAN_REACH`` voxels (the scan stays small; the rest
    is searched for): DeepMind's arrays bit for bit."""
    from evaluation.metrics.surface import SCAN_REACH, _scan

    rng = np.random.default_rng(1)
    reference = blobs(rng, (12, 20, 20), 0.03)
    prediction = np.roll(reference, 1, axis=1) | blobs(rng, (12, 20, 20), 0.01)
    assert max(_scan(spacing).reach) <= SCAN_REACH
    assert_deepmind_arrays(reference, prediction, spacing)
