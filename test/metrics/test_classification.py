"""Classification metrics: hand computations, then isic-challenge-scoring 5.6.0 as the oracle."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from isic_challenge_scoring import metrics as reference
from isic_challenge_scoring.confusion import create_binary_confusion_matrix

from evaluation.metrics.classification import (
    UNDECIDED,
    argmax_labels,
    auc_above_sensitivity,
    average_precision,
    balanced_multiclass_accuracy,
    confusion_metrics,
    curve_metrics,
    macro_mean,
    roc_auc,
)


def test_argmax_labels_marks_tied_maxima_undecided():
    scores = np.array([[0.1, 0.7, 0.2], [0.4, 0.4, 0.2], [0.3, 0.3, 0.3], [0.0, 0.0, 1.0]])
    assert argmax_labels(scores).tolist() == [1, UNDECIDED, UNDECIDED, 2]


def test_balanced_accuracy_by_hand():
    # class 0: 1 of 2 right (the undecided row is wrong), class 1: 1 of 1, class 2: 0 of 1;
    # class 3 has no reference example and is left out: (1/2 + 1 + 0) / 3.
    truth = np.array([0, 0, 1, 2])
    predicted = np.array([0, UNDECIDED, 1, 1])
    assert balanced_multiclass_accuracy(truth, predicted) == pytest.approx(0.5, abs=1e-15)
    # weights 3, 1, 1, 1: class 0 is 3/4 right; a zero weight removes class 2 altogether.
    assert balanced_multiclass_accuracy(truth, predicted, np.array([3.0, 1, 1, 0])) == pytest.approx(
        (3 / 4 + 1) / 2, abs=1e-15
    )
    # a row whose reference label is undecided does not count
    assert balanced_multiclass_accuracy(np.array([0, UNDECIDED]), np.array([0, 1])) == 1.0
    assert math.isnan(balanced_multiclass_accuracy(truth, predicted, np.zeros(4)))


def test_confusion_metrics_by_hand():
    # one column: TP = 1 (row 0), FN = 1 (row 1: 0.5 is not > 0.5), FP = 1 (row 2), TN = 1 (row 3);
    # a second column with no positive at all: sensitivity, ppv and dice are 1.0 (empty denominators).
    truth = np.array([[1, 0], [1, 0], [0, 0], [0, 0]]) > 0.5
    predicted = np.array([[0.9, 0.1], [0.5, 0.2], [0.6, 0.3], [0.1, 0.4]]) > 0.5
    got = confusion_metrics(truth, predicted)
    assert got["accuracy"].tolist() == [0.5, 1.0]
    assert got["sensitivity"].tolist() == [0.5, 1.0]
    assert got["specificity"].tolist() == [0.5, 1.0]
    assert got["dice"].tolist() == [0.5, 1.0]
    assert got["ppv"].tolist() == [0.5, 1.0]
    assert got["npv"].tolist() == [0.5, 1.0]
    weighted = confusion_metrics(truth, predicted, np.array([2.0, 1, 1, 0]))
    assert weighted["accuracy"][0] == pytest.approx(2 / 4) and weighted["npv"][0] == pytest.approx(0 / 1)
    assert weighted["specificity"][0] == 0.0 and weighted["ppv"][0] == pytest.approx(2 / 3)
    assert math.isnan(confusion_metrics(truth, predicted, np.zeros(4))["accuracy"][0])


def test_auc_sens_80_on_a_grid_point():
    # ROC points (fpr, tpr): (0,0) (0,.2) (0,.4) (0,.6) (.2,.6) (.2,.8) (.4,.8) (.6,.8) (.6,1) (.8,1) (1,1);
    # TPR first reaches 0.8 at (.2,.8): area right of it .2*.8 + .2*.8 + 0 + .2 + .2 = 0.72.
    truth = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.3, 0.65, 0.5, 0.4, 0.2, 0.1])
    assert auc_above_sensitivity(truth, scores) == pytest.approx(0.72, abs=1e-15)


def test_auc_sens_80_interpolates_on_a_tied_segment():
    # Positives .9, .5 and negatives .5, .1: ROC (0,0) (0,.5) (.5,1) (1,1). TPR 0.8 falls on the
    # diagonal from (0,.5) to (.5,1) at FPR 0.3; area .2 * (.8 + 1) / 2 + .5 * 1 = 0.68.
    truth = np.array([1, 1, 0, 0])
    scores = np.array([0.9, 0.5, 0.5, 0.1])
    assert auc_above_sensitivity(truth, scores) == pytest.approx(0.68, abs=1e-15)
    # a zero-weighted row is dropped before the curve: the remaining curve is perfect, area 1 x 1
    assert auc_above_sensitivity(truth, scores, np.array([1.0, 0, 1, 1])) == 1.0


def test_degenerate_categories():
    truth, scores = np.zeros(4), np.array([0.1, 0.2, 0.3, 0.4])
    assert math.isnan(auc_above_sensitivity(truth, scores))
    assert math.isnan(auc_above_sensitivity(1 - truth, scores))
    assert math.isnan(roc_auc(truth, scores))
    assert average_precision(truth, scores) == 0.0  # scikit-learn 1.9's value, which the reference reports
    assert math.isnan(auc_above_sensitivity(np.array([1, 0, 1, 0]), scores, np.array([0.0, 1, 0, 1])))
    with pytest.raises(ValueError):
        auc_above_sensitivity(np.array([1, 0]), np.array([0.2, 0.1]), sensitivity=0)


def test_macro_mean_skips_nan():
    assert macro_mean(np.array([0.5, np.nan, 1.0])) == 0.75
    assert math.isnan(macro_mean(np.array([np.nan, np.nan])))


@pytest.mark.parametrize("seed", range(4))
def test_every_metric_equals_the_reference(seed):
    """Random columns with ties, exact 0, 0.5 and 1, and weights with zeros and fractions."""
    rng = np.random.default_rng(seed)
    n, k = 3000, 5
    labels = rng.choice(k, size=n, p=[0.5, 0.3, 0.1, 0.07, 0.03])
    truth = np.eye(k)[labels]
    scores = np.round(rng.dirichlet(np.ones(k), size=n) * 0.6 + truth * rng.random((n, 1)) * 0.4, 2)
    scores[rng.random((n, k)) < 0.02] = 0.5
    scores[rng.random((n, k)) < 0.02] = 1.0
    scores[rng.random(n) < 0.02] = 0.25  # whole rows tied
    weights = rng.choice([0.0, 0.5, 1.0, 2.0], size=n, p=[0.1, 0.2, 0.6, 0.1])
    ours = {**confusion_metrics(truth > 0.5, scores > 0.5, weights), **curve_metrics(truth > 0.5, scores, weights)}
    w = pd.Series(weights)
    for c in range(k):
        t, s = pd.Series(truth[:, c]), pd.Series(scores[:, c])
        cm = create_binary_confusion_matrix(t.gt(0.5).to_numpy(), s.gt(0.5).to_numpy(), weights)
        expected = {
            "accuracy": reference.binary_accuracy(cm),
            "sensitivity": reference.binary_sensitivity(cm),
            "specificity": reference.binary_specificity(cm),
            "dice": reference.binary_dice(cm),
            "ppv": reference.binary_ppv(cm),
            "npv": reference.binary_npv(cm),
            "auc": reference.auc(t, s, w),
            "auc_sens_80": reference.auc_above_sensitivity(t, s, w, 0.8),
            "ap": reference.average_precision(t, s, w),
        }
        for name, value in expected.items():
            assert ours[name][c] == pytest.approx(value, abs=1e-12), (c, name)
    frame_truth = pd.DataFrame(truth, columns=list("ABCDE"))
    frame_scores = pd.DataFrame(scores, columns=list("ABCDE"))
    for weighting in (weights, np.ones(n), (rng.random(n) < 0.05).astype(float)):
        expected = reference.balanced_multiclass_accuracy(frame_truth, frame_scores, pd.Series(weighting))
        got = balanced_multiclass_accuracy(argmax_labels(truth), argmax_labels(scores), weighting)
        assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_auroc_equals_scikit_learn_to_the_last_bit(seed):
    """The catalogue's AUROC restates ``roc_auc_score`` (no scikit-learn import in an evaluation, issue 30):
    equal bit for bit on ties, row weights (zeros included) and both sizes of curve, scikit-learn as the oracle."""
    from sklearn.metrics import roc_auc_score

    from evaluation.metrics.classification import auroc

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    truth = rng.integers(0, 2, n).astype(bool)
    truth[:2] = [True, False]
    scores = rng.integers(0, int(rng.integers(2, 30)), n) / 7.0 if seed % 2 else rng.normal(size=n)
    weight = None if seed % 3 == 0 else rng.uniform(0, 3, n) * (rng.uniform(size=n) > 0.2)
    if weight is not None:
        weight[:2] = [0.7, 1.3]
    expected = roc_auc_score(truth, scores, sample_weight=weight)
    assert auroc(truth, scores, sample_weight=weight) == expected
    assert auroc(truth.tolist(), scores.tolist(), sample_weight=None if weight is None else weight.tolist()) == expected


@pytest.mark.parametrize("seed", range(20))
def test_brier_score_equals_scikit_learn_to_the_last_bit(seed):
    """The catalogue's Brier score restates ``brier_score_loss`` (no scikit-learn import, issue 30)."""
    from sklearn.metrics import brier_score_loss

    from evaluation.metrics.classification import brier_score

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 500))
    truth = rng.integers(0, 2, n).astype(bool)
    truth[0] = True
    probabilities = rng.uniform(size=n) if seed % 2 else np.round(rng.uniform(size=n), 2)
    assert brier_score(truth, probabilities) == brier_score_loss(truth, probabilities, pos_label=True)


