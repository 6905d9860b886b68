"""The catalogue's bootstrap forms: with ``weights`` (the draw counts of each resample) a metric gives,
per resample, exactly its value on that resample's expanded set of cases (the cases indexed by the
draw, the definition of a bootstrap resample), edge cases included; AUROC and AP also equal
scikit-learn with the counts as ``sample_weight``. Per-case Dice from counts equals Dice of the masks."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, average_precision_score, roc_auc_score

from evaluation.metrics import classification, regression
from evaluation.metrics.bootstrap import drawn_cases, resample_indices, row_counts
from evaluation.metrics.overlap import dice, dice_from_counts

N_CASES, N_RESAMPLES = 30, 100


def draws(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, counts) of one seeded bootstrap; the first rows are degenerate on purpose."""
    indices = resample_indices(N_CASES, N_RESAMPLES, seed)
    indices[0] = 0  # one case drawn 30 times
    indices[1, :] = np.arange(N_CASES)  # every case once: the full set
    return indices, row_counts(indices, N_CASES)


def inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = (rng.random(N_CASES) < 0.4).astype(int)
    truth[0] = 1
    grades = rng.integers(0, 3, N_CASES)
    return {
        "truth": truth,
        "probabilities": np.round(np.clip(0.3 * truth + 0.7 * rng.random(N_CASES), 0, 1), 1),  # ties, bin edges
        "values": rng.normal(size=N_CASES),
        "predictions": rng.normal(size=N_CASES),
        "grades": grades,
        "rated": np.where(rng.random(N_CASES) < 0.6, grades, rng.integers(0, 3, N_CASES)),
    }


CASES = {  # name -> (function, input names, parameters): each with weights against the expanded resamples
    "auroc": (classification.auroc, ("truth", "probabilities"), {"single_class": -1.0}),
    "average_precision": (classification.binary_average_precision, ("truth", "probabilities"), {"no_positive": -1.0}),
    "brier_score": (classification.brier_score, ("truth", "probabilities"), {}),
    "ece": (classification.expected_calibration_error, ("truth", "probabilities"), {"n_bins": 5}),
    "accuracy": (classification.accuracy, ("grades", "rated"), {}),
    "balanced_accuracy": (classification.balanced_accuracy, ("grades", "rated"), {}),
    "mae": (regression.mean_absolute_error, ("values", "predictions"), {}),
    "rmse": (regression.root_mean_squared_error, ("values", "predictions"), {}),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(CASES))
def test_weights_equal_the_expanded_resamples(name, seed):
    function, names, parameters = CASES[name]
    arrays = [inputs(seed)[n] for n in names]
    indices, counts = draws(seed)
    weighted = function(*arrays, **parameters, weights=counts)
    assert weighted.shape == (N_RESAMPLES,)
    expanded = [function(*(a[row] for a in arrays), **parameters) for row in indices]
    np.testing.assert_allclose(weighted, expanded, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_curves_equal_sklearn_sample_weights(seed):
    """Zero-weight cases, ties and single-class rows (the catalogue's edge values there)."""
    values = inputs(seed)
    truth, scores = values["truth"], values["probabilities"]
    _, counts = draws(seed)
    aucs = classification.auroc(truth, scores, single_class=-1.0, weights=counts)
    aps = classification.binary_average_precision(truth, scores, no_positive=-1.0, weights=counts)
    assert aucs[0] == -1.0 and aps[0] == 1.0  # case 0 alone: positives only (AP 1, AUROC undefined)
    for row, auc, ap in zip(counts[1:], aucs[1:], aps[1:], strict=True):
        kept = row > 0
        assert auc == pytest.approx(roc_auc_score(truth[kept], scores[kept], sample_weight=row[kept]), abs=1e-12)
        assert ap == pytest.approx(
            average_precision_score(truth[kept], scores[kept], sample_weight=row[kept]), abs=1e-12
        )


def test_accuracy_equals_sklearn():
    values = inputs(0)
    expected = accuracy_score(values["grades"], values["rated"])
    assert classification.accuracy(values["grades"], values["rated"]) == pytest.approx(expected, abs=1e-15)
    assert classification.accuracy(np.array(["a", "b"]), np.array(["a", "<missing>"])) == 0.5


def test_bad_weights_are_refused():
    truth, scores = np.array([0, 1, 1]), np.array([0.2, 0.4, 0.9])
    with pytest.raises(ValueError, match="weights has 2 columns for 3 cases"):
        classification.brier_score(truth, scores, weights=np.ones((4, 2)))
    with pytest.raises(ValueError, match="positive sum in every row"):
        classification.auroc(truth, scores, weights=np.array([[1, 1, 1], [0, 0, 0]]))
    with pytest.raises(ValueError, match="weights must be 2-dimensional"):
        regression.mean_absolute_error(truth, scores, weights=np.ones(3))


def test_dice_from_counts_equals_dice_of_the_masks():
    rng = np.random.default_rng(1)
    references = rng.random((20, 4, 5, 6)) < 0.3
    predictions = rng.random((20, 4, 5, 6)) < rng.random((20, 1, 1, 1))
    references[3] = predictions[3] = False  # both empty: the empty value
    inter = (references & predictions).sum(axis=(1, 2, 3))
    totals = references.sum(axis=(1, 2, 3)) + predictions.sum(axis=(1, 2, 3))
    expected = [dice(r, p, empty=0.25) for r, p in zip(references, predictions, strict=True)]
    np.testing.assert_allclose(dice_from_counts(inter, totals, empty=0.25), expected, rtol=0, atol=1e-15)
    assert np.isnan(dice_from_counts(np.array([0, 1]), np.array([0, 2]), empty=np.nan)[0])
    with pytest.raises(ValueError, match="between 0 and half its total"):
        dice_from_counts(np.array([2]), np.array([3]))
    with pytest.raises(ValueError, match="1-dimensional"):
        dice_from_counts(np.float64(1), np.float64(2))


def test_drawn_cases_are_the_draws_sorted():
    """Each resample's drawn cases, from its draw counts: the draws themselves, in case order."""
    indices = resample_indices(7, 20, seed=3)
    drawn = list(drawn_cases(row_counts(indices, 7)))
    assert [r.tolist() for r in drawn] == [sorted(row) for row in indices.tolist()]
    assert [r.tolist() for r in drawn_cases(np.array([[2, 0, 1], [0, 0, 3]]))] == [[0, 0, 2], [2, 2, 2]]
