"""Catalogue segmentation metrics against independent references, and every edge case by hand.

References: scikit-learn (``f1_score`` = Dice, ``jaccard_score`` = IoU on flattened masks), DeepMind
surface-distance (HD, HD95, MASD, NSD), panoptica 2.1.7 (lesion F1 and panoptic quality) and
MetricsReloaded (IoU, Dice, absolute volume difference ratio).

panoptica requires connected-components-3d < 4 while this project pins 4.1.1 at run time, so it is
not installed in the project's venv: the numbers below were produced by panoptica 2.1.7 in a
separate venv on ``catalogue_fixtures.lesion_case`` / ``greedy_trap_case`` with
``Panoptica_Evaluator(expected_input=InputType.SEMANTIC, instance_approximator=
ConnectedComponentsInstanceApproximator(cca_backend=CCABackend.cc3d), instance_matcher=...,
instance_metrics=[Metric.IOU])``: ``NaiveThresholdMatching(Metric.IOU, t, strict_threshold=True)``
(greedy) or ``MaxBipartiteMatching(Metric.IOU, t, strict_threshold=True)`` (Hungarian); ``rq`` is
the F1, ``pq`` and ``sq`` PQ and SQ.

MetricsReloaded (github Project-MONAI/MetricsReloaded, commit cb38dfc, not on PyPI) was run from
its repository on the same fixtures: ``MetricsReloaded/metrics/pairwise_measures.py``,
``BinaryPairwiseMeasures(pred, ref).dsc()``, ``.intersection_over_union()``,
``.absolute_volume_difference_ratio()``. ``catalogue_reference_numbers.py`` reprints all of them.
MetricsReloaded's own HD / MASD / NSD are not used: it measures between border voxels, not
DeepMind's surfels, so its distances differ by definition.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import surface_distance as deepmind
from metrics.catalogue_fixtures import greedy_trap_case, lesion_case, surface_case
from scipy import ndimage
from sklearn.metrics import f1_score, jaccard_score

from evaluation.metrics.lesions import f1_score as lesion_counts_f1
from evaluation.metrics.lesions import lesion_f1, match_lesions, panoptic_quality
from evaluation.metrics.overlap import aggregated_dice, dice_per_label, iou, iou_per_label, volume_difference
from evaluation.metrics.surface import (
    hausdorff_distance,
    image_diagonal,
    mean_average_surface_distance,
    normalised_surface_dice,
)

# panoptica 2.1.7 on lesion_case(i): (pq, sq, rq, tp, fp, fn) at IoU > 0.5
PANOPTICA_PQ = [
    (0.10666666666666666, 0.64, 0.16666666666666666, 1, 5, 5),
    (0.12121212121212122, 0.6666666666666666, 0.18181818181818182, 1, 4, 5),
    (0.21910919540229884, 0.6573275862068966, 0.3333333333333333, 2, 4, 4),
    (0.125, 0.75, 0.16666666666666666, 1, 5, 5),
]
# panoptica 2.1.7 on lesion_case(i): F1 (rq) at IoU > 0.1 and > 0.3, greedy and Hungarian alike
PANOPTICA_F1 = [0.6666666666666666, 0.7272727272727273, 0.6666666666666666, 0.6666666666666666]
# MetricsReloaded on lesion_case(i): (dsc, intersection_over_union, absolute_volume_difference_ratio)
METRICS_RELOADED_OVERLAP = [
    (0.6376811594202898, 0.46808510638297873, 0.3492822966507177),
    (0.6564673157162726, 0.4886128364389234, 0.3161592505854801),
    (0.6243386243386243, 0.45384615384615384, 0.26605504587155965),
    (0.5777233782129743, 0.40619621342512907, 0.16404494382022472),
]


def label_maps() -> tuple[np.ndarray, np.ndarray]:
    """Two label maps with labels 1 and 2 from two fixtures, label 3 only in the prediction."""
    ref_a, pred_a = lesion_case(0)
    ref_b, pred_b, _ = surface_case(1)
    reference = np.where(ref_a, 1, np.where(ref_b, 2, 0))
    prediction = np.where(pred_a, 1, np.where(pred_b, 2, 0))
    prediction[0, 0, :3] = 3
    return reference, prediction


def test_dice_and_iou_per_label_equal_sklearn():
    reference, prediction = label_maps()
    labels = [1, 2, 3, 4]
    expected_dice = [f1_score(reference.ravel() == k, prediction.ravel() == k) for k in labels[:3]]
    expected_iou = [jaccard_score(reference.ravel() == k, prediction.ravel() == k) for k in labels[:3]]
    # label 4 is absent from both: the stated empty value (scikit-learn's zero_division would say 0)
    np.testing.assert_allclose(dice_per_label(reference, prediction, labels), [*expected_dice, 1.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(iou_per_label(reference, prediction, labels), [*expected_iou, 1.0], rtol=0, atol=1e-12)
    assert iou_per_label(reference, prediction, [4], empty=0.0).tolist() == [0.0]
    assert dice_per_label(reference, prediction, [3]).tolist() == [0.0]  # only in the prediction


@pytest.mark.parametrize("index", range(4))
def test_overlap_and_volume_equal_metrics_reloaded(index):
    reference, prediction = lesion_case(index)
    dsc, jaccard, avdr = METRICS_RELOADED_OVERLAP[index]
    assert dice_per_label(reference.astype(int), prediction.astype(int), [1])[0] == pytest.approx(dsc, abs=1e-12)
    assert iou(reference, prediction) == pytest.approx(jaccard, abs=1e-12)
    assert volume_difference(reference, prediction, relative=True) == pytest.approx(avdr, abs=1e-12)


def test_volume_difference_by_hand():
    reference = np.zeros((2, 3, 4), dtype=bool)
    prediction = reference.copy()
    reference[0, :2, :2] = True  # 4 voxels
    prediction[1, :, :2] = True  # 6 voxels
    assert volume_difference(reference, prediction) == 2.0
    assert volume_difference(reference, prediction, voxel_volume=0.5) == 1.0
    assert volume_difference(prediction, reference, absolute=False, voxel_volume=2.0) == -4.0
    assert volume_difference(reference, prediction, relative=True) == 0.5
    assert volume_difference(prediction, reference, relative=True, absolute=False) == pytest.approx(-1 / 3)
    empty = np.zeros_like(reference)
    assert volume_difference(empty, empty, relative=True) == 0.0
    assert volume_difference(empty, prediction, relative=True) == float("inf")
    assert volume_difference(empty, prediction, relative=True, empty_reference=1.0) == 1.0
    assert volume_difference(reference, empty, relative=True) == 1.0


@pytest.mark.parametrize("index", range(4))
def test_surface_metrics_equal_deepmind(index):
    reference, prediction, spacing = surface_case(index)
    found = deepmind.compute_surface_distances(reference, prediction, spacing)
    ref_to_pred, pred_to_ref = deepmind.compute_average_surface_distance(found)
    assert hausdorff_distance(reference, prediction, spacing) == pytest.approx(
        deepmind.compute_robust_hausdorff(found, 100), abs=1e-12
    )
    assert hausdorff_distance(reference, prediction, spacing, percent=95) == pytest.approx(
        deepmind.compute_robust_hausdorff(found, 95), abs=1e-12
    )
    assert mean_average_surface_distance(reference, prediction, spacing) == pytest.approx(
        (ref_to_pred + pred_to_ref) / 2, abs=1e-12
    )
    for tolerance in (0.0, 1.0, 2.5):
        assert normalised_surface_dice(reference, prediction, spacing, tolerance) == pytest.approx(
            deepmind.compute_surface_dice_at_tolerance(found, tolerance), abs=1e-12
        )


def test_surface_edge_cases_by_hand():
    empty = np.zeros((4, 5, 6), dtype=bool)
    some = empty.copy()
    some[1:3, 2:4, 2:4] = True
    spacing = (2.0, 1.0, 0.5)
    diagonal = float(np.sqrt(8.0**2 + 5.0**2 + 3.0**2))
    assert image_diagonal(empty.shape, spacing) == pytest.approx(diagonal, abs=1e-12)
    for metric in (hausdorff_distance, mean_average_surface_distance):
        assert metric(empty, empty, spacing) == 0.0
        assert metric(empty, empty, spacing, both_empty=7.0) == 7.0
        assert metric(some, empty, spacing) == pytest.approx(diagonal, abs=1e-12)
        assert metric(empty, some, spacing, one_empty=50.0) == 50.0
        assert metric(some, some, spacing) == 0.0
    assert normalised_surface_dice(empty, empty, spacing, 1.0) == 1.0
    assert normalised_surface_dice(empty, empty, spacing, 1.0, both_empty=0.0) == 0.0
    assert normalised_surface_dice(some, empty, spacing, 1.0) == 0.0
    assert normalised_surface_dice(some, some, spacing, 0.0) == 1.0


def test_surface_validation():
    mask = np.zeros((3, 3, 3), dtype=bool)
    with pytest.raises(ValueError, match="shapes differ"):
        hausdorff_distance(mask, mask[:2], (1, 1, 1))
    with pytest.raises(ValueError, match="3D"):
        hausdorff_distance(mask[0], mask[0], (1, 1, 1))
    with pytest.raises(ValueError, match="spacing"):
        hausdorff_distance(mask, mask, (1, 0, 1))
    with pytest.raises(ValueError, match="NaN"):
        mean_average_surface_distance(mask, mask, (1, np.nan, 1))
    with pytest.raises(ValueError, match="percent"):
        hausdorff_distance(mask, mask, (1, 1, 1), percent=0)
    with pytest.raises(ValueError, match="tolerance"):
        normalised_surface_dice(mask, mask, (1, 1, 1), -1.0)


@pytest.mark.parametrize("index", range(4))
def test_lesion_f1_and_panoptic_quality_equal_panoptica(index):
    reference, prediction = lesion_case(index)
    pq, sq, rq, tp, fp, fn = PANOPTICA_PQ[index]
    found = panoptic_quality(reference, prediction)
    assert (found.tp, found.fp, found.fn) == (tp, fp, fn)
    assert [found.pq, found.sq, found.rq] == pytest.approx([pq, sq, rq], abs=1e-12)
    for threshold in (0.1, 0.3):
        for matching in ("greedy", "hungarian"):
            assert lesion_f1(reference, prediction, threshold, matching) == pytest.approx(
                PANOPTICA_F1[index], abs=1e-12
            )


def test_hungarian_beats_greedy_as_panoptica_does():
    # panoptica 2.1.7 at IoU > 0.2: NaiveThresholdMatching rq 0.5 (tp 1, fp 1, fn 1),
    # MaxBipartiteMatching rq 1.0 (tp 2, fp 0, fn 0); see greedy_trap_case for the hand computation.
    reference, prediction = greedy_trap_case()
    assert lesion_f1(reference, prediction, 0.2) == 0.5
    assert tuple(match_lesions(reference, prediction, 0.2).__dict__.values()) == (1, 1, 1)
    assert lesion_f1(reference, prediction, 0.2, "hungarian") == 1.0
    with pytest.raises(ValueError, match="unknown matching"):
        lesion_f1(reference, prediction, 0.2, "best")


def test_lesion_and_panoptic_edge_cases_by_hand():
    empty = np.zeros((2, 4, 4), dtype=bool)
    some = empty.copy()
    some[0, :2, :2] = True
    assert lesion_f1(empty, empty) == 1.0 and lesion_f1(empty, empty, empty=0.0) == 0.0
    assert lesion_f1(some, empty) == 0.0 and lesion_f1(empty, some) == 0.0
    both_empty = panoptic_quality(empty, empty, empty=0.5)
    assert (both_empty.pq, both_empty.sq, both_empty.rq) == (0.5, 0.5, 0.5)
    missed = panoptic_quality(some, empty)
    assert (missed.pq, missed.sq, missed.rq, missed.fn) == (0.0, 0.0, 0.0, 1)
    perfect = panoptic_quality(some, some)
    assert (perfect.pq, perfect.sq, perfect.rq) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="only 0 and 1"):
        lesion_f1(some * 2, some)
    with pytest.raises(ValueError, match="shapes differ"):
        panoptic_quality(some, some[:1])


def test_aggregate_validation():
    assert aggregated_dice(np.array([1.0, 2.0]), np.array([4.0, 4.0])) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="inconsistent"):
        aggregated_dice(np.array([1.0, 2.0]), np.array([4.0]))
    with pytest.raises(ValueError, match="half its total"):
        aggregated_dice(np.array([3.0]), np.array([4.0]))
    with pytest.raises(ValueError, match="NaN"):
        aggregated_dice(np.array([np.nan]), np.array([4.0]))
    with pytest.raises(ValueError, match="columns"):
        aggregated_dice(np.array([1.0]), np.array([4.0]), np.ones((2, 3)))
    assert lesion_counts_f1(np.array([0, 2]), np.array([0, 1]), np.array([0, 1]), empty=0.5).tolist() == [0.5, 2 / 3]
    with pytest.raises(ValueError, match="non-negative"):
        lesion_counts_f1(1, -1, 0)


def brute_force_matching(reference: np.ndarray, prediction: np.ndarray, threshold: float) -> tuple[int, float]:
    """(matches, total IoU) of the best one-to-one assignment over pairs with IoU > threshold, by
    enumerating every subset of candidate pairs; components by scipy.ndimage.label (8-/26-connected)."""
    structure = np.ones((3,) * reference.ndim)
    ref_labels, n_ref = ndimage.label(reference, structure=structure)
    pred_labels, n_pred = ndimage.label(prediction, structure=structure)
    candidates = []
    for r in range(1, n_ref + 1):
        for p in range(1, n_pred + 1):
            a, b = ref_labels == r, pred_labels == p
            value = np.count_nonzero(a & b) / np.count_nonzero(a | b)
            if value > threshold:
                candidates.append((r, p, value))
    best = (0, 0.0)
    for chosen in itertools.product((False, True), repeat=len(candidates)):
        pairs = [c for c, keep in zip(candidates, chosen, strict=True) if keep]
        if len({r for r, _, _ in pairs}) == len(pairs) == len({p for _, p, _ in pairs}):
            total = sum(v for _, _, v in pairs)
            if total > best[1] + 1e-12:
                best = (len(pairs), total)
    return best


@pytest.mark.parametrize("seed", range(8))
def test_hungarian_equals_brute_force_maximum_iou(seed):
    rng = np.random.default_rng(seed)
    reference = ndimage.binary_dilation(rng.random((14, 14)) < 0.03, iterations=1)
    prediction = ndimage.binary_dilation(rng.random((14, 14)) < 0.03, iterations=1)
    prediction |= np.roll(reference, int(rng.integers(-1, 2)), axis=1) & (rng.random((14, 14)) < 0.8)
    for threshold in (0.0, 0.1, 0.25):
        matches, _ = brute_force_matching(reference, prediction, threshold)
        assert match_lesions(reference, prediction, threshold, "hungarian").tp == matches
        assert match_lesions(reference, prediction, threshold, "greedy").tp <= matches


def test_brute_force_on_the_greedy_trap():
    reference, prediction = greedy_trap_case()
    assert brute_force_matching(reference, prediction, 0.2)[0] == 2
    assert match_lesions(reference, prediction, 0.2, "hungarian").tp == 2


@pytest.mark.parametrize("seed", range(6))
def test_masd_and_hausdorff_equal_deepmind_on_random_blobs(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(8, 20, 3))
    spacing = tuple(float(s) for s in rng.uniform(0.5, 3.0, 3))
    reference = ndimage.binary_dilation(rng.random(shape) < 0.02, iterations=2)
    prediction = ndimage.binary_dilation(rng.random(shape) < 0.02, iterations=2)
    if not reference.any() or not prediction.any():
        pytest.skip("an empty draw")
    found = deepmind.compute_surface_distances(reference, prediction, spacing)
    assert mean_average_surface_distance(reference, prediction, spacing) == pytest.approx(
        sum(deepmind.compute_average_surface_distance(found)) / 2, abs=1e-12
    )
    assert hausdorff_distance(reference, prediction, spacing, percent=90) == pytest.approx(
        deepmind.compute_robust_hausdorff(found, 90), abs=1e-12
    )
