"""Object detection metrics on axis-aligned boxes ``[x1, y1, x2, y2]`` (top left, bottom right).

Definitions of the DigestPath 2019 signet ring cell task (seed 002; ../shared/spec/challenges.md),
written for any detection challenge:

- IoU on continuous coordinates (area = (x2 - x1) * (y2 - y1), no +1 pixel);
- one-to-one matching per image at IoU > threshold (strict): predictions in descending score order
  each take the unmatched reference box of highest IoU (``greedy``), or a maximum-IoU assignment
  over the pairs above the threshold (``hungarian``, scipy's ``linear_sum_assignment``);
- instance recall (matched reference boxes / all reference boxes), precision (true positives / all
  predictions on positive images), the seed's "recall when precision is more than 20%", the mean
  number of predictions per negative image and its score ``max(100 - FPs, 0)``;
- FROC: for k in 1, 2, 4, 8, 16, 32 take the lowest score threshold (the most detections kept)
  at which the mean false-positive count per negative image is still <= k, measure the instance
  recall on the positive images there, and average. Greedy matching in score order makes the
  matches above any threshold a prefix of the full matching, so one sort of all scores gives every
  operating point. Without negative images the FP-based values are undefined: NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

FROC_FP_RATES = (1, 2, 4, 8, 16, 32)
MATCHING_METHODS = ("greedy", "hungarian")


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix (len(a), len(b)) of boxes given as rows ``[x1, y1, x2, y2]``."""
    a = np.asarray(a, dtype=float).reshape(-1, 4)
    b = np.asarray(b, dtype=float).reshape(-1, 4)
    width = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    height = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    intersection = width * height
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - intersection
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, intersection / union, 0.0)


def match_image(
    reference: np.ndarray, boxes: np.ndarray, scores: np.ndarray, threshold: float = 0.3, method: str = "greedy"
) -> np.ndarray:
    """For each prediction, the index of the reference box it matches, or -1 (one-to-one)."""
    n_predictions = len(scores)
    matched = np.full(n_predictions, -1, dtype=np.int64)
    if n_predictions == 0 or len(reference) == 0:
        return matched
    iou = box_iou(boxes, reference)
    if method == "hungarian":
        valid = iou > threshold
        rows, columns = linear_sum_assignment(np.where(valid, -iou, 0.0))
        keep = valid[rows, columns]
        matched[rows[keep]] = columns[keep]
        return matched
    if method != "greedy":
        raise ValueError(f"unknown matching method {method!r}; expected one of {MATCHING_METHODS}")
    taken = np.zeros(len(reference), dtype=bool)
    for prediction in np.argsort(-np.asarray(scores, dtype=float), kind="stable"):
        candidates = np.where(taken, -1.0, iou[prediction])
        best = int(np.argmax(candidates))
        if candidates[best] > threshold:
            matched[prediction] = best
            taken[best] = True
    return matched


@dataclass(frozen=True)
class ImageDetections:
    """One image: its reference boxes (empty for a negative image) and the scored predictions."""

    reference: np.ndarray  # (n, 4)
    boxes: np.ndarray  # (m, 4)
    scores: np.ndarray  # (m,)


@dataclass(frozen=True)
class DetectionSummary:
    instance_recall: float
    precision: float
    recall_valid: float
    normal_fp: float
    fp_score: float
    froc: float
    froc_recalls: dict[int, float]
    true_positives: int
    reference_boxes: int
    positive_predictions: int
    negative_predictions: int


