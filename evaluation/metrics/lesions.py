"""Lesion-wise detection: connected components matched one-to-one by IoU.

Definition (HECKTOR 2025 task 1, GTVn detection; ../shared/spec/challenges.md): lesions are the
26-connected components of a mask (8-connected in a 2D mask); a predicted and a reference lesion
match when their IoU exceeds 0.3; matching is one-to-one, greedy by descending IoU (ties broken by
reference, then predicted component number, i.e. scan order). Unmatched predicted lesions are false
positives, unmatched reference lesions false negatives.

For the catalogue: the same matching with a ``hungarian`` option (maximum total IoU), lesion-wise F1
and panoptic quality (Kirillov et al. 2019) on the connected components of two binary masks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.assignment import linear_sum_assignment
from evaluation.metrics.boxes import CroppedPair, cropped_pair, in_whole

IOU_THRESHOLD = 0.3
PANOPTIC_IOU_THRESHOLD = 0.5
MATCHING_METHODS = ("greedy", "hungarian")


@dataclass(frozen=True)
class LesionCounts:
    """True positive, false positive and false negative lesions."""

    tp: int
    fp: int
    fn: int


CONNECTIVITIES = (6, 18, 26)


def connected_components(mask: np.ndarray, connectivity: int = 26) -> tuple[np.ndarray, int]:
    """Component labels (1..n, scan order; 0 = background) of a boolean 3D mask and their number n.

    ``connectivity``: 6 (faces), 18 (faces and edges) or 26 (faces, edges and corners), cc3d's
    neighbourhoods. A 2D mask is labelled as one slice (26 then means 8-connected).
    """
    if connectivity not in CONNECTIVITIES:
        raise ValueError(f"connectivity must be one of {CONNECTIVITIES}, got {connectivity!r}")
    volume = np.ascontiguousarray(mask, dtype=np.uint8)
    if volume.ndim == 2:
        volume = volume[np.newaxis]
    import cc3d  # (here: a run that labels no mask never loads it)

    labels, count = cc3d.connected_components(volume, connectivity=connectivity, return_N=True)
    return labels, int(count)


@dataclass(frozen=True)
class LesionMatches:
    """The one-to-one matching of two masks' lesions: component counts and the matched pairs' IoUs."""

    n_reference: int
    n_prediction: int
    iou: np.ndarray  # (tp,) IoU of each matched pair

    @property
    def counts(self) -> LesionCounts:
        tp = int(self.iou.size)
        return LesionCounts(tp, self.n_prediction - tp, self.n_reference - tp)


@dataclass(frozen=True)
class LesionPairs:
    """The connected components of two masks and the IoU of every overlapping (reference, predicted)
    pair: what every threshold's and method's matching of the same two masks starts from."""

    n_reference: int
    n_prediction: int
    ref_ids: np.ndarray
    pred_ids: np.ndarray
    iou: np.ndarray

    def match(self, threshold: float = IOU_THRESHOLD, matching: str = "greedy") -> LesionMatches:
        """The one-to-one matching at IoU > ``threshold`` (see :func:`lesion_matches`)."""
        if matching not in MATCHING_METHODS:
            raise ValueError(f"unknown matching {matching!r}; expected one of {MATCHING_METHODS}")
        keep = self.iou > threshold
        ref_ids, pred_ids, iou = self.ref_ids[keep], self.pred_ids[keep], self.iou[keep]
        if matching == "hungarian":
            return LesionMatches(self.n_reference, self.n_prediction, _assignment(ref_ids, pred_ids, iou))
        order = np.lexsort((pred_ids, ref_ids, -iou))
        ref_used, pred_used, matched = set(), set(), []
        for r, p, value in zip(ref_ids[order].tolist(), pred_ids[order].tolist(), iou[order].tolist(), strict=True):
            if r not in ref_used and p not in pred_used:  # candidate pairs only
                ref_used.add(r)
                pred_used.add(p)
                matched.append(value)
        return LesionMatches(self.n_reference, self.n_prediction, np.array(matched, dtype=float))


def overlap_counts(
    ref_labels: np.ndarray, n_ref: int, pred_labels: np.ndarray, n_pred: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every overlapping pair of two component labellings of one shape: (reference ids, predicted
    ids, intersections in voxels, then the (n_ref + 1,) and (n_pred + 1,) component sizes, index 0
    unused and 0)."""
    in_ref, in_pred = ref_labels > 0, pred_labels > 0
    ref_sizes = np.bincount(ref_labels[in_ref], minlength=n_ref + 1)
    pred_sizes = np.bincount(pred_labels[in_pred], minlength=n_pred + 1)
    both = in_ref & in_pred
    pair_code = ref_labels[both].astype(np.int64) * (n_pred + 1) + pred_labels[both]
    pairs, intersections = np.unique(pair_code, return_counts=True)
    return pairs // (n_pred + 1), pairs % (n_pred + 1), intersections, ref_sizes, pred_sizes


