"""Binary ranking curves and their areas, computed as scikit-learn 1.9.1 computes them, to the last bit,
without importing it.

Why: importing ``sklearn.metrics`` costs an evaluation about a second of start-up (it loads SciPy's
stats and pandas), more than the whole rest of most declared challenges' runs, and a call of one of its
curves costs about half a millisecond of validation, 6-10x these on up to 1,000 samples
(``benchmarks/curve_calls.py``; LUNA16's bootstrap draws 1,000 curves); issue 30. The definitions
are read in scikit-learn 1.9.1's ``sklearn/metrics/_ranking.py`` (read, not copied) and restated in
numpy, operation for operation where the order of floating-point operations decides the last bit;
``test/metrics/test_curves.py`` checks every function equal (``==``) to scikit-learn 1.9.1 over many
random inputs (ties, integer-valued scores, weights with zeros, one class, one sample).

``truth``: (n,) 0/1 or boolean reference (1 = positive); ``scores``: (n,) finite, higher = more
positive; ``sample_weight``: (n,) non-negative row weights, rows of weight 0 left out (as scikit-learn
drops them). Where scikit-learn warns (a curve without positives or negatives) these return its
values silently; their callers define those cases.
"""

from __future__ import annotations

import numpy as np


def threshold_counts(
    truth: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(false positives, true positives, thresholds) of the decision ``scores >= t`` at each distinct
    score t, highest first: ``confusion_matrix_at_thresholds`` (scikit-learn < 1.8: ``_binary_clf_curve``),
    ``sklearn/metrics/_ranking.py``. Rows of zero weight are dropped; the rest sorted by descending score
    (stable with weights: ties keep their order); tied rows form one threshold, counted at its last row; the counts
    are float64 cumulative sums of the positives' (negatives') weights, or without weights the true
    positives a cumulative sum and the false positives ``1 + index - tp``.

    Returns three (distinct scores,) float64 arrays; ``ValueError`` on empty or unequal inputs.
    """
    positive = np.asarray(truth).reshape(-1) == 1
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if positive.size != scores.size or (sample_weight is not None and np.size(sample_weight) != scores.size):
        raise ValueError(f"inconsistent numbers of samples: truth {positive.size}, scores {scores.size}")
    if sample_weight is not None:
        weight = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        kept = weight != 0
        positive, scores, weight = positive[kept], scores[kept], weight[kept]
    if scores.size == 0:
        raise ValueError("a curve needs at least one sample (of non-zero weight)")
    # ties keep their order (stable) where it decides the last bit: summed weights; unweighted counts are whole
    # numbers, the same in any order within a tie, so there any sort does (quicker: ``_ranked``)
    ranked = _ranked(scores, positive) if sample_weight is None else None
    if ranked is not None:
        scores, positive = ranked
    else:
        order = np.argsort(-scores, kind="stable" if sample_weight is not None else None)
        scores, positive = scores[order], positive[order].astype(np.float64)
    ends = np.r_[np.flatnonzero(np.diff(scores)), scores.size - 1]  # each tied group's last row
    if sample_weight is None:
        tps = np.cumsum(positive, dtype=np.float64)[ends]
        fps = 1 + ends.astype(np.float64) - tps
    else:
        weight = weight[order]
        tps = np.cumsum(positive * weight, dtype=np.float64)[ends]
        fps = np.cumsum((1 - positive) * weight, dtype=np.float64)[ends]
    return fps, tps, scores[ends]


_MAGNITUDE = np.int64(2**63 - 1)  # a double's bits but its sign


def _ranked(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``scores`` from the highest down and ``positive`` (0/1 floats) in that order, ties in any order, by one sort of
    numbers: each double's bits as an integer that orders as the double does (a negative one's magnitude bits
    turned), less the bits every score shares, with the row's class as its last bit; ``None`` when that does
    not fit in 63 bits (scores of both signs over a wide range)."""
    bits = scores.view(np.int64)
    keys = bits ^ ((bits >> 63) & _MAGNITUDE)
    differ = int(np.bitwise_or.reduce(keys ^ keys[0]))
    low = (differ & -differ).bit_length() - 1 if differ else 0
    if differ.bit_length() - low > 62 or differ < 0:
        return None
    least = keys.min() >> low
    ranks = np.sort(((keys >> low) - least) << 1 | positive)[::-1]
    keys = ((ranks >> 1) + least) << low | (keys[0] & ((1 << low) - 1))
    return (keys ^ ((keys >> 63) & _MAGNITUDE)).view(np.float64), (ranks & 1).astype(np.float64)


