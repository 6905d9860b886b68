"""Catalogue classification metrics against scikit-learn, MetricsReloaded and hand computations.

MetricsReloaded (github Project-MONAI/MetricsReloaded, commit cb38dfc, not on PyPI) was run from its
repository on ``catalogue_fixtures``; the numbers are written below with the class and method used:
``MetricsReloaded/metrics/calibration_measures.py`` ``CalibrationMeasures(np.stack([1 - s, s], 1), t,
dict_args={"bins_ece": M}).expectation_calibration_error()`` and, on the 3-class case,
``.class_wise_expectation_calibration_error()`` (10 bins), and its binary ECE on (argmax correct,
max probability) for the top-label ECE;
``MetricsReloaded/metrics/prob_pairwise_measures.py`` ``ProbabilityPairwiseMeasures(s, t, dict_args=
{"value_specificity": v, "value_sensitivity": v}).sensitivity_at_specificity()`` /
``.specificity_at_sensitivity()``; ``MetricsReloaded/metrics/pairwise_measures.py``
``MultiClassPairwiseMeasures(pred, ref, [0, 1, 2]).balanced_accuracy()`` and, on the ordinal case,
``.weighted_cohens_kappa()`` with ``dict_args={"weights": W}`` for W = 1 - I, |i - j| and (i - j)².
``catalogue_reference_numbers.py`` reprints them.
"""

from __future__ import annotations

import numpy as np
import pytest
from metrics.catalogue_fixtures import binary_case, multiclass_case, ordinal_case
from sklearn.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    brier_score_loss,
    cohen_kappa_score,
    roc_auc_score,
    roc_curve,
)

from evaluation.metrics.classification import (
    auroc,
    balanced_accuracy,
    binary_average_precision,
    brier_score,
    cohen_kappa,
    expected_calibration_error,
    one_vs_rest,
    sensitivity,
    sensitivity_at_specificity,
    specificity,
    specificity_at_sensitivity,
    top_label_calibration_error,
)

MR_ECE = {5: 0.11674999999999995, 10: 0.20725, 15: 0.21225}
MR_SENS_AT_SPEC = {0.5: 0.8125, 0.8: 0.5, 0.9: 0.5}
MR_SPEC_AT_SENS = {0.5: 0.9166666666666666, 0.8: 0.5, 0.9: 0.4166666666666667}
MR_CLASSWISE_ECE = 0.15757481727196018
MR_TOP_LABEL_ECE = 0.2323975311172312  # expectation_calibration_error of (argmax correct, max probability)
MR_BALANCED_ACCURACY = 0.6888888888888888
MR_KAPPA = {None: 0.37869822485207094, "linear": 0.574468085106383, "quadratic": 0.7342781222320638}


def test_curve_metrics_equal_sklearn():
    truth, scores = binary_case()
    assert auroc(truth, scores) == pytest.approx(roc_auc_score(truth, scores), abs=1e-12)
    assert binary_average_precision(truth, scores) == pytest.approx(average_precision_score(truth, scores), abs=1e-12)
    assert brier_score(truth, scores) == pytest.approx(brier_score_loss(truth, scores), abs=1e-12)


def test_threshold_rates_equal_sklearn_roc_points():
    truth, scores = binary_case()
    fpr, tpr, thresholds = roc_curve(truth, scores, drop_intermediate=False)
    for f, t, threshold in zip(fpr[1:], tpr[1:], thresholds[1:], strict=True):
        assert sensitivity(truth, scores, threshold) == pytest.approx(t, abs=1e-12)
        assert specificity(truth, scores, threshold) == pytest.approx(1 - f, abs=1e-12)
    # the target metrics as a brute force over scikit-learn's operating points
    for target in (0.0, 0.3, 0.5, 0.75, 0.8, 0.9, 1.0):
        assert sensitivity_at_specificity(truth, scores, target) == pytest.approx(tpr[1 - fpr >= target].max())
        assert specificity_at_sensitivity(truth, scores, target) == pytest.approx((1 - fpr)[tpr >= target].max())


