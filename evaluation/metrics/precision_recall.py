"""Binary-classifier curve metrics: PPV at a recall level, AUROC and AUPRC, for one data set or for a
whole bootstrap at once from integer weights of groups of samples (patients), without scikit-learn.

PPV at recall follows TUE-VCA/Grand-Challenge-RARE25,
open-development-phase/example-evaluation-method/evaluate.py: ``np.interp(recall,
recalls[::-1], precisions[::-1])`` on ``sklearn.metrics.precision_recall_curve``. Its quirks are
kept: with several curve points at exactly the target recall it returns the lowest of their
precisions (``np.interp`` takes the last equal abscissa), and with tied scores it interpolates
between points, so it may exceed any achievable precision. ``method="max_precision"`` gives the
largest precision among the curve points whose recall reaches the target instead.

All three metrics depend on the curve only at the distinct scores of the positive samples: AUROC is
the Mann-Whitney count (each positive against the negatives below it, ties half), AUPRC sums recall
steps times precision, and the PPV needs two neighbouring curve points. At the k-th highest distinct
positive score a data set has TP_k positives at or above it, FA_k negatives at or above it and FB_k
negatives strictly above it; each is a sum over groups of (draws of the group) x (its samples counted
there), so a bootstrap of groups is one matrix product of the draw counts with a small table built
from one sort of the scores. The counts are integers, so the products are exact (float32 while every
row total stays below 2**24, float64 otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.metrics.curves import precision_recall_curve

_BLOCK_ELEMENTS = 4_000_000  # iterations x curve counts computed together (a few float64 arrays of 32 MB)
PPV_METHODS = ("interp", "max_precision")


def ppv_at_recall(labels: np.ndarray, scores: np.ndarray, recall: float = 0.9, method: str = "interp") -> float:
    """Precision (PPV) at ``recall`` on ``sklearn.metrics.precision_recall_curve`` (``curves``, equal to it to the
    last bit): the official definition itself, the reference the counting code below is tested against."""
    precisions, recalls, _ = precision_recall_curve(labels, scores)
    if method == "interp":
        return float(np.interp(recall, recalls[::-1], precisions[::-1]))
    if method == "max_precision":
        return float(precisions[recalls >= recall].max())
    raise ValueError(f"unknown PPV method {method!r}; expected one of {PPV_METHODS}")


@dataclass(frozen=True, eq=False)
class CurveMetrics:
    """AUROC, AUPRC (average precision) and PPV at recall, one value per row of weights."""

    auroc: np.ndarray
    auprc: np.ndarray
    ppv: np.ndarray


def curve_metrics(labels: np.ndarray, scores: np.ndarray, recall: float = 0.9, method: str = "interp") -> CurveMetrics:
    """The three metrics on one data set (every sample once)."""
    labels = np.asarray(labels)
    return grouped_curve_metrics(labels, scores, np.zeros(labels.size, dtype=np.int64), np.ones((1, 1)), recall, method)


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


def grouped_curve_metrics(
    labels: np.ndarray,
    scores: np.ndarray,
    group: np.ndarray,
    weights: np.ndarray,
    recall: float = 0.9,
    method: str = "interp",
    block: int | None = None,
) -> CurveMetrics:
    """The three metrics for every row of ``weights`` (n_rows x n_groups, non-negative integers): row
    ``i`` stands for the data set in which every sample of group ``g`` (``group[k]`` is sample k's
    group) occurs ``weights[i, g]`` times.

    Equal to scikit-learn on the expanded data set (``roc_auc_score``, ``average_precision_score``,
    PPV on ``precision_recall_curve``) to float rounding, about 1e-16, and to the bit for the
    interpolated PPV of a single data set. Rows without a positive or a negative sample give NaN
    AUROC (and NaN AUPRC/PPV without a positive). ``block`` rows are computed together (default:
    about ``_BLOCK_ELEMENTS`` counts per block).
    """
    if method not in PPV_METHODS:
        raise ValueError(f"unknown PPV method {method!r}; expected one of {PPV_METHODS}")
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    weights = np.atleast_2d(np.asarray(weights))
    tables = _count_tables(labels, scores, group, weights.shape[1])
    largest_row = float(weights.sum(axis=1, dtype=np.float64).max(initial=0)) * max(1, int(np.bincount(group).max()))
    dtype = np.float32 if largest_row < 2**24 else np.float64  # integer sums stay exact
    if block is None:
        block = max(1, _BLOCK_ELEMENTS // (3 * tables.positives.shape[1] + 1))
    parts = [
        _curve_block(*_counts(weights[start : start + block].astype(dtype), tables), recall, method)
        for start in range(0, weights.shape[0], block)
    ]
    return CurveMetrics(*(np.concatenate([part[k] for part in parts]) for k in range(3)))


@dataclass(frozen=True, eq=False)
class _Tables:
    """Per-group counts at the K distinct positive scores, highest first, each for the groups that have
    such samples: positives at or above (TP), negatives at or above (FA) plus all negatives (last
    column), negatives tied with the score (FA - tied = negatives strictly above)."""

    positive_groups: np.ndarray
    positives: np.ndarray
    negative_groups: np.ndarray
    negatives: np.ndarray
    tied_groups: np.ndarray
    tied: np.ndarray


def _table(group: np.ndarray, column: np.ndarray, width: int, cumulative: bool) -> tuple[np.ndarray, np.ndarray]:
    """(groups present, their count per column) for samples of ``group`` at ``column`` (cumulated along
    the columns when asked); a column index equal to ``width`` is counted nowhere."""
    present, row = np.unique(group, return_inverse=True)
    table = np.zeros((present.size, width + 1), dtype=np.int64)
    np.add.at(table, (row, column), 1)
    if cumulative:
        np.cumsum(table, axis=1, out=table)
    return present, table[:, :width]


def _count_tables(labels: np.ndarray, scores: np.ndarray, group: np.ndarray, n_groups: int) -> _Tables:
    descending = -np.unique(-scores[labels])
    k = descending.size
    above = np.searchsorted(-descending, -scores, "left")  # distinct positive scores strictly above each sample
    at_or_above = np.searchsorted(-descending, -scores, "right")
    positive, negative = labels, ~labels
    tied = negative & (at_or_above > above)
    positive_groups, positives = _table(group[positive], above[positive], k, cumulative=True)
    negative_groups, negatives = _table(group[negative], above[negative], k + 1, cumulative=True)
    negatives[:, k] = np.bincount(group[negative], minlength=n_groups)[negative_groups]
    tied_groups, tied_counts = _table(group[tied], above[tied], k, cumulative=False)
    return _Tables(positive_groups, positives, negative_groups, negatives, tied_groups, tied_counts)


def _counts(weights: np.ndarray, tables: _Tables) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per weight row, in float64: TP, FA and the negatives strictly above each score (K columns each), and all
    the negatives (FA and the total are views of one product: no stacked copy of the counts)."""
    tps = weights[:, tables.positive_groups] @ tables.positives.astype(weights.dtype)
    negatives = (weights[:, tables.negative_groups] @ tables.negatives.astype(weights.dtype)).astype(float)
    tied = weights[:, tables.tied_groups] @ tables.tied.astype(weights.dtype)
    k = tps.shape[1]
    return tps.astype(float), negatives[:, :k], negatives[:, :k] - tied, negatives[:, k]


