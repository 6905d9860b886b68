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

For the catalogue, any detection challenge: matching by IoU of boxes or by the distance of points or
box centres (:func:`match_by_distance`), and over a set of images the instance recall at a precision,
FROC at chosen false-positive rates per image and all-point interpolated AP, each validated and with
its edge cases as parameters (:func:`detection_curve` and below); and detection at a decision: each
image's TP/FP/FN of the predictions kept by a score threshold and class names, and the pooled
precision, recall and F1 with a challenge's epsilon terms (:func:`decision_counts`, MIDOG 2021).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.assignment import linear_sum_assignment
from evaluation.metrics.lesions import f1_score

FROC_FP_RATES = (1, 2, 4, 8, 16, 32)
MATCHING_METHODS = ("greedy", "hungarian")
CRITERIA = ("iou", "centre_distance", "distance")
FP_IMAGES = ("all", "negative")
DISTANCE_MATCHING = (*MATCHING_METHODS, "reference")


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
    """One image: its reference boxes (empty for a negative image) and the scored predictions,
    optionally with each prediction's class ``name`` (None for an unnamed one)."""

    reference: np.ndarray  # (n, 4)
    boxes: np.ndarray  # (m, 4)
    scores: np.ndarray  # (m,)
    names: Sequence[str | None] | None = None  # (m,)


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
    thresholds, tp, fp_negative = _operating_points(scores, is_true_positive, on_negative)
    with np.errstate(divide="ignore", invalid="ignore"):
        fp_rate = fp_negative / n_negative if n_negative else np.full(thresholds.size, np.nan)
        recall = tp / n_reference if n_reference else np.full(thresholds.size, np.nan)
    return thresholds, fp_rate, recall


def _operating_points(scores: np.ndarray, *flags: np.ndarray) -> tuple[np.ndarray, ...]:
    """One stable sort of ``scores``: (the distinct scores, descending; then for each boolean array of
    ``flags`` how many of the predictions with score >= each distinct score it marks)."""
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    ends = np.r_[np.flatnonzero(np.diff(sorted_scores)), sorted_scores.size - 1].astype(int)  # each tie's last
    if sorted_scores.size == 0:
        ends = np.empty(0, dtype=int)
    return sorted_scores[ends], *(np.cumsum(flag[order])[ends] for flag in flags)


def froc_recalls(fp_rate: np.ndarray, recall: np.ndarray, rates: Sequence[float] = FROC_FP_RATES) -> dict[float, float]:
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