def roc_curve(
    truth: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None, drop_intermediate: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(false-positive rates, true-positive rates, thresholds) from the highest threshold down:
    ``roc_curve``, ``sklearn/metrics/_ranking.py``. With ``drop_intermediate`` the points where neither
    count bends (both second differences 0) are dropped, first and last kept (only past two points); the
    point (0, 0) at threshold +inf is put first; each count divided by its last value, or NaN throughout
    without negatives (rates of false positives) or positives (true positives), where scikit-learn warns.
    """
    fps, tps, thresholds = threshold_counts(truth, scores, sample_weight)
    if drop_intermediate and fps.size > 2:
        bends = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])
        fps, tps, thresholds = fps[bends], tps[bends], thresholds[bends]
    tps, fps = np.r_[0.0, tps], np.r_[0.0, fps]
    thresholds = np.r_[np.inf, thresholds]
    fpr = fps / fps[-1] if fps[-1] > 0 else np.full(fps.shape, np.nan)
    tpr = tps / tps[-1] if tps[-1] > 0 else np.full(tps.shape, np.nan)
    return fpr, tpr, thresholds


def precision_recall_curve(
    truth: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precisions, recalls, thresholds), recall decreasing, ending at the point (recall 0, precision 1)
    that has no threshold: ``precision_recall_curve`` (``drop_intermediate=False``),
    ``sklearn/metrics/_ranking.py``. Precision ``tp / (tp + fp)`` at each distinct score; recall
    ``tp / tp[-1]``, or 1 at every threshold without positives (where scikit-learn warns); thresholds
    ascending.
    """
    fps, tps, thresholds = threshold_counts(truth, scores, sample_weight)
    called = tps + fps  # > 0: every row counted has a non-zero weight
    precision = tps / called
    recall = tps / tps[-1] if tps[-1] != 0 else np.full(tps.shape, 1.0)
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thresholds[::-1]


def auc(x: np.ndarray, y: np.ndarray) -> float:
    """Trapezoidal area under the points (x, y): ``auc``, ``sklearn/metrics/_ranking.py``, whose sum is
    ``scipy.integrate.trapezoid``'s ``sum(diff(x) * (y[1:] + y[:-1]) / 2.0)``; x must be non-decreasing,
    or non-increasing (then the area's sign is turned, so that it is positive for a curve above 0).
    ``ValueError`` on fewer than two points or an x that goes both ways."""
    x, y = np.asarray(x, dtype=np.float64).reshape(-1), np.asarray(y, dtype=np.float64).reshape(-1)
    if x.size != y.size:
        raise ValueError(f"inconsistent numbers of points: x {x.size}, y {y.size}")
    if x.size < 2:
        raise ValueError(f"at least 2 points are needed to compute the area under a curve, got {x.size}")
    dx = np.diff(x)
    direction = 1
    if np.any(dx < 0):
        if not np.all(dx <= 0):
            raise ValueError("x is neither increasing nor decreasing")
        direction = -1
    return float(direction * np.sum(dx * (y[1:] + y[:-1]) / 2.0))


def average_precision_score(truth: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Average precision ``sum_k (R_k - R_{k+1}) P_k`` over the precision-recall curve's points (no
    interpolation), never below 0: ``average_precision_score`` of a binary reference,
    ``sklearn/metrics/_ranking.py``. Without positives (recall 1 throughout) it is 0."""
    precision, recall, _ = precision_recall_curve(truth, scores, sample_weight)
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def roc_auc_score(
    truth: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None, max_fpr: float | None = None
) -> float:
    """Area under the ROC curve (``roc_curve`` with its intermediate points dropped, then :func:`auc`):
    ``roc_auc_score`` of a binary reference, ``sklearn/metrics/_ranking.py`` (``_binary_roc_auc_score``).
    NaN when ``truth`` holds one class (counting zero-weighted rows; scikit-learn warns there). With
    ``max_fpr`` in (0, 1): the area over the false-positive rates [0, max_fpr], the curve cut at a point
    interpolated linearly at max_fpr, McClish-standardised ``0.5 * (1 + (A - max_fpr² / 2) / (max_fpr -
    max_fpr² / 2))`` (McClish, Med Decis Making 1989); ``ValueError`` outside (0, 1]."""
    positive = np.asarray(truth) == 1
    if not positive.any() or positive.all():  # (one class, or none)
        return float("nan")
    fpr, tpr, _ = roc_curve(truth, scores, sample_weight)
    if max_fpr is None or max_fpr == 1:
        return auc(fpr, tpr)
    if not 0 < max_fpr <= 1:
        raise ValueError(f"max_fpr must be in (0, 1], got {max_fpr!r}")
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    cut = np.interp(max_fpr, [fpr[stop - 1], fpr[stop]], [tpr[stop - 1], tpr[stop]])
    partial = auc(np.append(fpr[:stop], max_fpr), np.append(tpr[:stop], cut))
    least, most = 0.5 * max_fpr**2, max_fpr
    return float(0.5 * (1 + (partial - least) / (most - least)))