@pytest.mark.parametrize("seed", range(20))
def test_balanced_accuracy_of_integer_labels_equals_scikit_learn_to_the_last_bit(seed):
    """Integer labels (ISIC's argmax classes, ``UNDECIDED`` among the predictions) are counted as
    ``balanced_accuracy_score`` counts them, not by it: equal bit for bit under fractional, whole and
    zero row weights and none, scikit-learn as the oracle (labels spread wider than their count: sorted, not
    counted); all-zero weights remain its own error."""
    from sklearn.metrics import balanced_accuracy_score

    from evaluation.metrics.classification import balanced_accuracy

    rng = np.random.default_rng(seed)
    n, k, spread = int(rng.integers(1, 400)), int(rng.integers(1, 10)), [1, 1000][seed % 2]
    truth, predicted = rng.integers(0, k, n) * spread, rng.integers(-1, k, n) * spread
    for weights in (None, rng.random(n), rng.integers(0, 3, n).astype(float), (rng.random(n) * 1e3).round(3)):
        if weights is not None and not weights.any():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = balanced_accuracy_score(truth, predicted, sample_weight=weights)
        assert balanced_accuracy(truth, predicted, sample_weight=weights) == expected
        assert balanced_multiclass_accuracy(truth, predicted, weights) == expected
    with pytest.raises(ValueError, match="at least one non-zero"):
        balanced_accuracy(truth, predicted, sample_weight=np.zeros(n))