def _precision(tp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """tp / (tp + fp), and 1 where nothing is predicted positive (scikit-learn's final curve point)."""
    predicted = tp + fp
    return np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1.0), 1.0)


def _curve_block(
    tps: np.ndarray, fa: np.ndarray, fb: np.ndarray, n_neg: np.ndarray, recall: float, method: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The metrics from per-row counts as :func:`_counts` returns them."""
    k = tps.shape[1]
    n_pos = tps[:, -1] if k else np.zeros(tps.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.diff(tps, axis=1, prepend=0.0)
        # each new positive: the negatives below it, ties half: (2N - FA - FB) / 2
        auroc = np.sum(steps * (2.0 * n_neg[:, None] - fa - fb), axis=1) / (2.0 * n_pos * n_neg)
        recalls = tps / n_pos[:, None]
        precision = _precision(tps, fa)
        auprc = np.sum(np.diff(recalls, axis=1, prepend=0.0) * precision, axis=1)
        if method == "interp" and k:
            # np.interp takes the last curve point with recall <= target, (TP_j, FB_j+1), and the next one
            rows = np.arange(tps.shape[0])
            last = np.count_nonzero(recalls <= recall, axis=1) - 1
            below = np.where(last >= 0, tps[rows, np.maximum(last, 0)], 0.0)
            xp = np.stack([np.where(last >= 0, recalls[rows, np.maximum(last, 0)], 0.0), recalls[rows, last + 1]], 1)
            fp = np.stack([_precision(below, fb[rows, last + 1]), precision[rows, last + 1]], 1)
            ppv = _interp_rows(recall, xp, fp)
        else:
            ppv = np.max(np.where(recalls >= recall, precision, -np.inf), axis=1, initial=-np.inf)
    no_positive = n_pos == 0
    auprc[no_positive] = np.nan
    ppv[no_positive] = np.nan
    return auroc, auprc, ppv
