"""summarise_label_maps: counts by numpy, HD95 / HD / MASD / NSD by DeepMind's ``surface-distance`` on the
full volume, volume differences by numpy, lesion counts and the edge cases by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import surface_distance as deepmind
from metrics.catalogue_fixtures import greedy_trap_case, lesion_case
from scipy import ndimage

from evaluation.metrics.lesions import match_lesions, panoptic_quality
from evaluation.metrics.segmentation import LabelRequest, summarise_label_maps


def surfaces(label: int, tolerances: tuple[float, ...] = ()) -> LabelRequest:
    return LabelRequest(label, hd95=True, hausdorff=True, masd=True, nsd=tolerances)


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
    volumes = ((False, True, False), (True, False, True))  # |V(P) - V(R)| in voxels; (V(P) - V(R)) / V(R)
    requests = {label: LabelRequest(label, True, True, True, (1.0, 2.0), volumes=volumes) for label in (1, 2)}
    found = summarise_label_maps(reference, prediction, spacing, requests)
    assert found.voxel_volume == pytest.approx(math.prod(spacing), rel=1e-15) and not found.empty
    for label in (1, 2):
        r, p = reference == label, prediction == label
        counts = found.labels[label]
        expected = (np.count_nonzero(r), np.count_nonzero(p), np.count_nonzero(r & p))
        assert (counts.reference, counts.prediction, counts.intersection) == expected
        size_r, size_p = np.count_nonzero(r), np.count_nonzero(p)
        relative = (size_p - size_r) / size_r if size_r else math.nan
        assert dict(counts.volumes)[volumes[0]] == abs(size_p - size_r)
        assert dict(counts.volumes)[volumes[1]] == pytest.approx(relative, rel=1e-12, nan_ok=True)
        if not r.any() or not p.any():
            continue
        distances = deepmind.compute_surface_distances(r, p, spacing)
        assert counts.hd95 == pytest.approx(deepmind.compute_robust_hausdorff(distances, 95), abs=1e-9)
        assert counts.hausdorff == pytest.approx(deepmind.compute_robust_hausdorff(distances, 100), abs=1e-9)
        assert counts.masd == pytest.approx(np.mean(deepmind.compute_average_surface_distance(distances)), abs=1e-9)
        nsd = [deepmind.compute_surface_dice_at_tolerance(distances, t) for t in (1.0, 2.0)]
        assert [value for _, value in counts.nsd] == pytest.approx(nsd, abs=1e-9)
        assert [t for t, _ in counts.nsd] == [1.0, 2.0]


def test_lesion_counts_by_hand():
    """Label 2: reference lesions at x 0-3 and 10-13; the prediction covers x 1-3 (IoU 3/4 > 0.3: TP),
    misses the second (FN) and adds x 20-21 (FP)."""
    reference = np.zeros((1, 1, 30), np.uint8)
    prediction = np.zeros_like(reference)
    reference[0, 0, 0:4] = reference[0, 0, 10:14] = 2
    prediction[0, 0, 1:4] = prediction[0, 0, 20:22] = 2
    requests = {1: LabelRequest(1), 2: LabelRequest(2, lesions=(0.3, 0.8), hungarian=(0.3,), panoptic=(0.5,))}
    found = summarise_label_maps(reference, prediction, (1.0, 1.0, 1.0), requests)
    lesions = dict(found.labels[2].lesions)
    assert (lesions[0.3].tp, lesions[0.3].fp, lesions[0.3].fn) == (1, 1, 1)
    assert (lesions[0.8].tp, lesions[0.8].fp, lesions[0.8].fn) == (0, 2, 2)  # IoU 3/4 is not above 0.8
    hungarian = dict(found.labels[2].hungarian)[0.3]
    assert (hungarian.tp, hungarian.fp, hungarian.fn) == (1, 1, 1)
    panoptic = dict(found.labels[2].panoptic)[0.5]  # one match of IoU 3/4: SQ 3/4, RQ 1 / (1 + 1/2 + 1/2)
    assert (panoptic.sq, panoptic.rq, panoptic.pq) == pytest.approx((0.75, 0.5, 0.375), abs=1e-12)
    assert math.isnan(found.labels[2].hd95)  # not requested: not computed
    assert found.labels[1].lesions == () and found.labels[2].nsd == ()


def test_edge_cases():
    empty = np.zeros((4, 5, 6), np.uint8)
    requests = {
        1: surfaces(1, (1.0,)),
        2: LabelRequest(2, lesions=(0.3,), panoptic=(0.5,), volumes=((True, True, True),)),
    }
    both_empty = summarise_label_maps(empty, empty, (2.0, 1.0, 1.0), requests)
    # both maps empty everywhere: the requested values of two empty surfaces; no lesion, no instance
    assert both_empty.empty
    assert (both_empty.labels[1].hd95, both_empty.labels[1].hausdorff, both_empty.labels[1].masd) == (0.0, 0.0, 0.0)
    assert both_empty.labels[1].nsd == ((1.0, 1.0),)
    counts = dict(both_empty.labels[2].lesions)[0.3]
    assert (counts.tp, counts.fp, counts.fn) == (0, 0, 0) and math.isnan(both_empty.labels[2].hd95)
    panoptic = dict(both_empty.labels[2].panoptic)[0.5]
    assert math.isnan(panoptic.pq) and (panoptic.tp, panoptic.fp, panoptic.fn) == (0, 0, 0)
    assert dict(both_empty.labels[2].volumes)[(True, True, True)] == 0.0  # both empty: 0 in every form
    reference = empty.copy()
    reference[1, 1, 1] = 1
    one_empty = summarise_label_maps(reference, empty, (2.0, 1.0, 1.0), {"a": surfaces(1, (1.0,))})
    # a mask against an empty one: the grid diagonal sqrt(8² + 5² + 6²) mm, NSD 0
    assert one_empty.labels["a"].hd95 == pytest.approx(math.sqrt(8**2 + 5**2 + 6**2), abs=1e-12)
    assert one_empty.labels["a"].nsd == ((1.0, 0.0),) and not one_empty.empty
    with pytest.raises(ValueError, match="shapes differ"):
        summarise_label_maps(reference, empty[:, :, :5], (1.0, 1.0, 1.0), {1: LabelRequest(1)})


@pytest.mark.parametrize("index", range(5))
def test_one_labelling_gives_every_threshold_and_method_as_separate_calls(index):
    """The lesion numbers of one pass equal the catalogue functions called one by one (each checked
    against panoptica in test_catalogue_segmentation.py); the greedy trap makes the methods differ."""
    reference, prediction = lesion_case(index) if index < 4 else greedy_trap_case()
    if reference.ndim == 2:
        reference, prediction = reference[None], prediction[None]
    thresholds = (0.1, 0.2, 0.3, 0.5)
    request = LabelRequest(1, lesions=thresholds, hungarian=thresholds, panoptic=(0.3, 0.5))
    found = summarise_label_maps(reference.astype(np.uint8), prediction.astype(np.uint8), (1.0, 1.0, 1.0), {1: request})
    numbers = found.labels[1]
    assert dict(numbers.lesions) == {t: match_lesions(reference, prediction, t) for t in thresholds}
    assert dict(numbers.hungarian) == {t: match_lesions(reference, prediction, t, "hungarian") for t in thresholds}
    assert dict(numbers.panoptic) == {t: panoptic_quality(reference, prediction, t) for t in (0.3, 0.5)}


@pytest.mark.parametrize(
    ("spacing", "message"),
    [((1.0, 1.0), "spacing must be 3 positive numbers"), ((1.0, 0.0, 1.0), "spacing must be 3 positive numbers"),
     ((1.0, np.nan, 1.0), "spacing contains NaN")],
)  # fmt: skip
def test_bad_spacing_is_a_one_line_error(spacing, message):
    """As the catalogue's surface metrics: before, a broadcast error, a cKDTree error or a silent value."""
    reference = np.zeros((4, 5, 6), np.uint8)
    reference[1:3, 1:3, 1:3] = 1
    with pytest.raises(ValueError, match=message):
        summarise_label_maps(reference, reference, spacing, {1: LabelRequest(1, hd95=True)})
