"""The catalogue's ``auroc_above_sensitivity`` (ISIC 2019's ``auc_sens_80``) against its reference,
isic-challenge-scoring 5.6.0 ``metrics.auc_above_sensitivity`` (ImageMarkup/isic-challenge-scoring, PyPI,
pinned in requirements-dev.txt), run here: tied scores, row weights with zeros, several sensitivities."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from isic_challenge_scoring.metrics import auc_above_sensitivity as reference

from evaluation.metrics import catalogue
from evaluation.metrics.classification import auroc_above_sensitivity


def official(truth: np.ndarray, scores: np.ndarray, sensitivity: float, weights: np.ndarray | None = None) -> float:
    rows = np.ones(truth.size) if weights is None else weights
    return reference(pd.Series(truth, dtype=float), pd.Series(scores), pd.Series(rows), sensitivity)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sensitivity", [0.8, 0.5, 0.33, 1.0, 0.05])
def test_equals_the_reference(seed, sensitivity):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 300))
    truth = (rng.random(n) < rng.uniform(0.05, 0.6)).astype(int)
    truth[:2] = (0, 1)
    scores = np.round(np.clip(0.35 * truth + rng.random(n), 0, 1), int(rng.integers(1, 4)))  # ties
    got = auroc_above_sensitivity(truth, scores, sensitivity=sensitivity)
    assert got == pytest.approx(official(truth, scores, sensitivity), abs=1e-12)
    weights = np.where(rng.random(n) < 0.2, 0.0, 1.0)
    weights[:2] = 1.0
    got = auroc_above_sensitivity(truth, scores, sensitivity=sensitivity, sample_weight=weights)
    assert got == pytest.approx(official(truth, scores, sensitivity, weights), abs=1e-12)


def test_single_class_is_the_declared_value_else_the_diagonal():
    truth, scores = np.zeros(5, dtype=int), np.linspace(0, 1, 5)
    assert auroc_above_sensitivity(truth, scores) == pytest.approx((1 - 0.8**2) / 2)
    assert auroc_above_sensitivity(truth, scores, single_class=0.25) == 0.25
    truth[0] = 1  # the one positive has weight 0: one class again
    assert catalogue.compute("auroc_above_sensitivity", truth, scores, sample_weight=np.r_[0.0, np.ones(4)],
                             single_class=0.0) == 0.0  # fmt: skip
    ranked = np.array([0, 0, 1, 1])  # a perfect ranking: TPR 1 over every false-positive rate
    assert auroc_above_sensitivity(ranked, np.array([0.1, 0.2, 0.8, 0.9]), sensitivity=0.5) == 1.0


@pytest.mark.parametrize("sensitivity", [0.0, -0.1, 1.5])
def test_a_sensitivity_outside_0_1_is_refused(sensitivity):
    with pytest.raises(ValueError, match="sensitivity must be in"):
        auroc_above_sensitivity(np.array([0, 1]), np.array([0.2, 0.7]), sensitivity=sensitivity)
