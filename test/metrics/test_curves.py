"""evaluation/metrics/curves.py against its oracle, scikit-learn 1.9.1 (requirements-dev.txt): every curve and
area equal (``==``, NaN where both are NaN), not approximately, on random inputs (ties, integer-valued scores,
row weights with zeros, one class, 1 to 1,000 samples) and on the edge cases the callers reach."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn import metrics as oracle

from evaluation.metrics import curves


def test_the_oracle_is_the_version_the_module_restates():
    assert sklearn.__version__ == "1.9.1"


def _same(ours: np.ndarray | float, theirs: np.ndarray | float) -> bool:
    """Equal element for element (NaN equal to NaN), as float64 arrays of one shape; or both refused."""
    if ours is ValueError or theirs is ValueError:
        return ours is theirs
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    return ours.shape == theirs.shape and bool(np.all((ours == theirs) | (np.isnan(ours) & np.isnan(theirs))))


def random_case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(truth, scores, sample_weight) of one seed: sizes 1..1,000; bool, integer or float 0/1 truth, now and
    then of one class; normal, rounded (ties) or integer-valued scores; no weights, fractional weights with
    zeros, or integer weights with zeros (at least one non-zero)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 1001)) if seed % 4 else int(rng.integers(1, 12))
    truth = rng.random(n) < rng.uniform(0.05, 0.95)
    if seed % 9 == 1:
        truth[:] = seed % 2 == 0  # one class only
    truth = [truth, truth.astype(int), truth.astype(float)][seed % 3]
    kind = seed % 5
    if kind == 0:
        scores = rng.normal(size=n)
    elif kind == 1:
        scores = np.round(rng.uniform(size=n), int(rng.integers(1, 3)))  # many ties
    elif kind == 2:
        scores = rng.integers(0, int(rng.integers(1, 20)), n).astype(float)  # integer-valued
    elif kind == 3:
        scores = rng.integers(-5, 5, n)  # integers
    else:
        scores = rng.normal(size=n) + 0.7 * truth
    weight = None
    if seed % 3 == 1:
        weight = rng.uniform(0, 3, n) * (rng.uniform(size=n) > 0.25)
    elif seed % 3 == 2:
        weight = rng.integers(0, 4, n).astype(float)
    if weight is not None and not weight.any():
        weight[int(rng.integers(n))] = 1.0
    return truth, scores, weight


def _quietly(function, *arguments, **keywords):
    """``function``'s value, or the ``ValueError`` it raises (both then refuse the input)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's warnings on one class
        try:
            return function(*arguments, **keywords)
        except ValueError:
            return ValueError


SEEDS = range(300)


@pytest.mark.parametrize("seed", SEEDS)
def test_counts_and_curves_equal_scikit_learn(seed):
    truth, scores, weight = random_case(seed)
    _, fps, _, tps, thresholds = oracle.confusion_matrix_at_thresholds(truth, scores, sample_weight=weight)
    ours = curves.threshold_counts(truth, scores, weight)
    assert _same(ours[0], fps) and _same(ours[1], tps) and _same(ours[2], thresholds)
    for drop in (True, False):
        expected = _quietly(oracle.roc_curve, truth, scores, sample_weight=weight, drop_intermediate=drop)
        got = curves.roc_curve(truth, scores, weight, drop_intermediate=drop)
        assert all(_same(g, e) for g, e in zip(got, expected, strict=True)), drop
        assert got[2][0] == np.inf
    expected = _quietly(oracle.precision_recall_curve, truth, scores, sample_weight=weight)
    got = curves.precision_recall_curve(truth, scores, weight)
    assert all(_same(g, e) for g, e in zip(got, expected, strict=True))


@pytest.mark.parametrize("seed", SEEDS)
def test_areas_equal_scikit_learn(seed):
    truth, scores, weight = random_case(seed)
    expected = _quietly(oracle.average_precision_score, truth, scores, sample_weight=weight)
    assert _same(curves.average_precision_score(truth, scores, weight), expected)
    for max_fpr in (None, 1.0, 0.1, 0.5, 0.8):
        expected = _quietly(oracle.roc_auc_score, truth, scores, sample_weight=weight, max_fpr=max_fpr)
        assert _same(_quietly(curves.roc_auc_score, truth, scores, weight, max_fpr), expected), max_fpr
    fpr, tpr, _ = _quietly(oracle.roc_curve, truth, scores, sample_weight=weight, drop_intermediate=False)
    if not np.isnan(fpr).any():
        assert _same(curves.auc(fpr, tpr), oracle.auc(fpr, tpr))
    precision, recall, _ = _quietly(oracle.precision_recall_curve, truth, scores, sample_weight=weight)
    assert _same(curves.auc(recall, precision), oracle.auc(recall, precision))  # (decreasing x)


