"""Binary-classifier curve metrics: PPV at a recall level, AUROC and AUPRC, one at a time with
scikit-learn, or for a whole bootstrap at once from integer case weights.

PPV at recall follows TUE-VCA/Grand-Challenge-RARE25,
open-development-phase/example-evaluation-method/evaluate.py: ``np.interp(recall,
recalls[::-1], precisions[::-1])`` on ``sklearn.metrics.precision_recall_curve``. Its quirks are
kept: with several curve points at exactly the target recall it returns the lowest of their
precisions (``np.interp`` takes the last equal abscissa), and with tied scores it interpolates
between points, so it may exceed any achievable precision. ``method="max_precision"`` gives the
largest precision among the curve points whose recall reaches the target instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score

PPV_METHODS = ("interp", "max_precision")


def ppv_at_recall(labels: np.ndarray, scores: np.ndarray, recall: float = 0.9, method: str = "interp") -> float:
    """Precision (PPV) at ``recall`` on ``sklearn.metrics.precision_recall_curve``."""
    precisions, recalls, _ = precision_recall_curve(labels, scores)
    if method == "interp":
        return float(np.interp(recall, recalls[::-1], precisions[::-1]))
    if method == "max_precision":
        return float(precisions[recalls >= recall].max())
    raise ValueError(f"unknown PPV method {method!r}; expected one of {PPV_METHODS}")


@dataclass(frozen=True)
class CurveMetrics:
    """AUROC, AUPRC (average precision) and PPV at recall, one value per row of weights."""

    auroc: np.ndarray
    auprc: np.ndarray
    ppv: np.ndarray


def curve_metrics(labels: np.ndarray, scores: np.ndarray, recall: float = 0.9, method: str = "interp") -> CurveMetrics:
    """The three metrics on one data set, computed by scikit-learn (the reference path)."""
    return CurveMetrics(
        auroc=np.array([roc_auc_score(labels, scores)]),
        auprc=np.array([average_precision_score(labels, scores)]),
        ppv=np.array([ppv_at_recall(labels, scores, recall, method)]),
    )


def _interp_rows(x: float, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """``np.interp(x, xp[i], fp[i])`` for every row ``i`` of non-decreasing ``xp`` with ``xp[:, -1] > x``.

    Mirrors numpy's arithmetic (numpy/_core/src/multiarray/compiled_base.c, ``arr_interp``): take the
    last ``j`` with ``xp[j] <= x``; return ``fp[j]`` on an exact hit, else
    ``slope * (x - xp[j]) + fp[j]`` with ``slope = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j])``.
    """
    rows = np.arange(xp.shape[0])
    j = np.count_nonzero(xp <= x, axis=1) - 1
    x0, x1 = xp[rows, j], xp[rows, j + 1]
    y0, y1 = fp[rows, j], fp[rows, j + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (y1 - y0) / (x1 - x0)
        interpolated = slope * (x - x0) + y0
    return np.where(x0 == x, y0, interpolated)


def weighted_curve_metrics(
    labels: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
    recall: float = 0.9,
    method: str = "interp",
    block: int = 200,
) -> CurveMetrics:
    """The three metrics for every row of ``weights`` (n_rows x n_samples, non-negative integers):
    row ``i`` stands for the data set in which sample ``k`` occurs ``weights[i, k]`` times.

    Equal to scikit-learn on the expanded data set (to float rounding, about 1e-16): the samples are
    sorted once, cumulative true/false positive counts are taken at each distinct score as
    ``sklearn.metrics._ranking._binary_clf_curve`` does, and a score absent from a row only repeats
    the previous curve point, which changes none of the three metrics. Rows without a positive or a
    negative sample give NaN AUROC (and NaN AUPRC/PPV without a positive).
    """
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    weights = np.atleast_2d(np.asarray(weights))
    if method not in PPV_METHODS:
        raise ValueError(f"unknown PPV method {method!r}; expected one of {PPV_METHODS}")
    order = np.argsort(scores, kind="mergesort")[::-1]
    sorted_scores = scores[order]
    is_positive = labels[order]
    group_ends = np.r_[np.flatnonzero(np.diff(sorted_scores)), sorted_scores.size - 1]
    parts = [
        _weighted_block(is_positive, weights[start : start + block, order], group_ends, recall, method)
        for start in range(0, weights.shape[0], block)
    ]
    return CurveMetrics(*(np.concatenate([part[k] for part in parts]) for k in range(3)))


def _weighted_block(
    is_positive: np.ndarray, weights: np.ndarray, group_ends: np.ndarray, recall: float, method: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positive_weights = np.where(is_positive, weights, 0)
    tps = np.cumsum(positive_weights, axis=1)[:, group_ends].astype(float)
    fps = np.cumsum(weights - positive_weights, axis=1)[:, group_ends].astype(float)
    n_pos, n_neg = tps[:, -1:], fps[:, -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        # ROC: trapezoids between consecutive (fps, tps) points, starting at the origin.
        fps_prev = np.pad(fps, ((0, 0), (1, 0)))[:, :-1]
        tps_prev = np.pad(tps, ((0, 0), (1, 0)))[:, :-1]
        auroc = np.sum((fps - fps_prev) * (tps + tps_prev), axis=1) / (2.0 * n_pos[:, 0] * n_neg[:, 0])
        # Precision where no sample is above the threshold yet is set to 1: such points repeat
        # sklearn's final (recall 0, precision 1) point and carry no recall step.
        predicted = tps + fps
        precision = np.where(predicted > 0, tps / np.where(predicted > 0, predicted, 1.0), 1.0)
        recalls = tps / n_pos
    recall_steps = np.diff(recalls, axis=1, prepend=0.0)
    auprc = np.sum(recall_steps * precision, axis=1)
    if method == "interp":
        xp = np.hstack([np.zeros((recalls.shape[0], 1)), recalls])
        fp = np.hstack([np.ones((precision.shape[0], 1)), precision])
        ppv = _interp_rows(recall, xp, fp)
    else:
        ppv = np.max(np.where(recalls >= recall, precision, -np.inf), axis=1)
    no_positive = n_pos[:, 0] == 0
    auprc[no_positive] = np.nan
    ppv[no_positive] = np.nan
    return auroc, auprc, ppv
