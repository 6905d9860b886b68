"""The catalogue's multi-class Brier score against scikit-learn's ``brier_score_loss`` (multi-class
since 1.7; it reads the columns in sorted class order), the binary Brier score and a hand
computation; its bootstrap ``weights`` form against the expanded resamples."""

from __future__ import annotations

import numpy as np
import pytest
from metrics.catalogue_fixtures import multiclass_case
from sklearn.metrics import brier_score_loss

from evaluation.metrics import catalogue
from evaluation.metrics.bootstrap import resample_weights
from evaluation.metrics.classification import brier_score, multiclass_brier_score


def test_equals_sklearn_with_sorted_columns_in_any_declared_order():
    truth, probabilities = multiclass_case()
    assert multiclass_brier_score(truth, probabilities, [0, 1, 2]) == pytest.approx(
        brier_score_loss(truth, probabilities, labels=[0, 1, 2]), abs=1e-12
    )
    names = np.array(["nev", "mel", "bkl"])[truth]  # declared order nev, mel, bkl; sklearn's bkl, mel, nev
    expected = brier_score_loss(names, probabilities[:, ::-1], labels=["bkl", "mel", "nev"])
    value = catalogue.compute("multiclass_brier_score", names, probabilities, classes=["nev", "mel", "bkl"])
    assert value == pytest.approx(expected, abs=1e-12)


def test_by_hand_and_two_classes_twice_the_binary_brier():
    truth = np.array(["a", "b", "c"])
    probabilities = np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    by_hand = ((0.25 + 0.09 + 0.04) + (0.01 + 0.04 + 0.01) + (0.09 + 0.09 + 0.36)) / 3
    assert multiclass_brier_score(truth, probabilities, ["a", "b", "c"]) == pytest.approx(by_hand, abs=1e-15)
    y = np.array([1, 0, 1, 1, 0])
    p = np.array([0.9, 0.2, 0.4, 0.5, 0.7])
    two = multiclass_brier_score(y, np.stack([1 - p, p], axis=1), [0, 1])
    assert two == pytest.approx(2 * brier_score(y, p), abs=1e-15)
    assert multiclass_brier_score(np.array([0]), np.array([[0.0, 1.0]]), [0, 1]) == 2.0  # the maximum


def test_weights_equal_the_expanded_resamples():
    truth, probabilities = multiclass_case()
    weights = resample_weights(truth.size, 50, 3)
    got = multiclass_brier_score(truth, probabilities, [0, 1, 2], weights=weights)
    for row, value in zip(weights, got, strict=True):
        drawn = np.repeat(np.arange(truth.size), row)
        assert value == pytest.approx(multiclass_brier_score(truth[drawn], probabilities[drawn], [0, 1, 2]), abs=1e-12)


@pytest.mark.parametrize(
    ("truth", "probabilities", "message"),
    [
        (["a"], [[0.5, 0.5, 0.0]], "probabilities has 3 columns for 2 classes"),
        (["a"], [[1.5, -0.5]], r"probabilities must lie in \[0, 1\]"),
        (["a"], [[np.nan, 0.5]], "probabilities contains NaN"),
        (["z"], [[0.5, 0.5]], "truth_labels hold a label outside classes"),
        ([], np.zeros((0, 2)), "truth_labels is empty"),
        (["a", "b"], [[0.5, 0.5]], "inconsistent numbers of samples"),
    ],
)
def test_validation(truth, probabilities, message):
    with pytest.raises(ValueError, match=message):
        multiclass_brier_score(np.array(truth), np.array(probabilities, dtype=float), ["a", "b"])