def lesion_pairs(reference: np.ndarray, prediction: np.ndarray) -> LesionPairs:
    """Label both masks' components once (26-connected; 8 in 2D) and measure every overlapping pair
    (:func:`pair_lesions` of their :func:`boxes.cropped_pair`)."""
    if reference.shape != prediction.shape:
        raise ValueError(f"mask shapes differ: {reference.shape} vs {prediction.shape}")
    return pair_lesions(cropped_pair(reference, prediction))


def pair_lesions(pair: CroppedPair | None) -> LesionPairs:
    """:func:`lesion_pairs` of the masks of a :class:`boxes.CroppedPair` (``None``: both empty).

    The crop is labelled part by part (no component spans two parts, and a few lesions far apart fill
    little of their box); components are then numbered in the scan order of their first voxels. The
    components, their numbers (the greedy matching's tie-break) and every count are those of the
    whole masks.
    """
    if pair is None:
        return _no_pairs(0, 0)
    if len(pair.parts) == 1:
        return _pairs_in(pair.reference, pair.prediction)[0]
    found = [_pairs_in(pair.reference[part], pair.prediction[part]) for part in pair.parts]
    shape = pair.reference.shape
    ref_number = _numbers_in_scan_order([_first_voxels(labels) for _, labels, _ in found], pair.parts, shape)
    pred_number = _numbers_in_scan_order([_first_voxels(labels) for _, _, labels in found], pair.parts, shape)
    return LesionPairs(
        sum(pairs.n_reference for pairs, _, _ in found),
        sum(pairs.n_prediction for pairs, _, _ in found),
        np.concatenate([number[pairs.ref_ids - 1] for (pairs, _, _), number in zip(found, ref_number, strict=True)]),
        np.concatenate([number[pairs.pred_ids - 1] for (pairs, _, _), number in zip(found, pred_number, strict=True)]),
        np.concatenate([pairs.iou for pairs, _, _ in found]),
    )


def _pairs_in(reference: np.ndarray, prediction: np.ndarray) -> tuple[LesionPairs, np.ndarray, np.ndarray]:
    """Components and overlapping pairs of two masks (numbered in their own scan order), and the
    two component labellings."""
    ref_labels, n_ref = connected_components(reference)
    pred_labels, n_pred = connected_components(prediction)
    if n_ref == 0 or n_pred == 0:
        return _no_pairs(n_ref, n_pred), ref_labels, pred_labels
    ref_ids, pred_ids, intersections, ref_sizes, pred_sizes = overlap_counts(ref_labels, n_ref, pred_labels, n_pred)
    iou = intersections / (ref_sizes[ref_ids] + pred_sizes[pred_ids] - intersections)
    return LesionPairs(n_ref, n_pred, ref_ids, pred_ids, iou), ref_labels, pred_labels