def froc_curve(
    is_true_positive: np.ndarray, on_negative: np.ndarray, scores: np.ndarray, n_reference: int, n_negative: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Operating points at every distinct score: (thresholds descending, mean FPs per negative
    image, instance recall) for the predictions with score >= threshold. One sort of all scores."""
    if scores.size == 0:
        return np.empty(0), np.empty(0), np.empty(0)
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    ends = np.r_[np.flatnonzero(np.diff(sorted_scores)), sorted_scores.size - 1]
    tp = np.cumsum(is_true_positive[order])[ends]
    fp_negative = np.cumsum(on_negative[order])[ends]
    with np.errstate(divide="ignore", invalid="ignore"):
        fp_rate = fp_negative / n_negative if n_negative else np.full(ends.size, np.nan)
        recall = tp / n_reference if n_reference else np.full(ends.size, np.nan)
    return sorted_scores[ends], fp_rate, recall


def froc_recalls(
    fp_rate: np.ndarray, recall: np.ndarray, rates: Sequence[float] = FROC_FP_RATES
) -> dict[float, float]:
    """Recall at the last operating point (lowest threshold) whose mean FP per negative image is
    <= each rate; ``fp_rate`` is non-decreasing and starts with the point above every score (0, 0)."""
    return {rate: float(recall[np.flatnonzero(fp_rate <= rate)[-1]]) for rate in rates}


def summarise(images: Sequence[ImageDetections], threshold: float = 0.3, method: str = "greedy") -> DetectionSummary:
    """Every DigestPath task 1 metric over a set of images (see the module docstring)."""
    positives = [image for image in images if len(image.reference)]
    negatives = [image for image in images if not len(image.reference)]
    n_reference = sum(len(image.reference) for image in positives)
    matches = [match_image(image.reference, image.boxes, image.scores, threshold, method) for image in positives]
    true_positives = sum(int(np.count_nonzero(m >= 0)) for m in matches)
    positive_predictions = sum(len(image.scores) for image in positives)
    negative_predictions = sum(len(image.scores) for image in negatives)
    instance_recall = true_positives / n_reference if n_reference else float("nan")
    precision = true_positives / positive_predictions if positive_predictions else 0.0
    normal_fp = negative_predictions / len(negatives) if negatives else float("nan")
    ordered = [*positives, *negatives]
    scores = np.concatenate([np.asarray(i.scores, dtype=float) for i in ordered] + [np.empty(0)])
    is_tp = np.concatenate([m >= 0 for m in matches] + [np.zeros(len(i.scores), bool) for i in negatives] + [[]])
    on_negative = np.arange(scores.size) >= positive_predictions
    if method == "hungarian":
        recalls = _hungarian_froc(positives, negatives, threshold, n_reference)
    elif not negatives:
        recalls = {rate: float("nan") for rate in FROC_FP_RATES}
    else:
        _, fp_rate, recall = froc_curve(is_tp.astype(bool), on_negative, scores, n_reference, len(negatives))
        recalls = froc_recalls(np.r_[0.0, fp_rate], np.r_[0.0, recall])
    return DetectionSummary(
        instance_recall=instance_recall,
        precision=precision,
        recall_valid=instance_recall if precision > 0.2 else 0.0,
        normal_fp=normal_fp,
        fp_score=max(100.0 - normal_fp, 0.0) if negatives else float("nan"),
        froc=float(np.mean(list(recalls.values()))),
        froc_recalls=recalls,
        true_positives=true_positives,
        reference_boxes=n_reference,
        positive_predictions=positive_predictions,
        negative_predictions=negative_predictions,
    )


def _hungarian_froc(
    positives: Sequence[ImageDetections], negatives: Sequence[ImageDetections], threshold: float, n_reference: int
) -> dict[float, float]:
    """FROC with the assignment re-solved at each operating point (no prefix property)."""
    if not negatives:
        return {rate: float("nan") for rate in FROC_FP_RATES}
    negative_scores = np.concatenate([np.asarray(i.scores, float) for i in negatives] + [np.empty(0)])
    all_scores = np.unique(np.concatenate([np.asarray(i.scores, float) for i in (*positives, *negatives)] + [[]]))
    result = {}
    for rate in FROC_FP_RATES:
        fp = np.array([np.count_nonzero(negative_scores >= t) for t in all_scores]) / len(negatives)
        allowed = all_scores[fp <= rate]
        if allowed.size == 0:
            result[rate] = 0.0
            continue
        cut = allowed.min()
        tp = sum(
            int(np.count_nonzero(match_image(i.reference, i.boxes[i.scores >= cut], i.scores[i.scores >= cut],
                                             threshold, "hungarian") >= 0))
            for i in positives
        )  # fmt: skip
        result[rate] = tp / n_reference if n_reference else float("nan")
    return result
