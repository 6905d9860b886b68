"""Test data and oracles shared by the declared-phase tests of class probabilities (one copy, imported)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from isic_challenge_scoring.classification import ClassificationMetric, ClassificationScore


def leaning_probabilities(
    classes: tuple[str, ...], n: int, seed: int, own: float, other: float, total: int
) -> tuple[np.ndarray, np.ndarray]:
    """Reference classes (each ``n / len(classes)`` times) and probabilities in ``1/total`` steps, drawn
    leaning ``own`` to the reference class and ``other`` to each other class, each row with a single
    maximum (ISIC calls a tied maximum "undecided", we take the first declared class: only untied rows compare)."""
    rng = np.random.default_rng(seed)
    truth = np.array(list(classes) * (n // len(classes)))[rng.permutation(n)]
    rows = []
    for label in truth:
        lean = np.where(np.array(classes) == label, own, other)
        while True:
            counts = rng.multinomial(total, lean)
            if np.count_nonzero(counts == counts.max()) == 1:
                break
        rows.append(counts / float(total))
    return truth, np.array(rows)


def first_argmax(probabilities: np.ndarray, classes: tuple[str, ...]) -> np.ndarray:
    """Each row's first class of highest probability, by a loop (the declared tie rule)."""
    return np.array([classes[max(range(len(row)), key=lambda j: (row[j], -j))] for row in probabilities])


def isic_score(truth: Path, predictions: Path) -> ClassificationScore:
    """The official ISIC scoring (isic-challenge-scoring, ``ClassificationScore.from_file``) of a
    participant's CSV against a one-hot truth CSV; its deprecation chatter silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ClassificationScore.from_file(truth, predictions, ClassificationMetric.BALANCED_ACCURACY)