def box_centres(boxes: np.ndarray) -> np.ndarray:
    """(n, 2) centres ``((x1 + x2) / 2, (y1 + y2) / 2)`` of (n, 4) boxes ``[x1, y1, x2, y2]``."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    return (boxes[:, :2] + boxes[:, 2:]) / 2.0


def match_by_distance(
    reference: np.ndarray, points: np.ndarray, scores: np.ndarray, max_distance: float, method: str = "greedy"
) -> np.ndarray:
    """For each predicted point, the index of the reference point it matches, or -1 (one-to-one).

    A pair can match when its Euclidean distance is <= ``max_distance`` (inclusive, as a hit "within"
    a radius, e.g. the LUNA16 and MIDOG protocols). ``greedy``: predictions in descending score order
    each take the nearest unmatched reference point (ties: the lower index); ``reference``: reference
    points in their order each take the nearest unmatched prediction, scores unused (grand-challenge's
    ``score_detection``, github comic/evalutils ``evalutils/scorers.py``, which MIDOG 2021 scores with; ties:
    the lower index, where evalutils' BallTree order is unspecified); ``hungarian``: the assignment
    with the most matches and, among those, the least total distance
    (``scipy.optimize.linear_sum_assignment``).

    Parameters
    ----------
    reference : (n, d) reference points (e.g. :func:`box_centres` of boxes).
    points : (m, d) predicted points.
    scores : (m,) finite scores of the predictions.
    max_distance : the largest matching distance, in the points' unit.
    method : ``"greedy"``, ``"reference"`` or ``"hungarian"``.

    Returns
    -------
    (m,) int64 array of reference indices, -1 for an unmatched prediction.
    """
    scores = checks.as_finite("scores", scores, ndim=1)
    if method not in DISTANCE_MATCHING:
        raise ValueError(f"unknown matching method {method!r}; expected one of {DISTANCE_MATCHING}")
    matched = np.full(scores.size, -1, dtype=np.int64)
    if scores.size == 0 or len(reference) == 0:
        return matched
    points = checks.as_finite("points", np.asarray(points, dtype=float).reshape(scores.size, -1))
    reference = checks.as_finite("reference", np.asarray(reference, dtype=float).reshape(len(reference), -1))
    if reference.shape[1] != points.shape[1]:
        raise ValueError(f"reference points have {reference.shape[1]} coordinates, predictions {points.shape[1]}")
    distance = np.sqrt(((points[:, None, :] - reference[None, :, :]) ** 2).sum(axis=2))
    valid = distance <= max_distance
    if method == "hungarian":
        unmatchable = distance[valid].sum() + 1.0  # any assignment with one more valid pair costs less
        rows, columns = linear_sum_assignment(np.where(valid, distance, unmatchable))
        keep = valid[rows, columns]
        matched[rows[keep]] = columns[keep]
        return matched
    if method == "reference":
        for target in range(len(reference)):
            candidates = np.where((matched >= 0) | ~valid[:, target], np.inf, distance[:, target])
            best = int(np.argmin(candidates))
            if np.isfinite(candidates[best]):
                matched[best] = target
        return matched
    taken = np.zeros(len(reference), dtype=bool)
    for prediction in np.argsort(-scores, kind="stable"):
        candidates = np.where(taken | ~valid[prediction], np.inf, distance[prediction])
        best = int(np.argmin(candidates))
        if np.isfinite(candidates[best]):
            matched[prediction] = best
            taken[best] = True
    return matched


@dataclass(frozen=True)
class DetectionCurve:
    """Operating points of a set of images at each distinct score, highest first: the predictions
    with score >= threshold are kept; ``fp_all`` counts their false positives on every image,
    ``fp_negative`` on the images without reference objects."""

    thresholds: np.ndarray
    tp: np.ndarray
    fp_all: np.ndarray
    fp_negative: np.ndarray
    n_reference: int
    n_images: int
    n_negative_images: int


def _match(image: ImageDetections, scores: np.ndarray, criterion: str, threshold: float, method: str) -> np.ndarray:
    """One image's matching by ``criterion`` (see :func:`detection_curve`): each prediction's
    reference index or -1."""
    if len(image.boxes) != scores.size:
        raise ValueError(f"{len(image.boxes)} predictions but {scores.size} scores in an image")
    for name, values in (("reference", image.reference), ("boxes", image.boxes)):
        if criterion != "distance" and len(values) and np.shape(values)[-1] != 4:
            raise ValueError(f"{name} must be boxes [x1, y1, x2, y2] for criterion {criterion!r}")
    if criterion == "iou":
        return match_image(image.reference, image.boxes, scores, threshold, method)
    if criterion == "centre_distance":
        return match_by_distance(box_centres(image.reference), box_centres(image.boxes), scores, threshold, method)
    return match_by_distance(image.reference, image.boxes, scores, threshold, method)


def detection_curve(
    images: Sequence[ImageDetections], criterion: str = "iou", threshold: float = 0.5, method: str = "greedy"
) -> DetectionCurve:
    """Match every image once with all its predictions, then pool and sort the scores.

    ``criterion``: ``"iou"`` (boxes, IoU > ``threshold``, :func:`match_image`), ``"centre_distance"``
    (boxes, distance of centres <= ``threshold``) or ``"distance"`` (points of any dimension,
    distance <= ``threshold``). As in the PASCAL VOC and COCO evaluations, a prediction's status
    (true or false positive) is fixed by the matching of all predictions in score order; with greedy
    matching that equals matching the kept predictions alone at every threshold.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown matching criterion {criterion!r}; expected one of {CRITERIA}")
    if len(images) == 0:
        raise ValueError("no images")
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold}")
    flags, scores, negative = [], [], []
    for image in images:
        image_scores = checks.as_finite("scores", image.scores, ndim=1)
        flags.append(_match(image, image_scores, criterion, threshold, method) >= 0)
        scores.append(image_scores)
        negative.append(np.full(image_scores.size, len(image.reference) == 0))
    is_tp, all_scores, on_negative = (np.concatenate([*parts, np.empty(0)]) for parts in (flags, scores, negative))
    is_tp, on_negative = is_tp.astype(bool), on_negative.astype(bool)
    thresholds, tp, fp_all, fp_negative = _operating_points(all_scores, is_tp, ~is_tp, on_negative)
    n_reference = sum(len(image.reference) for image in images)
    n_negative = sum(1 for image in images if len(image.reference) == 0)
    return DetectionCurve(thresholds, tp, fp_all, fp_negative, n_reference, len(images), n_negative)