@pytest.mark.parametrize("seed", range(40))
def test_counts_sorted_as_packed_numbers_equal_scikit_learn(seed):
    """Unweighted counts from one sort of the scores' bits with each row's class packed in (``_ranked``: scores of
    one sign within a power of two's range, e.g. probabilities): probabilities, negative scores, ties, one score; of
    both signs or from -1e300 to 1e300, the argsort, the same counts."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 2000))
    truth = rng.random(n) < 0.4
    scores = [np.round(rng.dirichlet(np.ones(3), n)[:, 0], int(rng.integers(1, 7))), -(0.05 + rng.random(n)).round(2),
              np.full(n, 0.25), rng.normal(size=n), rng.uniform(-1e300, 1e300, n)][seed % 5]  # fmt: skip
    assert (curves._ranked(scores, truth) is None) == (seed % 5 >= 3)
    _, fps, _, tps, thresholds = oracle.confusion_matrix_at_thresholds(truth, scores)
    ours = curves.threshold_counts(truth, scores)
    assert _same(ours[0], fps) and _same(ours[1], tps) and _same(ours[2], thresholds)
    assert _same(curves.roc_auc_score(truth, scores), _quietly(oracle.roc_auc_score, truth, scores))


def test_edge_cases_equal_scikit_learn():
    """One sample, no positive, no negative, every score tied, positives only zero-weighted."""
    cases = [
        (np.array([1]), np.array([0.3]), None),
        (np.array([0]), np.array([0.3]), None),
        (np.array([0, 0, 0]), np.array([0.1, 0.5, 0.5]), None),
        (np.array([1, 1, 1]), np.array([0.1, 0.5, 0.5]), np.array([1.0, 0.0, 2.0])),
        (np.array([0, 1, 0, 1]), np.full(4, 0.5), None),
        (np.array([0, 1, 0, 1]), np.array([0.2, 0.9, 0.4, 0.1]), np.array([1.0, 0.0, 2.0, 0.0])),
        (np.array([0, 1, 0, 1]), np.array([0.2, 0.9, 0.4, 0.1]), np.array([0.0, 1.0, 0.0, 1.0])),
        (np.array([True, False]), np.array([-0.0, 0.0]), None),
    ]
    for truth, scores, weight in cases:
        for drop in (True, False):
            expected = _quietly(oracle.roc_curve, truth, scores, sample_weight=weight, drop_intermediate=drop)
            got = curves.roc_curve(truth, scores, weight, drop_intermediate=drop)
            assert all(_same(g, e) for g, e in zip(got, expected, strict=True)), (truth, scores, weight)
        expected = _quietly(oracle.precision_recall_curve, truth, scores, sample_weight=weight)
        got = curves.precision_recall_curve(truth, scores, weight)
        assert all(_same(g, e) for g, e in zip(got, expected, strict=True))
        expected = _quietly(oracle.average_precision_score, truth, scores, sample_weight=weight)
        assert _same(curves.average_precision_score(truth, scores, weight), expected)
        for max_fpr in (None, 0.3):
            expected = _quietly(oracle.roc_auc_score, truth, scores, sample_weight=weight, max_fpr=max_fpr)
            assert _same(_quietly(curves.roc_auc_score, truth, scores, weight, max_fpr), expected)


def test_what_scikit_learn_refuses_is_refused():
    with pytest.raises(ValueError, match="at least 2 points"):
        curves.auc([0.5], [1.0])
    with pytest.raises(ValueError, match="neither increasing nor decreasing"):
        curves.auc([0.0, 1.0, 0.5], [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="inconsistent numbers"):
        curves.roc_curve([0, 1], [0.5])
    with pytest.raises(ValueError, match="at least one sample"):
        curves.roc_curve([0, 1], [0.2, 0.5], sample_weight=[0.0, 0.0])
    with pytest.raises(ValueError, match="max_fpr"):
        curves.roc_auc_score([0, 1], [0.2, 0.5], max_fpr=1.5)