def _first_voxels(labels: np.ndarray) -> np.ndarray:
    """Flat index of each component's first voxel, components 1..n: labels are numbered in scan
    order, so component k starts where the running maximum of the labels first reaches k."""
    running = np.maximum.accumulate(labels.ravel())
    return np.flatnonzero(np.diff(running, prepend=running.dtype.type(0)))


def _numbers_in_scan_order(
    firsts: list[np.ndarray], parts: list[tuple[slice, ...]], shape: tuple[int, ...]
) -> list[np.ndarray]:
    """Per part, the number (1..n) of each of its components in the whole crop's scan order."""
    keys = [
        in_whole(first, tuple(axis.stop - axis.start for axis in part), [axis.start for axis in part], shape)
        for first, part in zip(firsts, parts, strict=True)
    ]
    number = np.empty(sum(k.size for k in keys), dtype=np.int64)
    number[np.argsort(np.concatenate(keys))] = np.arange(1, number.size + 1)
    return np.split(number, np.cumsum([k.size for k in keys])[:-1])


def _no_pairs(n_ref: int, n_pred: int) -> LesionPairs:
    """Components that overlap nowhere (one mask empty, or both)."""
    return LesionPairs(n_ref, n_pred, np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))


def lesion_matches(
    reference: np.ndarray, prediction: np.ndarray, threshold: float = IOU_THRESHOLD, matching: str = "greedy"
) -> LesionMatches:
    """Match the connected components of two boolean masks of one shape (2D or 3D) one-to-one.

    Candidate pairs are those with IoU > ``threshold``. ``greedy`` takes them by descending IoU (see
    the module docstring); ``hungarian`` takes the assignment of maximum total IoU among them
    (``scipy.optimize.linear_sum_assignment``; Kuhn 1955). With ``threshold >= 0.5`` a lesion has at
    most one candidate partner, so both give the same matches (Kirillov et al. 2019, Theorem 1).
    """
    if matching not in MATCHING_METHODS:
        raise ValueError(f"unknown matching {matching!r}; expected one of {MATCHING_METHODS}")
    return lesion_pairs(reference, prediction).match(threshold, matching)


def _assignment(ref_ids: np.ndarray, pred_ids: np.ndarray, iou: np.ndarray) -> np.ndarray:
    """IoUs of the maximum-total-IoU assignment over the candidate pairs (a dense matrix over the
    components that have a candidate only)."""
    if iou.size == 0:
        return np.empty(0)
    rows, row_of = np.unique(ref_ids, return_inverse=True)
    columns, column_of = np.unique(pred_ids, return_inverse=True)
    matrix = np.zeros((rows.size, columns.size))
    matrix[row_of, column_of] = iou
    chosen_rows, chosen_columns = linear_sum_assignment(matrix, maximize=True)
    values = matrix[chosen_rows, chosen_columns]
    return values[values > 0]


def match_lesions(
    reference: np.ndarray, prediction: np.ndarray, threshold: float = IOU_THRESHOLD, matching: str = "greedy"
) -> LesionCounts:
    """TP/FP/FN lesions of two boolean masks of one shape (2D or 3D); see :func:`lesion_matches`."""
    return lesion_matches(reference, prediction, threshold, matching).counts


def f1_score(
    tp: np.ndarray | int, fp: np.ndarray | int, fn: np.ndarray | int, empty: float = 1.0, epsilon: float = 0.0
) -> np.ndarray | float:
    """Lesion F1 = 2TP / (2TP + FP + FN); ``empty`` when there is no lesion at all (0/0).

    ``epsilon``: a challenge's smoothing term, ``(2TP + eps) / (2TP + FP + FN + eps)`` (MIDOG 2021's
    1e-6, github DeepMicroscopy/MIDOG_evaluation_docker ``evaluation.py``); 0 gives the plain ratio.
    """
    epsilon = float(epsilon)
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    tp, fp, fn = (checks.as_finite(name, x) for name, x in (("tp", tp), ("fp", fp), ("fn", fn)))
    if np.any(tp < 0) or np.any(fp < 0) or np.any(fn < 0):
        raise ValueError("lesion counts must be non-negative")
    denominator = 2 * tp + fp + fn + epsilon
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(denominator > 0, (2 * tp + epsilon) / denominator, empty)
    return float(value) if value.ndim == 0 else value


