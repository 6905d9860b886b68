"""Catalogue detection metrics: distance matching, AP, recall at precision and FROC, by hand and
against a plain re-implementation of the PASCAL VOC devkit's AP loop (``VOCevaldet.m`` + ``VOCap.m``)."""

from __future__ import annotations

import numpy as np
import pytest
from metrics.test_detection import EMPTY, N2, P1, P2, image

from evaluation.metrics.detection import (
    ImageDetections,
    box_centres,
    detection_average_precision,
    froc,
    froc_score,
    match_by_distance,
    match_image,
    recall_at_precision,
    summarise,
)

# test_detection.py's golden images (issue 4), with distinct scores: N1's top box at 0.88, not 0.9.
N1 = image(EMPTY, [[0, 0, 10, 10, 0.88], [20, 20, 30, 30, 0.5], [40, 40, 50, 50, 0.25]])
IMAGES = [P1, N1, P2, N2]


def voc_detections(images: list[ImageDetections], threshold: float) -> tuple[list[float], list[int]]:
    """VOC2012 devkit ``VOCevaldet.m``: detections sorted by score, each marked TP (1.0) if its
    best-IoU reference box is unmatched and IoU > threshold (greedy); with each one's image index."""
    detections = sorted(((s, i, k) for i, im in enumerate(images) for k, s in enumerate(im.scores)), reverse=True)
    used = [np.zeros(len(im.reference), bool) for im in images]
    tp = []
    for _, i, k in detections:
        im = images[i]
        best, best_iou = -1, -1.0
        for j, ref in enumerate(im.reference):
            ix = max(0.0, min(ref[2], im.boxes[k][2]) - max(ref[0], im.boxes[k][0]))
            iy = max(0.0, min(ref[3], im.boxes[k][3]) - max(ref[1], im.boxes[k][1]))
            inter = ix * iy
            union = (
                (ref[2] - ref[0]) * (ref[3] - ref[1])
                + (im.boxes[k][2] - im.boxes[k][0]) * (im.boxes[k][3] - im.boxes[k][1])
                - inter
            )
            if not used[i][j] and inter / union > best_iou:
                best, best_iou = j, inter / union
        hit = best >= 0 and best_iou > threshold
        if hit:
            used[i][best] = True
        tp.append(float(hit))
    return tp, [i for _, i, _ in detections]


def voc_ap(images: list[ImageDetections], threshold: float) -> float:
    """:func:`voc_detections`, cumulative precision/recall, then ``VOCap.m``'s envelope."""
    tp = voc_detections(images, threshold)[0]
    fp = [1.0 - hit for hit in tp]
    n_ref = sum(len(im.reference) for im in images)
    ctp, cfp = np.cumsum(tp), np.cumsum(fp)
    rec, prec = ctp / n_ref, ctp / (ctp + cfp)
    mrec, mpre = [0.0, *rec, 1.0], [0.0, *prec, 0.0]
    for m in range(len(mpre) - 2, -1, -1):
        mpre[m] = max(mpre[m], mpre[m + 1])
    return float(sum((mrec[m] - mrec[m - 1]) * mpre[m] for m in range(1, len(mrec)) if mrec[m] != mrec[m - 1]))


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8, 0.85])
def test_ap_equals_voc_devkit_loop(threshold):
    assert detection_average_precision(IMAGES, threshold=threshold) == pytest.approx(
        voc_ap(IMAGES, threshold), abs=1e-12
    )


def test_ap_by_hand():
    # IoU > 0.3, scores descending: .95 TP, .90 FP (P1 dup), .88 FP (N1), .85 TP, .80 TP, .60 FP, .50 FP,
    # .40 FP, .30 FP, .25 FP, .20 TP; 5 reference boxes. Precision at the TPs: 1/1, 2/4, 3/5, 4/11;
    # envelope: 1, .6, .6, 4/11. AP = .2 * 1 + .2 * .6 + .2 * .6 + .2 * 4/11.
    assert detection_average_precision(IMAGES, threshold=0.3) == pytest.approx(0.2 * (1 + 1.2 + 4 / 11), abs=1e-12)
    # recall at precision: .5 -> recall .6 (precision 3/5); .7 -> .2; 1.0 -> .2; any precision -> .8
    assert recall_at_precision(IMAGES, 0.5, threshold=0.3) == pytest.approx(0.6)
    assert recall_at_precision(IMAGES, 0.7, threshold=0.3) == pytest.approx(0.2)
    assert recall_at_precision(IMAGES, 0.0, threshold=0.3) == pytest.approx(0.8)


def test_froc_negative_images_equals_digestpath_summary():
    expected = summarise(IMAGES)  # DigestPath 2019 task 1, IoU > 0.3, FPs on negative images
    found = froc(IMAGES, threshold=0.3, fp_images="negative")
    assert found == pytest.approx(expected.froc_recalls, abs=1e-12)
    assert froc_score(IMAGES, threshold=0.3, fp_images="negative") == pytest.approx(expected.froc, abs=1e-12)


