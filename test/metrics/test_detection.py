"""Detection metrics on hand-computed cases (DigestPath 2019 task 1 definitions)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics.detection import ImageDetections, box_iou, froc_curve, match_image, summarise

EMPTY = np.empty((0, 4))


def image(reference, predictions):
    predictions = np.asarray(predictions, dtype=float).reshape(-1, 5)
    return ImageDetections(np.asarray(reference, dtype=float).reshape(-1, 4), predictions[:, :4], predictions[:, 4])


# Issue 4's golden case: two positive and two negative images.
P1 = image(
    [[10, 10, 30, 30], [50, 52, 70, 72], [300, 300, 320, 320]],
    [[10, 10, 30, 30, 0.95], [12, 12, 31, 31, 0.90], [50, 50, 70, 70, 0.80], [100, 100, 120, 120, 0.40],
     [200, 200, 220, 220, 0.30]],
)  # fmt: skip
P2 = image([[6, 6, 26, 26], [61, 60, 81, 80]], [[5, 5, 25, 25, 0.85], [60, 60, 80, 80, 0.20]])
N1 = image(EMPTY, [[0, 0, 10, 10, 0.9], [20, 20, 30, 30, 0.5], [40, 40, 50, 50, 0.25]])
N2 = image(EMPTY, [[0, 0, 10, 10, 0.6]])


def test_golden_case_by_hand():
    # IoUs: (10,10,30,30) vs A = 1 -> TP. (12,12,31,31) vs A = 18*18 / (400 + 361 - 324) = 0.741, but A is
    # taken -> FP (a duplicate). (50,50,70,70) vs B [50,52,70,72] = 20*18 / (800 - 360) = 0.818 -> TP.
    # (100..) and (200..) overlap nothing -> FP; C [300..] is missed. P2: (5,5,25,25) vs D = 19*19 /
    # (800 - 361) = 0.822 -> TP; (60,60,80,80) vs E [61,60,81,80] = 19*20 / (800 - 380) = 0.905 -> TP.
    # Recall = 4 matched / 5 boxes = 0.8. Precision = 4 TP / 7 predictions on positive images = 0.571 > 0.2,
    # so recall_valid = 0.8. Negative images: 3 + 1 predictions over 2 images = 2.0 FPs; FP score 98.
    # FROC, scores by threshold (TP / negative FP): .95 TP; .9 neg (mean FP 0.5); .9 P1 FP; .85 TP; .8 TP;
    # .6 neg (1.0); .5 neg (1.5); .4, .3 P1 FPs; .25 neg (2.0); .2 TP.
    # k = 1: the lowest threshold with mean FP <= 1 is .6 (at .5 it is 1.5): TPs .95 .85 .8 -> recall 0.6.
    # k = 2, 4, ..., 32: every prediction kept (2.0 FPs): recall 0.8. FROC = (0.6 + 5 * 0.8) / 6 = 0.766667.
    summary = summarise([P1, N1, P2, N2])
    assert summary.instance_recall == pytest.approx(0.8)
    assert summary.precision == pytest.approx(4 / 7)
    assert summary.recall_valid == pytest.approx(0.8)
    assert summary.normal_fp == pytest.approx(2.0)
    assert summary.fp_score == pytest.approx(98.0)
    assert summary.froc_recalls == pytest.approx({1: 0.6, 2: 0.8, 4: 0.8, 8: 0.8, 16: 0.8, 32: 0.8})
    assert summary.froc == pytest.approx(4.6 / 6)
    assert summarise([P1, N1, P2, N2], method="hungarian").froc == pytest.approx(4.6 / 6)


def test_box_iou_by_hand():
    assert box_iou([[0, 0, 10, 10]], [[5, 0, 15, 10]])[0, 0] == pytest.approx(50 / 150)
    assert box_iou([[0, 0, 10, 10]], [[10, 0, 20, 10]])[0, 0] == 0.0


def test_iou_exactly_threshold_is_no_match():
    # IoU = 30 / (100 + 100 - 30)... choose boxes with IoU exactly 0.3: 10x10 vs a shifted 10x10 box with
    # overlap a: a / (200 - a) = 0.3 -> a = 60 / 1.3, not a round number; use 10x10 and 6x5 inside-corner:
    # reference (0,0,10,10) area 100, prediction (0,0,6,5) area 30 inside it: IoU = 30 / 100 = 0.3.
    assert box_iou([[0, 0, 10, 10]], [[0, 0, 6, 5]])[0, 0] == pytest.approx(0.3)
    assert match_image(np.array([[0, 0, 10, 10]]), np.array([[0, 0, 6, 5]]), np.array([0.9]))[0] == -1
    assert match_image(np.array([[0, 0, 10, 10]]), np.array([[0, 0, 6, 5.1]]), np.array([0.9]))[0] == 0


def test_two_predictions_on_one_box():
    matched = match_image(np.array([[0, 0, 10, 10]]), np.array([[0, 0, 10, 10], [0, 0, 10, 9]]), np.array([0.5, 0.9]))
    assert list(matched) == [-1, 0]  # the higher score takes the box, the other is a false positive


def test_reference_box_matched_by_a_lower_scored_prediction():
    # The top prediction overlaps A best (IoU .81) but also B (.5); it takes A. The lower one then takes B.
    reference = np.array([[0, 0, 10, 10], [5, 0, 15, 10]])
    boxes = np.array([[1, 0, 11, 10], [6, 0, 16, 10]])
    assert list(match_image(reference, boxes, np.array([0.9, 0.2]))) == [0, 1]


def test_greedy_and_hungarian_differ_where_greedy_is_suboptimal():
    # A = (0,0,10,10), B = (4,0,14,10). The top prediction (3,0,13,10) overlaps A with IoU 70/130 = .54 and
    # B with 90/110 = .82: greedy gives it B. The second (6,0,16,10) overlaps A only 40/160 = .25 and B
    # 80/120 = .67: B is taken, so greedy finds 1 match; the maximum-IoU assignment finds 2.
    reference = np.array([[0, 0, 10, 10], [4, 0, 14, 10]])
    boxes = np.array([[3, 0, 13, 10], [6, 0, 16, 10]])
    scores = np.array([0.9, 0.8])
    assert match_image(reference, boxes, scores).tolist() == [1, -1]
    assert match_image(reference, boxes, scores, method="hungarian").tolist() == [0, 1]


def test_no_predictions_at_all():
    summary = summarise([image([[0, 0, 10, 10]], []), image(EMPTY, [])])
    assert summary.instance_recall == 0.0 and summary.precision == 0.0 and summary.recall_valid == 0.0
    assert summary.normal_fp == 0.0 and summary.fp_score == 100.0 and summary.froc == 0.0


def test_no_negative_images_leaves_fp_values_undefined():
    summary = summarise([P1, P2])
    assert summary.instance_recall == pytest.approx(0.8)
    assert np.isnan(summary.normal_fp) and np.isnan(summary.fp_score) and np.isnan(summary.froc)


def test_fp_score_floors_at_zero():
    many = image(EMPTY, [[0, 0, 1, 1, 0.5]] * 150)
    assert summarise([P1, many]).fp_score == 0.0


def test_froc_curve_is_one_sort_of_all_scores():
    thresholds, fp_rate, recall = froc_curve(
        np.array([True, False, True, False]), np.array([False, True, False, True]), np.array([0.9, 0.8, 0.8, 0.1]), 2, 1
    )
    assert thresholds.tolist() == [0.9, 0.8, 0.1]
    assert fp_rate.tolist() == [0.0, 1.0, 2.0] and recall.tolist() == [0.5, 1.0, 1.0]
