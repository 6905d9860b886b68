"""DigestPath 2019 task 1's own rules (the open interface of ``digestpath2019-task1.toml``): no official code
is public; the seed (002) and ../shared/spec/challenges.md define them, ``evaluation.metrics.detection``
computes them (``summarise``: every value over the set of images; ``match_image``: one image's matching)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.metrics.detection import FROC_FP_RATES, DetectionSummary, ImageDetections, match_image, summarise

NO_NEGATIVE = (
    "The DigestPath ground truth has no negative (normal) image: normal-region FPs and FROC are undefined, so "
    "the leaderboard values cannot be computed."
)
_LAST: dict[str, DetectionSummary] = {}  # the set's summary, computed once for the three set functions


def _summary(predictions: Any, references: Any, context: Any) -> DetectionSummary:
    """``summarise`` of the scored images with the options in force, computed once per set of images."""
    digest = hashlib.sha256(repr((context.cases, sorted(context.options.items()))).encode())
    for (boxes, scores), reference in zip(predictions, references, strict=True):
        for array in (boxes, scores, reference):
            digest.update(np.ascontiguousarray(array, dtype=float).tobytes() + b"|")
    key = digest.hexdigest()
    if key not in _LAST:
        images = [ImageDetections(r, b, s) for (b, s), r in zip(predictions, references, strict=True)]
        if all(len(image.reference) for image in images):
            raise ConfigurationError(NO_NEGATIVE)
        _LAST.clear()
        _LAST[key] = summarise(images, context.options["iou_threshold"], context.options["matching"])
    return _LAST[key]


def summary(predictions: Any, references: Any, context: Any) -> dict[str, float]:
    """Instance recall, precision on positive images, recall when precision > 0.2, mean predictions per
    negative image, max(100 - that, 0) and the FROC (mean recall at 1 ... 32 FPs per negative image)."""
    found = _summary(predictions, references, context)
    return {"instance_recall": found.instance_recall, "precision": found.precision,
            "recall_valid": found.recall_valid, "normal_fp": found.normal_fp, "fp_score": found.fp_score,
            "froc": found.froc}  # fmt: skip


def froc_recall_at(predictions: Any, references: Any, context: Any) -> dict[str, float]:
    """The recall at each of 1, 2, 4, 8, 16, 32 FPs per negative image."""
    found = _summary(predictions, references, context)
    return {f"{rate}_fp": found.froc_recalls[rate] for rate in FROC_FP_RATES}


def counts(predictions: Any, references: Any, context: Any) -> dict[str, int]:
    """The matched reference boxes and all reference boxes."""
    found = _summary(predictions, references, context)
    return {"true_positives": found.true_positives, "reference_boxes": found.reference_boxes}


def image(prediction: Any, reference: Any, context: Any) -> dict[str, Any]:
    """One image: its predictions, its true positives, whether it is negative and (positive) its recall."""
    boxes, scores = prediction
    matched = match_image(reference, boxes, scores, context.options["iou_threshold"], context.options["matching"])
    true_positives = int(np.count_nonzero(matched >= 0))
    return {"predictions": int(scores.size), "true_positives": true_positives, "negative_image": not len(reference),
            "recall": true_positives / len(reference) if len(reference) else None}  # fmt: skip