def test_froc_negative_images_by_hand():
    # FPs on the negative images only (N1, N2) over their count 2 (P1's duplicate and stray boxes do not
    # count), scores descending (cumulative negative FP / 2, recall): .95 (0, .2) .90 (0, .2) .88 (.5, .2)
    # .85 (.5, .4) .80 (.5, .6) .60 (1, .6) .50 (1.5, .6) .40 (1.5, .6) .30 (1.5, .6) .25 (2, .6) .20 (2, .8)
    found = froc(IMAGES, fp_rates=(0.25, 0.5, 1, 1.5, 2), threshold=0.3, fp_images="negative")
    assert found == pytest.approx({0.25: 0.2, 0.5: 0.6, 1: 0.6, 1.5: 0.6, 2: 0.8}, abs=1e-12)
    assert froc_score(IMAGES, threshold=0.3, fp_images="negative") == pytest.approx(
        (0.6 + 5 * 0.8) / 6, abs=1e-12
    )  # the default rates 1, 2, 4, 8, 16, 32


def test_froc_all_images_by_hand():
    # FPs on every image over 4 images, scores descending (cumulative FP / 4, recall):
    # .95 (0, .2) .90 (.25, .2) .88 (.5, .2) .85 (.5, .4) .80 (.5, .6) .60 (.75, .6) .50 (1, .6)
    # .40 (1.25, .6) .30 (1.5, .6) .25 (1.75, .6) .20 (1.75, .8)
    found = froc(IMAGES, fp_rates=(0.1, 0.25, 0.5, 1, 2), threshold=0.3)
    assert found == pytest.approx({0.1: 0.2, 0.25: 0.2, 0.5: 0.6, 1: 0.6, 2: 0.8}, abs=1e-12)
    assert froc_score(IMAGES, fp_rates=(0.5, 2), threshold=0.3) == pytest.approx(0.7, abs=1e-12)


def test_distance_matching_by_hand():
    reference = np.array([[0.0, 0.0], [10.0, 0.0]])
    points = np.array([[4.0, 0.0], [7.0, 0.0], [30.0, 0.0]])
    scores = np.array([0.9, 0.8, 0.7])
    # greedy: the .9 prediction takes the nearest reference (0, distance 4); .8 takes 1 (distance 3)
    assert match_by_distance(reference, points, scores, 5.0).tolist() == [0, 1, -1]
    # a radius of exactly the distance matches (inclusive); below it, no match
    assert match_by_distance(reference, points[:1], scores[:1], 4.0).tolist() == [0]
    assert match_by_distance(reference, points[:1], scores[:1], 3.999).tolist() == [-1]
    # greedy is suboptimal: the .9 prediction at x=6 is nearer reference 1 (x=10, distance 4) than
    # reference 0 (x=1.5, 4.5) and takes it; the .8 one at x=13 then finds reference 1 taken and
    # reference 0 too far (11.5). The assignment matches both.
    points = np.array([[6.0, 0.0], [13.0, 0.0]])
    reference = np.array([[1.5, 0.0], [10.0, 0.0]])
    assert match_by_distance(reference, points, scores[:2], 5.0).tolist() == [1, -1]
    assert match_by_distance(reference, points, scores[:2], 5.0, "hungarian").tolist() == [0, 1]
    assert match_by_distance(np.empty((0, 2)), points, scores[:2], 5.0).tolist() == [-1, -1]
    assert match_by_distance(reference, np.empty((0, 2)), np.empty(0), 5.0).tolist() == []
    with pytest.raises(ValueError, match="coordinates"):
        match_by_distance(reference, np.zeros((1, 3)), scores[:1], 5.0)


def test_centre_distance_criterion():
    assert box_centres(np.array([[0, 0, 10, 20]])).tolist() == [[5.0, 10.0]]
    # a prediction shifted by (3, 4) from its reference box: centre distance 5; IoU 42/158 < 0.3
    shifted = [image([[0, 0, 10, 10]], [[3, 4, 13, 14, 0.9]])]
    assert match_image(shifted[0].reference, shifted[0].boxes, shifted[0].scores, 0.3).tolist() == [-1]
    assert detection_average_precision(shifted, criterion="centre_distance", threshold=5.0) == 1.0
    assert detection_average_precision(shifted, criterion="centre_distance", threshold=4.9) == 0.0
    points = [ImageDetections(np.array([[1.0, 1.0, 1.0]]), np.array([[1.0, 2.0, 3.0]]), np.array([0.5]))]
    assert recall_at_precision(points, 1.0, criterion="distance", threshold=np.sqrt(5)) == 1.0
    silent_points = [ImageDetections(np.array([[1.0, 1.0]]), np.empty((0, 2)), np.empty(0))]
    assert detection_average_precision(silent_points, criterion="distance", threshold=1.0) == 0.0
    silent_boxes = [image([[0, 0, 10, 10]], [])]
    assert detection_average_precision(silent_boxes, criterion="centre_distance", threshold=1.0) == 0.0