@pytest.mark.parametrize("seed", range(60))
def test_label_metrics_equal_scikit_learn_to_the_last_bit(seed):
    """Accuracy, balanced accuracy (with and without row weights) and Cohen's kappa (unweighted, linear,
    quadratic; labels declared in an order of their own, some never seen) are computed as scikit-learn
    1.9.1 computes them, not by it (no scikit-learn import in an evaluation, issue 30): equal bit for bit on
    strings, integers with ``UNDECIDED`` and booleans of 1 to 1,000 samples, scikit-learn as the oracle."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, cohen_kappa_score

    from evaluation.metrics.classification import accuracy, balanced_accuracy, cohen_kappa

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 1001)) if seed % 3 else int(rng.integers(1, 8)), int(rng.integers(1, 7))
    truth, predicted = rng.integers(0, k, n), rng.integers(-1 if seed % 2 else 0, k, n)
    declared = rng.permutation(np.arange(-1, k + 2))  # every label, in an order of its own, two never used
    if seed % 4 == 1:
        names = np.array(["T4", "T1", "<missing>", "T3", "T2", "T0", "TX", "T5", "N0"])
        truth, predicted, declared = names[truth + 1], names[predicted + 1], names[declared + 1]
    elif seed % 4 == 2:
        truth, predicted, declared = truth % 2 == 0, predicted % 2 == 0, np.array([True, False])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's warnings on a class predicted but never true
        assert accuracy(truth, predicted) == accuracy_score(truth, predicted)
        assert balanced_accuracy(truth, predicted) == balanced_accuracy_score(truth, predicted)
        for weights in (rng.random(n) * (rng.random(n) > 0.2), rng.integers(0, 3, n).astype(float)):
            if weights.any():
                expected = balanced_accuracy_score(truth, predicted, sample_weight=weights)
                assert _same_float(balanced_accuracy(truth, predicted, sample_weight=weights), expected)
        if np.unique(np.r_[truth, predicted]).size > 1:
            for kappa_weights in (None, "linear", "quadratic"):
                expected = cohen_kappa_score(truth, predicted, labels=declared, weights=kappa_weights)
                assert cohen_kappa(truth, predicted, kappa_weights, labels=declared) == expected
                expected = cohen_kappa_score(truth, predicted, weights=kappa_weights)
                assert cohen_kappa(truth, predicted, kappa_weights) == expected


def _same_float(ours: float, theirs: float) -> bool:
    return ours == theirs or (math.isnan(ours) and math.isnan(theirs))


def test_labels_scikit_learn_refuses_are_refused():
    """scikit-learn's ``_check_targets`` refuses fractional numbers and strings mixed with numbers as class
    labels; so do the restated label metrics (else the numbers would be silently wrong)."""
    from evaluation.metrics.classification import accuracy, balanced_accuracy, cohen_kappa

    for metric in (accuracy, balanced_accuracy, cohen_kappa):
        with pytest.raises(ValueError, match="fractional"):
            metric(np.array([0.5, 1.0]), np.array([1.0, 1.0]))
        with pytest.raises(ValueError, match="mix strings and numbers"):
            metric(np.array(["1", "0"]), np.array([1, 0]))
