"""Detection at a decision, declared (``detection_f1``, ``detection_precision``, ``detection_recall``):
the schema's checks and the adapters' counts and values by hand (MIDOG 2021 itself:
test_midog2021.py)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.declarative import measures
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.metrics.detection import ImageDetections

DECLARATION = """
name = "decision"
title = "Detection at a decision"
[[inputs]]
slug = "slide"
[[outputs]]
slug = "cells"
kind = "boxes"
reference = "boxes/{case}.json"
[[metrics]]
metric = "detection_f1"
output = "cells"
score_threshold = 0.5
__EXTRA__
[leaderboard]
score = "aggregates.detection_f1"
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('matching = "reference"', r"metrics\[0\]\.matching: 'reference' .* needs match = 'distance'"),
        ('classes = ["cell"]', r"metrics\[0\]\.classes: only points have a name \('cells' is a boxes output\)"),
        ("epsilon = -1.0", r"metrics\[0\]\.epsilon: must be a non-negative number"),
        ("score_threshold = 2.0", r"metrics\[0\]\.score_threshold: must be in \[0, 1\]"),
    ],
)
def test_bad_decisions_name_the_key(extra, message):
    text = DECLARATION.replace("score_threshold = 0.5\n", "") if "score_threshold" in extra else DECLARATION
    with pytest.raises(ConfigurationError, match=message):
        parse(text.replace("__EXTRA__", extra), "decision.toml")


def test_points_classes_must_be_names():
    text = DECLARATION.replace('kind = "boxes"', 'kind = "points"').replace("__EXTRA__", "classes = [1]")
    text = text.replace('output = "cells"', 'output = "cells"\nmatch = "distance"\nthreshold = 2.0')
    with pytest.raises(ConfigurationError, match=r"metrics\[0\]\.classes: must be a non-empty list of names"):
        parse(text, "decision.toml")


def test_counts_and_values_by_hand():
    """Boxes at IoU > 0.5, predictions kept above 0.5: image a keeps 0.9 (a hit) and 0.6 (a miss),
    image b keeps nothing (its box is missed): TP 1, FP 1, FN 1 (2 summed)."""
    a = ImageDetections(np.array([[0.0, 0, 10, 10]]), np.array([[0.0, 0, 10, 9], [50, 50, 60, 60], [0, 0, 10, 10]]),
                        np.array([0.9, 0.6, 0.4]))  # fmt: skip
    b = ImageDetections(np.array([[20.0, 20, 30, 30]]), np.array([[20.0, 20, 30, 30]]), np.array([0.5]))
    params = {"objects": "boxes", "match": "iou", "threshold": 0.5, "matching": "greedy", "score_threshold": 0.5,
              "keep_unnamed": True, "epsilon": 1e-6, "no_objects": 0.0}  # fmt: skip
    counts = measures.decision_counts([a, b], params)
    assert counts.tolist() == [[1, 1, 0], [0, 0, 1]]
    assert measures.decision_value("detection_precision", counts, params) == pytest.approx(1 / (2 + 1e-6), abs=1e-15)
    assert measures.decision_value("detection_recall", counts, params) == pytest.approx(1 / (2 + 1e-6), abs=1e-15)
    assert measures.decision_value("detection_f1", counts, params) == pytest.approx((2 + 1e-6) / (4 + 1e-6), abs=1e-15)
    weights = np.array([[2, 0], [0, 2]])  # a resample of a twice, of b twice
    boot = measures.decision_value("detection_precision", counts, params, weights)
    assert boot[0] == pytest.approx(2 / (4 + 1e-6), abs=1e-15) and boot[1] == 0.0  # b: nothing kept -> no_objects