def detection_average_precision(
    images: Sequence[ImageDetections],
    criterion: str = "iou",
    threshold: float = 0.5,
    method: str = "greedy",
    no_reference: float = 0.0,
) -> float:
    """All-point interpolated average precision over a set of images (PASCAL VOC 2010-2012).

    Everingham et al., IJCV 2010 and the VOC2012 devkit ``VOCcode/VOCevaldet.m`` / ``VOCap.m``:
    precision is made monotone (``p(r) = max_{r' >= r} p(r')``) and summed over the recall steps.
    Not COCO's 101-point interpolation. Operating points are the distinct scores (tied scores enter
    together, so the value does not depend on the order of ties).

    Parameters
    ----------
    images : per-image reference and scored predictions (:class:`ImageDetections`).
    criterion, threshold, method : the matching, see :func:`detection_curve` (VOC: IoU > 0.5).
    no_reference : the value when no image has a reference object (recall undefined).

    Returns
    -------
    float in [0, 1]; 0.0 without any prediction.
    """
    curve = detection_curve(images, criterion, threshold, method)
    if curve.n_reference == 0:
        return float(no_reference)
    if curve.tp.size == 0:
        return 0.0
    recall = np.r_[0.0, curve.tp / curve.n_reference]
    precision = np.r_[1.0, curve.tp / (curve.tp + curve.fp_all)]
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    return float(np.sum(np.diff(recall) * envelope[1:]))


def recall_at_precision(
    images: Sequence[ImageDetections],
    precision: float = 0.5,
    criterion: str = "iou",
    threshold: float = 0.5,
    method: str = "greedy",
    no_reference: float = 0.0,
) -> float:
    """The highest instance recall among the operating points whose precision is >= ``precision``.

    Parameters
    ----------
    images : per-image reference and scored predictions.
    precision : the precision to reach, in [0, 1].
    criterion, threshold, method : the matching, see :func:`detection_curve`.
    no_reference : the value when no image has a reference object.

    Returns
    -------
    float in [0, 1]; 0.0 when no operating point (or no prediction) reaches ``precision``.
    """
    target = checks.fraction("precision", precision)
    curve = detection_curve(images, criterion, threshold, method)
    if curve.n_reference == 0:
        return float(no_reference)
    reached = curve.tp / (curve.tp + curve.fp_all) >= target
    return float(curve.tp[reached].max() / curve.n_reference) if reached.any() else 0.0


def froc(
    images: Sequence[ImageDetections],
    fp_rates: Sequence[float] = FROC_FP_RATES,
    criterion: str = "iou",
    threshold: float = 0.5,
    method: str = "greedy",
    fp_images: str = "all",
    no_reference: float = 0.0,
) -> dict[float, float]:
    """Instance recall at each mean number of false positives per image in ``fp_rates``.

    For each rate, the recall at the lowest score threshold whose mean FP count per image is still
    <= the rate (Bandos et al. 2009; the LUNA16 protocol, Setio et al., MedIA 2017, averages the
    recall at 1/8 ... 8 FPs per scan). The curve starts at (0 FP, recall 0): a rate below every
    operating point gives recall 0.

    Parameters
    ----------
    images : per-image reference and scored predictions.
    fp_rates : the mean FP counts per image, e.g. ``(0.125, 0.25, 0.5, 1, 2, 4, 8)``.
    criterion, threshold, method : the matching, see :func:`detection_curve`.
    fp_images : ``"all"`` counts false positives on every image over all images; ``"negative"``
        (DigestPath 2019) only predictions on images without reference objects, over those images.
    no_reference : the recall at every rate when no image has a reference object.

    Returns
    -------
    dict rate -> recall in [0, 1]; the FROC score is the mean of its values (:func:`froc_score`).
    """
    if fp_images not in FP_IMAGES:
        raise ValueError(f"unknown fp_images {fp_images!r}; expected one of {FP_IMAGES}")
    rates = checks.as_finite("fp_rates", fp_rates, ndim=1)
    if rates.size == 0 or np.any(rates < 0):
        raise ValueError("fp_rates must be a non-empty list of non-negative numbers")
    curve = detection_curve(images, criterion, threshold, method)
    if curve.n_reference == 0:
        return {rate: float(no_reference) for rate in fp_rates}
    if fp_images == "negative":
        if curve.n_negative_images == 0:
            raise ValueError("fp_images='negative' needs at least one image without reference objects")
        fp_rate = curve.fp_negative / curve.n_negative_images
    else:
        fp_rate = curve.fp_all / curve.n_images
    return froc_recalls(np.r_[0.0, fp_rate], np.r_[0.0, curve.tp / curve.n_reference], tuple(fp_rates))