def lesion_f1(
    reference: np.ndarray,
    prediction: np.ndarray,
    threshold: float = IOU_THRESHOLD,
    matching: str = "greedy",
    empty: float = 1.0,
) -> float:
    """Lesion-wise (instance) detection F1 = 2TP / (2TP + FP + FN) of two binary masks.

    Lesions are connected components (26-connected in 3D, 8 in 2D), matched one-to-one at
    IoU > ``threshold`` by :func:`lesion_matches` (``greedy`` or ``hungarian``). Definition of HECKTOR
    2025 task 1 (GTVn detection); instance F1 as in Maier-Hein et al., "Metrics reloaded", 2024.

    Parameters
    ----------
    reference, prediction : (y, x) or (z, y, x) binary masks of one shape.
    threshold : IoU a pair must exceed to match.
    matching : ``"greedy"`` (by descending IoU) or ``"hungarian"`` (maximum total IoU).
    empty : value when neither mask has a lesion (0/0).

    Returns
    -------
    float in [0, 1].
    """
    reference, prediction = checks.binary_pair(reference, prediction, (2, 3))
    counts = match_lesions(reference, prediction, threshold, matching)
    return f1_score(counts.tp, counts.fp, counts.fn, empty)


@dataclass(frozen=True)
class PanopticQuality:
    """PQ = SQ x RQ with its segmentation (SQ) and recognition (RQ) quality and the counts."""

    pq: float
    sq: float
    rq: float
    tp: int
    fp: int
    fn: int


def panoptic_quality(
    reference: np.ndarray,
    prediction: np.ndarray,
    threshold: float = PANOPTIC_IOU_THRESHOLD,
    empty: float = 1.0,
) -> PanopticQuality:
    """Panoptic quality of the connected components (instances) of two binary masks.

    Kirillov et al., "Panoptic Segmentation", CVPR 2019 (eq. 1): instances match at IoU > 0.5 (a
    match is then unique), SQ = mean IoU of the matched pairs, RQ = TP / (TP + FP/2 + FN/2) (the F1),
    PQ = SQ x RQ. Instances as in :func:`lesion_f1` (26-connected in 3D, 8 in 2D).

    Parameters
    ----------
    reference, prediction : (y, x) or (z, y, x) binary masks of one shape.
    threshold : matching IoU; the definition's 0.5 (values below 0.5 lose the uniqueness, and
        matching is then greedy by descending IoU).
    empty : PQ, SQ and RQ when neither mask has an instance. With instances but no match, RQ = 0,
        PQ = 0 and SQ = 0 (no matched pair to average; PQ is 0 either way).

    Returns
    -------
    PanopticQuality (floats pq, sq, rq in [0, 1] and integer counts).
    """
    reference, prediction = checks.binary_pair(reference, prediction, (2, 3))
    return panoptic_from_matches(lesion_matches(reference, prediction, threshold), empty)


def panoptic_from_matches(matches: LesionMatches, empty: float = 1.0) -> PanopticQuality:
    """:func:`panoptic_quality` of an existing matching (e.g. ``lesion_pairs(r, p).match(0.5)``)."""
    tp, fp, fn = matches.counts.tp, matches.counts.fp, matches.counts.fn
    if tp + fp + fn == 0:
        return PanopticQuality(float(empty), float(empty), float(empty), 0, 0, 0)
    rq = tp / (tp + 0.5 * fp + 0.5 * fn)
    sq = float(np.sum(matches.iou) / tp) if tp else 0.0
    return PanopticQuality(sq * rq, sq, rq, tp, fp, fn)