def test_edge_cases_by_hand():
    negatives = [N1, N2]
    assert detection_average_precision(negatives) == 0.0
    assert detection_average_precision(negatives, no_reference=1.0) == 1.0
    assert recall_at_precision(negatives, no_reference=0.5) == 0.5
    assert froc(negatives, fp_rates=(1, 2), no_reference=1.0) == {1: 1.0, 2: 1.0}
    silent = [image([[0, 0, 10, 10]], [])]
    assert detection_average_precision(silent) == 0.0 and recall_at_precision(silent, 0.0) == 0.0
    assert froc_score(silent, fp_rates=(1,)) == 0.0
    with pytest.raises(ValueError, match="without reference objects"):
        froc([P1, P2], fp_images="negative")
    with pytest.raises(ValueError, match="no images"):
        detection_average_precision([])
    with pytest.raises(ValueError, match="criterion"):
        detection_average_precision(IMAGES, criterion="giou")
    with pytest.raises(ValueError, match="NaN"):
        detection_average_precision([image([[0, 0, 1, 1]], [[0, 0, 1, 1, np.nan]])])
    with pytest.raises(ValueError, match="precision"):
        recall_at_precision(IMAGES, 1.5)
    points = [ImageDetections(np.array([[1.0, 1.0]]), np.array([[1.0, 1.5]]), np.array([0.5]))]
    with pytest.raises(ValueError, match="must be boxes"):
        detection_average_precision(points, criterion="centre_distance", threshold=1.0)
    with pytest.raises(ValueError, match="scores in an image"):
        detection_average_precision([ImageDetections(np.empty((0, 4)), np.zeros((2, 4)), np.array([0.5]))])


def random_images(seed: int) -> list[ImageDetections]:
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(5):
        n_ref = int(rng.integers(0, 4))
        corners = rng.integers(0, 80, (n_ref, 2))
        reference = np.hstack([corners, corners + rng.integers(8, 20, (n_ref, 2))]).astype(float)
        jitter = rng.integers(-4, 5, (n_ref, 4))
        boxes = [reference + jitter, rng.integers(0, 60, (int(rng.integers(0, 3)), 1)) + np.array([0, 0, 15, 15])]
        boxes = np.vstack(boxes).astype(float)
        images.append(ImageDetections(reference, boxes, rng.random(len(boxes))))  # distinct scores
    return images


@pytest.mark.parametrize("seed", range(6))
def test_ap_equals_voc_devkit_loop_on_random_images(seed):
    images = random_images(seed)
    if sum(len(im.reference) for im in images) == 0:
        pytest.skip("no reference box drawn")
    for threshold in (0.3, 0.5):
        assert detection_average_precision(images, threshold=threshold) == pytest.approx(
            voc_ap(images, threshold), abs=1e-12
        )


@pytest.mark.parametrize("seed", [0, 1, 3, 4, 5, 8])  # seeds that draw reference boxes and a negative image
def test_recall_at_precision_and_froc_equal_the_voc_loop_on_random_images(seed):
    """Both from the devkit loop's TP flags (distinct scores: one operating point per detection): the
    best recall among the points of precision >= p, and the best recall among the points of at most
    ``rate`` false positives per image (all images, or the negative ones only), 0 when none is."""
    images = random_images(seed)
    n_ref = sum(len(im.reference) for im in images)
    negative = [len(im.reference) == 0 for im in images]
    assert n_ref > 0 and any(negative)  # what the seeds were chosen for
    for threshold in (0.3, 0.5):
        hits, image_of = voc_detections(images, threshold)
        ctp = np.cumsum(hits)
        recall = ctp / n_ref
        precision = ctp / np.arange(1, len(hits) + 1)
        fp_all = np.cumsum([1.0 - h for h in hits]) / len(images)
        fp_negative = np.cumsum([float(negative[i]) for i in image_of]) / sum(negative)
        for target in (0.0, 0.3, 0.5, 0.8, 1.0):
            expected = recall[precision >= target].max(initial=0.0)
            assert recall_at_precision(images, target, threshold=threshold) == pytest.approx(expected, abs=1e-12)
        rates = (0.1, 0.25, 0.5, 1.0, 2.0)
        for fp_images, fp_rate in (("all", fp_all), ("negative", fp_negative)):
            expected = {rate: recall[fp_rate <= rate].max(initial=0.0) for rate in rates}
            found = froc(images, fp_rates=rates, threshold=threshold, fp_images=fp_images)
            assert found == pytest.approx(expected, abs=1e-12)
