"""PPV at recall and the vectorised bootstrap metrics against scikit-learn and the official code."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score

from evaluation.metrics.precision_recall import (
    _interp_rows,
    curve_metrics,
    grouped_curve_metrics,
    ppv_at_recall,
)

# The four PPV@90 vectors of issue 2, with the values the official evaluate.py computes.
OFFICIAL_PPV90 = [
    (
        [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.3, 0.1],
        [
            0.88,
            0.72,
            0.5,
            0.45,
            0.4,
            0.35,
            0.33,
            0.32,
            0.31,
            0.29,
            0.28,
            0.27,
            0.26,
            0.25,
            0.2,
            0.15,
            0.12,
            0.11,
            0.05,
            0.01,
        ],
        0.333333,
    ),
    ([0.9, 0.8, 0.7, 0.6, 0.2], [0.85, 0.5, 0.4, 0.3, 0.25, 0.15, 0.1, 0.05, 0.04, 0.03], 0.472222),
    ([0.9] * 8 + [0.5] * 2, [0.5] * 3 + [0.1] * 7, 0.884615),
    (
        [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.05],
        [0.9, 0.89, 0.5, 0.4, 0.3, 0.2, 0.1, 0.08, 0.07, 0.06],
        0.473684,
    ),
]


def _data(positives, negatives):
    scores = np.array(positives + negatives)
    labels = np.array([1] * len(positives) + [0] * len(negatives))
    return labels, scores


@pytest.mark.parametrize(("positives", "negatives", "expected"), OFFICIAL_PPV90)
def test_ppv90_official_vectors(positives, negatives, expected):
    labels, scores = _data(positives, negatives)
    assert ppv_at_recall(labels, scores) == pytest.approx(expected, abs=5e-7)
    weighted = grouped_curve_metrics(labels, scores, np.arange(labels.size), np.ones((1, labels.size), dtype=int))
    assert weighted.ppv[0] == ppv_at_recall(labels, scores)


def test_ppv90_hand_computed_recall_exactly_at_target():
    # 10 positives; the 9th positive is ranked after 2 negatives: at recall 0.9 the curve has the
    # points (0.9, 9/11) and, one threshold lower, (0.9, 9/12) (a negative between the 9th and
    # 10th positive). np.interp takes the LAST point with recall 0.9: 9/12 = 0.75.
    scores = np.array([1.0, 0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.7, 0.6, 0.2, 0.9, 0.8, 0.5, 0.1])
    labels = np.array([1] * 10 + [0] * 4)
    assert ppv_at_recall(labels, scores) == 0.75
    # max_precision takes the best point with recall >= 0.9: 9/11.
    assert ppv_at_recall(labels, scores, method="max_precision") == pytest.approx(9 / 11)


def test_interp_rows_is_bitwise_np_interp():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(2, 12))
        xp = np.sort(np.round(rng.random(n), 1))
        xp[-1] = 1.0
        xp[0] = 0.0
        fp = rng.random(n)
        assert _interp_rows(0.9, xp[None], fp[None])[0] == np.interp(0.9, xp, fp)


def _expanded_reference(labels, scores, weights_row):
    index = np.repeat(np.arange(labels.size), weights_row)
    y, s = labels[index], scores[index]
    precisions, recalls, _ = precision_recall_curve(y, s)
    return (
        roc_auc_score(y, s),
        average_precision_score(y, s),
        float(np.interp(0.9, recalls[::-1], precisions[::-1])),
        float(precisions[recalls >= 0.9].max()),
    )


@pytest.mark.parametrize("seed", range(6))
def test_weighted_metrics_equal_sklearn_on_expanded_samples(seed):
    rng = np.random.default_rng(seed)
    n = 60
    labels = (rng.random(n) < 0.3).astype(int)
    labels[:2] = [0, 1]
    scores = np.round(rng.random(n) * 0.5 + 0.4 * labels, 1 + seed % 3)  # many ties
    weights = rng.integers(0, 4, size=(25, n))
    weights[:, :2] = 1  # both classes present in every row
    interp = grouped_curve_metrics(labels, scores, np.arange(labels.size), weights)
    best = grouped_curve_metrics(labels, scores, np.arange(labels.size), weights, method="max_precision")
    for row in range(weights.shape[0]):
        auroc, auprc, ppv, ppv_max = _expanded_reference(labels, scores, weights[row])
        assert interp.auroc[row] == pytest.approx(auroc, abs=1e-12)
        assert interp.auprc[row] == pytest.approx(auprc, abs=1e-12)
        assert interp.ppv[row] == pytest.approx(ppv, abs=1e-12)
        assert best.ppv[row] == pytest.approx(ppv_max, abs=1e-12)


def test_weighted_metrics_blocks_change_results_only_by_rounding():
    rng = np.random.default_rng(3)
    labels = (rng.random(40) < 0.5).astype(int)
    scores = rng.random(40)
    weights = rng.integers(0, 3, size=(50, 40))
    one = grouped_curve_metrics(labels, scores, np.arange(labels.size), weights, block=7)
    other = grouped_curve_metrics(labels, scores, np.arange(labels.size), weights, block=1000)
    for a, b in zip((one.auroc, one.auprc, one.ppv), (other.auroc, other.auprc, other.ppv), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)


def test_rows_without_positives_are_nan():
    labels = np.array([0, 1, 0])
    scores = np.array([0.1, 0.5, 0.3])
    result = grouped_curve_metrics(labels, scores, np.arange(labels.size), np.array([[1, 0, 1]]))
    assert np.isnan(result.auroc[0]) and np.isnan(result.auprc[0]) and np.isnan(result.ppv[0])


@pytest.mark.parametrize("seed", range(8))
def test_full_dataset_metrics_equal_sklearn_without_importing_it(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 400))
    labels = (rng.random(n) < 0.3).astype(int)
    labels[:2] = [0, 1]
    scores = np.round(rng.random(n) * 0.6 + 0.3 * labels, seed % 4 + 1)  # ties within and across classes
    result = curve_metrics(labels, scores)
    best = curve_metrics(labels, scores, method="max_precision")
    precisions, recalls, _ = precision_recall_curve(labels, scores)
    assert result.auroc[0] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert result.auprc[0] == pytest.approx(average_precision_score(labels, scores), abs=1e-12)
    assert result.ppv[0] == np.interp(0.9, recalls[::-1], precisions[::-1])  # bit for bit
    assert best.ppv[0] == pytest.approx(precisions[recalls >= 0.9].max(), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_grouped_weights_equal_sklearn_on_expanded_patients(seed):
    """Patients (groups of frames, both classes possible) drawn with replacement, as the RARE25 bootstrap."""
    rng = np.random.default_rng(200 + seed)
    n = 120
    group = np.sort(rng.integers(0, 30, n))
    labels = ((rng.random(30) < 0.4)[group] & (rng.random(n) < 0.7)).astype(int)
    labels[:2], group[:2] = [0, 1], [0, 0]
    scores = np.round(rng.random(n) * 0.5 + 0.4 * labels, 1 + seed % 3)
    counts = rng.integers(0, 4, size=(20, 30))
    counts[:, 0] = 1  # both classes in every row
    interp = grouped_curve_metrics(labels, scores, group, counts)
    best = grouped_curve_metrics(labels, scores, group, counts, method="max_precision")
    for row in range(counts.shape[0]):
        auroc, auprc, ppv, ppv_max = _expanded_reference(labels, scores, counts[row][group])
        assert interp.auroc[row] == pytest.approx(auroc, abs=1e-12)
        assert interp.auprc[row] == pytest.approx(auprc, abs=1e-12)
        assert interp.ppv[row] == pytest.approx(ppv, abs=1e-12)
        assert best.ppv[row] == pytest.approx(ppv_max, abs=1e-12)


def test_product_module_does_not_import_sklearn():
    import subprocess
    import sys

    code = "import sys, evaluation.metrics.precision_recall; print('sklearn' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