@pytest.mark.parametrize("target", sorted(MR_SENS_AT_SPEC))
def test_targets_equal_metrics_reloaded(target):
    truth, scores = binary_case()
    assert sensitivity_at_specificity(truth, scores, target) == pytest.approx(MR_SENS_AT_SPEC[target], abs=1e-12)
    assert specificity_at_sensitivity(truth, scores, target) == pytest.approx(MR_SPEC_AT_SENS[target], abs=1e-12)


@pytest.mark.parametrize("n_bins", sorted(MR_ECE))
def test_ece_equals_metrics_reloaded(n_bins):
    truth, scores = binary_case()
    assert expected_calibration_error(truth, scores, n_bins) == pytest.approx(MR_ECE[n_bins], abs=1e-12)


def test_class_wise_ece_and_balanced_accuracy_equal_metrics_reloaded():
    truth, probabilities = multiclass_case()
    macro = one_vs_rest(expected_calibration_error, truth, probabilities, [0, 1, 2]).mean()
    assert macro == pytest.approx(MR_CLASSWISE_ECE, abs=1e-12)
    top_label = top_label_calibration_error(truth, probabilities, [0, 1, 2])
    assert top_label == pytest.approx(MR_TOP_LABEL_ECE, abs=1e-12)
    predicted = probabilities.argmax(axis=1)
    assert balanced_accuracy(truth, predicted) == pytest.approx(MR_BALANCED_ACCURACY, abs=1e-12)
    assert balanced_accuracy(truth, predicted) == pytest.approx(balanced_accuracy_score(truth, predicted), abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_equals_sklearn_and_metrics_reloaded(weights):
    truth, predicted = ordinal_case()
    expected = cohen_kappa_score(truth, predicted, weights=weights)
    assert cohen_kappa(truth, predicted, weights) == pytest.approx(expected, abs=1e-12)
    assert cohen_kappa(truth, predicted, weights) == pytest.approx(MR_KAPPA[weights], abs=1e-12)


def test_per_class_one_vs_rest_equals_sklearn():
    truth, probabilities = multiclass_case()
    classes = [0, 1, 2]
    per_class = one_vs_rest(auroc, truth, probabilities, classes)
    expected = [roc_auc_score(truth == c, probabilities[:, c]) for c in classes]
    np.testing.assert_allclose(per_class, expected, rtol=0, atol=1e-12)
    macro = roc_auc_score(truth, probabilities, multi_class="ovr", average="macro")
    assert per_class.mean() == pytest.approx(macro, abs=1e-12)
    ap = one_vs_rest(binary_average_precision, truth, probabilities, classes)
    np.testing.assert_allclose(
        ap, [average_precision_score(truth == c, probabilities[:, c]) for c in classes], atol=1e-12
    )
    with pytest.raises(ValueError, match="columns"):
        one_vs_rest(auroc, truth, probabilities, [0, 1])


def test_ece_binning_by_hand():
    # 2 bins: (0, .5] holds 0 (joins the first bin), .5, .2 with labels 0, 1, 0 -> |1/3 - .7/3| = .1;
    # (.5, 1] holds .6, 1.0 with labels 1, 1 -> |2/2 - 1.6/2| = .2. ECE = 3/5 * .1 + 2/5 * .2 = .14.
    truth = np.array([0, 1, 0, 1, 1])
    probabilities = np.array([0.0, 0.5, 0.2, 0.6, 1.0])
    assert expected_calibration_error(truth, probabilities, 2) == pytest.approx(0.14, abs=1e-15)
    # 0.3 sits on an edge (linspace(0, 1, 11)[3] == 0.30000000000000004): bin (0.2, 0.3]
    assert expected_calibration_error(np.array([0]), np.array([0.3]), 10) == pytest.approx(0.3, abs=1e-15)
    assert expected_calibration_error(np.array([1, 0]), np.array([1.0, 0.0])) == 0.0


def test_edge_cases_by_hand():
    ones, zeros = np.ones(4, dtype=int), np.zeros(4, dtype=int)
    scores = np.array([0.2, 0.4, 0.6, 0.8])
    assert auroc(ones, scores) == 0.5 and auroc(zeros, scores, single_class=0.0) == 0.0
    assert binary_average_precision(zeros, scores) == 0.0
    assert binary_average_precision(zeros, scores, no_positive=1.0) == 1.0
    assert sensitivity(zeros, scores) == 1.0 and specificity(ones, scores, empty=0.0) == 0.0
    assert sensitivity(ones, scores, 0.5) == 0.5 and specificity(zeros, scores, 0.5) == 0.5
    # without negatives, every threshold qualifies (specificity = empty = 1): sensitivity 1
    assert sensitivity_at_specificity(ones, scores, 0.9) == 1.0
    assert sensitivity_at_specificity(ones, scores, 0.9, empty=0.0) == 0.0  # no threshold reaches 0.9
    assert specificity_at_sensitivity(zeros, scores, 0.9) == 1.0
    # constant predictions: one operating point besides +inf, (sens 1, spec 0)
    constant = np.full(4, 0.7)
    truth = np.array([0, 1, 0, 1])
    assert auroc(truth, constant) == 0.5
    assert sensitivity_at_specificity(truth, constant, 0.5) == 0.0
    assert specificity_at_sensitivity(truth, constant, 0.5) == 0.0
    # kappa: both raters constant and equal is the stated value; one constant rater gives 0
    assert cohen_kappa(np.array([2, 2, 2]), np.array([2, 2, 2])) == 1.0
    assert cohen_kappa(np.array([2, 2, 2]), np.array([2, 2, 2]), perfect_chance=0.0) == 0.0
    assert cohen_kappa(np.array([1, 2, 2]), np.array([2, 2, 2])) == 0.0
    assert balanced_accuracy(np.array([1, 1, 1]), np.array([1, 0, 1])) == pytest.approx(2 / 3)
    # a predicted class absent from the reference adds no recall term
    assert balanced_accuracy(np.array([0, 0, 1]), np.array([0, 2, 1])) == pytest.approx(0.75)
    assert brier_score(np.array([1, 0]), np.array([1.0, 0.0])) == 0.0


def test_validation_messages():
    truth, scores = binary_case()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        auroc(truth, scores[:-1])
    with pytest.raises(ValueError, match="NaN"):
        auroc(truth, np.where(truth, np.nan, scores))
    with pytest.raises(ValueError, match="only 0 and 1"):
        auroc(truth * 2, scores)
    with pytest.raises(ValueError, match="empty"):
        sensitivity(np.array([], dtype=int), np.array([]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        brier_score(truth, scores * 2)
    with pytest.raises(ValueError, match="target"):
        sensitivity_at_specificity(truth, scores, 1.5)
    with pytest.raises(ValueError, match="n_bins"):
        expected_calibration_error(truth, scores, 0)
    with pytest.raises(ValueError, match="kappa weights"):
        cohen_kappa(truth, truth, "cubic")
    with pytest.raises(ValueError, match="outside labels"):
        cohen_kappa(np.array([0, 1, 5]), np.array([0, 1, 1]), labels=[0, 1])


@pytest.mark.parametrize("seed", range(5))
def test_random_inputs_with_ties_equal_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = 200
    truth = (rng.random(n) < 0.3).astype(int)
    scores = np.round(np.clip(0.25 * truth + rng.random(n) * 0.75, 0, 1), 1 + seed % 2)  # many ties
    assert auroc(truth, scores) == pytest.approx(roc_auc_score(truth, scores), abs=1e-12)
    assert binary_average_precision(truth, scores) == pytest.approx(average_precision_score(truth, scores), abs=1e-12)
    assert brier_score(truth, scores) == pytest.approx(brier_score_loss(truth, scores), abs=1e-12)
    fpr, tpr, _ = roc_curve(truth, scores, drop_intermediate=False)
    for target in (0.8, 0.9, 0.95):
        assert sensitivity_at_specificity(truth, scores, target) == pytest.approx(tpr[1 - fpr >= target].max())
        assert specificity_at_sensitivity(truth, scores, target) == pytest.approx((1 - fpr)[tpr >= target].max())
    grades = rng.integers(0, 5, n)
    rated = np.clip(grades + rng.integers(-1, 2, n), 0, 4)
    for weights in (None, "linear", "quadratic"):
        expected = cohen_kappa_score(grades, rated, weights=weights)
        assert cohen_kappa(grades, rated, weights) == pytest.approx(expected, abs=1e-12)
    assert balanced_accuracy(grades, rated) == pytest.approx(balanced_accuracy_score(grades, rated), abs=1e-12)
    # ECE by a direct loop over the right-closed bins ((m-1)/M, m/M], 0 in the first one
    edges = np.linspace(0, 1, 11)
    total = 0.0
    for m in range(10):
        inside = (scores > edges[m]) & (scores <= edges[m + 1]) if m else scores <= edges[1]
        if inside.any():
            total += inside.sum() / n * abs(truth[inside].mean() - scores[inside].mean())
    assert expected_calibration_error(truth, scores) == pytest.approx(total, abs=1e-12)


def test_top_label_ece_by_hand():
    # rows: confidence .6 (class 0, right), .7 (class 1, wrong), .5 tied -> class 0 (first column, right)
    # 2 bins: (0, .5] holds .5 (right): |1 - .5| = .5; (.5, 1] holds .6 right, .7 wrong: |.5 - .65| = .15.
    # ECE = 1/3 * .5 + 2/3 * .15 = 4/15.
    truth = np.array(["a", "a", "a"])
    probabilities = np.array([[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]])
    assert top_label_calibration_error(truth, probabilities, ["a", "b"], 2) == pytest.approx(4 / 15, abs=1e-15)
    with pytest.raises(ValueError, match="columns"):
        top_label_calibration_error(truth, probabilities, ["a"])


def test_row_weights_equal_sklearns_sample_weight_and_their_edges():
    """``sample_weight`` (ISIC's score weights) is scikit-learn's; a class with no weighted row is the
    declared edge (ISIC's ``roc_auc`` / ``average_precision`` pass NaN and 0.0)."""
    truth, scores = binary_case()
    weight = np.random.default_rng(3).choice([0.0, 0.5, 1.0, 2.0], size=truth.size)
    expected = roc_auc_score(truth, scores, sample_weight=weight)
    assert auroc(truth, scores, sample_weight=weight) == pytest.approx(expected, abs=1e-12)
    expected = average_precision_score(truth, scores, sample_weight=weight)
    assert binary_average_precision(truth, scores, sample_weight=weight) == pytest.approx(expected, abs=1e-12)
    unweighted_positives = np.where(truth == 1, 0.0, 1.0)
    assert auroc(truth, scores, single_class=0.25, sample_weight=unweighted_positives) == 0.25
    assert auroc(truth, scores, single_class=0.25, sample_weight=1.0 - unweighted_positives) == 0.25
    assert binary_average_precision(truth, scores, no_positive=0.75, sample_weight=unweighted_positives) == 0.75
    assert binary_average_precision(truth, scores, sample_weight=1.0 - unweighted_positives) == pytest.approx(
        average_precision_score(truth, scores, sample_weight=1.0 - unweighted_positives), abs=1e-12
    )
    for bad, message in [(-weight, "non-negative"), (weight[:-1], "inconsistent numbers"), (weight * np.nan, "NaN")]:
        with pytest.raises(ValueError, match=message):
            auroc(truth, scores, sample_weight=bad)
    with pytest.raises(ValueError, match="cannot be combined"):
        binary_average_precision(truth, scores, weights=np.ones((2, truth.size)), sample_weight=weight)