def froc_score(
    images: Sequence[ImageDetections],
    fp_rates: Sequence[float] = FROC_FP_RATES,
    criterion: str = "iou",
    threshold: float = 0.5,
    method: str = "greedy",
    fp_images: str = "all",
    no_reference: float = 0.0,
) -> float:
    """Mean of :func:`froc`'s recalls (the FROC score); parameters as :func:`froc`."""
    return float(np.mean(list(froc(images, fp_rates, criterion, threshold, method, fp_images, no_reference).values())))


def decision_counts(
    images: Sequence[ImageDetections],
    criterion: str = "distance",
    threshold: float = 7.5e-3,
    method: str = "reference",
    score_threshold: float | None = None,
    classes: Sequence[str] | None = None,
    keep_unnamed: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-image TP, FP and FN counts of the predictions kept by a decision.

    A prediction is kept when its score is > ``score_threshold`` (strict, as MIDOG's F1 code, github
    DeepPathology/TUPAC16_AlternativeLabels ``lib/calculate_F1.py``; None keeps all) and, with
    ``classes``, its ``name`` is one of them (an unnamed one when ``keep_unnamed``: MIDOG 2021 counts a
    point without a name as a mitotic figure). The kept predictions are matched one-to-one to the
    reference by ``criterion``, ``threshold`` and ``method`` (:func:`detection_curve`; the default is
    MIDOG 2021's: points within 7.5e-3 mm, reference points in order taking their nearest free
    prediction, github DeepMicroscopy/MIDOG_evaluation_docker ``evaluation.py``).
    """
    if criterion not in CRITERIA:
        raise ValueError(f"unknown matching criterion {criterion!r}; expected one of {CRITERIA}")
    checks.nonempty("images", len(images))
    if isinstance(classes, str):
        raise ValueError(f"classes must be a list of names, got the string {classes!r}")
    if not np.isfinite(threshold) or (score_threshold is not None and not np.isfinite(score_threshold)):
        raise ValueError("threshold and score_threshold must be finite")
    counts = np.zeros((len(images), 3), dtype=np.int64)
    for row, image in enumerate(images):
        scores = checks.as_finite("scores", image.scores, ndim=1)
        if len(image.boxes) != scores.size:
            raise ValueError(f"{len(image.boxes)} predictions but {scores.size} scores in an image")
        keep = np.ones(scores.size, bool) if score_threshold is None else scores > score_threshold
        if classes is not None:
            names = np.full(scores.size, None) if image.names is None else np.asarray(image.names, dtype=object)
            if names.shape != scores.shape:
                raise ValueError(f"names must be one per prediction ({scores.size}), got shape {names.shape}")
            unnamed = np.equal(names, None)
            keep &= np.where(unnamed, keep_unnamed, np.isin(np.where(unnamed, "", names).astype(str), list(classes)))
        kept = ImageDetections(image.reference, np.asarray(image.boxes)[keep], scores[keep])
        matched = int(np.count_nonzero(_match(kept, scores[keep], criterion, threshold, method) >= 0))
        counts[row] = matched, int(keep.sum()) - matched, len(image.reference) - matched
    return counts[:, 0], counts[:, 1], counts[:, 2]


def precision_recall_f1(
    tp: np.ndarray | int, fp: np.ndarray | int, fn: np.ndarray | int, epsilon: float = 0.0, empty: float = float("nan")
) -> tuple[float, float, float]:
    """Precision ``TP / (TP + FP + eps)``, recall ``TP / (TP + FN + eps)`` and F1
    ``(2 TP + eps) / (2 TP + FP + FN + eps)`` (:func:`evaluation.metrics.lesions.f1_score`) of the
    counts summed over images (:func:`decision_counts`).

    The epsilon terms are MIDOG 2021's (``eps = 1e-6``, github DeepMicroscopy/MIDOG_evaluation_docker
    ``evaluation.py``); ``epsilon=0`` gives the plain ratios. ``empty``: a ratio's value when its
    denominator is 0.
    """
    counts = [checks.as_finite(name, np.atleast_1d(x), ndim=1) for name, x in (("tp", tp), ("fp", fp), ("fn", fn))]
    if any(np.any(x < 0) for x in counts):
        raise ValueError("detection counts must be non-negative")
    tp, fp, fn = (float(x.sum()) for x in counts)
    f1 = float(f1_score(tp, fp, fn, empty, epsilon))  # refuses a negative or non-finite epsilon

    def ratio(numerator: float, denominator: float) -> float:
        return numerator / denominator if denominator > 0 else float(empty)

    return ratio(tp, tp + fp + epsilon), ratio(tp, tp + fn + epsilon), f1
