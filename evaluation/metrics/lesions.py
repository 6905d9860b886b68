"""Lesion-wise detection: connected components matched one-to-one by IoU.

Definition (HECKTOR 2025 task 1, GTVn detection; ../shared/spec/challenges.md): lesions are the
26-connected components of a mask (8-connected in a 2D mask); a predicted and a reference lesion
match when their IoU exceeds 0.3; matching is one-to-one, greedy by descending IoU (ties broken by
reference, then predicted component number, i.e. scan order). Unmatched predicted lesions are false
positives, unmatched reference lesions false negatives.
"""

from __future__ import annotations

from dataclasses import dataclass

import cc3d
import numpy as np

IOU_THRESHOLD = 0.3


@dataclass(frozen=True)
class LesionCounts:
    """True positive, false positive and false negative lesions."""

    tp: int
    fp: int
    fn: int


def _components(mask: np.ndarray) -> tuple[np.ndarray, int]:
    volume = np.ascontiguousarray(mask, dtype=np.uint8)
    if volume.ndim == 2:
        volume = volume[np.newaxis]
    labels, count = cc3d.connected_components(volume, connectivity=26, return_N=True)
    return labels, int(count)


def match_lesions(reference: np.ndarray, prediction: np.ndarray, threshold: float = IOU_THRESHOLD) -> LesionCounts:
    """TP/FP/FN lesions of two boolean masks of one shape (2D or 3D)."""
    if reference.shape != prediction.shape:
        raise ValueError(f"mask shapes differ: {reference.shape} vs {prediction.shape}")
    ref_labels, n_ref = _components(reference)
    pred_labels, n_pred = _components(prediction)
    if n_ref == 0 or n_pred == 0:
        return LesionCounts(0, n_pred, n_ref)
    ref_sizes = np.bincount(ref_labels.ravel(), minlength=n_ref + 1)
    pred_sizes = np.bincount(pred_labels.ravel(), minlength=n_pred + 1)
    both = (ref_labels > 0) & (pred_labels > 0)
    pair_code = ref_labels[both].astype(np.int64) * (n_pred + 1) + pred_labels[both]
    pairs, intersections = np.unique(pair_code, return_counts=True)
    ref_ids, pred_ids = pairs // (n_pred + 1), pairs % (n_pred + 1)
    iou = intersections / (ref_sizes[ref_ids] + pred_sizes[pred_ids] - intersections)
    keep = iou > threshold
    ref_ids, pred_ids, iou = ref_ids[keep], pred_ids[keep], iou[keep]
    order = np.lexsort((pred_ids, ref_ids, -iou))
    ref_used, pred_used = set(), set()
    for r, p in zip(ref_ids[order].tolist(), pred_ids[order].tolist(), strict=True):  # candidate pairs only
        if r not in ref_used and p not in pred_used:
            ref_used.add(r)
            pred_used.add(p)
    tp = len(ref_used)
    return LesionCounts(tp, n_pred - tp, n_ref - tp)


def f1_score(
    tp: np.ndarray | int, fp: np.ndarray | int, fn: np.ndarray | int, empty: float = 1.0
) -> np.ndarray | float:
    """Lesion F1 = 2TP / (2TP + FP + FN); ``empty`` when there is no lesion at all (0/0)."""
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    denominator = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(denominator > 0, 2 * tp / denominator, empty)
    return float(value) if value.ndim == 0 else value
