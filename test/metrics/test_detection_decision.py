"""Detection at a decision (points at a distance) against MIDOG 2021's official evaluation.

The golden numbers in golden/midog2021.json come from the official evaluation container's code
(github DeepMicroscopy/MIDOG_evaluation_docker ``evaluation.py`` at the commit recorded there, with
evalutils 0.2.4's ``score_detection``), run once in a throwaway environment on the points
:func:`midog_points` generates; its mAP (torchmetrics) is not carried. The rest are hand computations.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluation.metrics.detection import ImageDetections, decision_counts, match_by_distance, precision_recall_f1

GOLDEN = json.loads((Path(__file__).parent / "golden" / "midog2021.json").read_text())
RADIUS = 7.5e-3  # mm: MIDOG's 7.5 micrometres
MITOSIS = ("mitotic figure",)


def _point(rng: np.random.Generator, near: np.ndarray, low: float, high: float) -> list[float]:
    angle, distance = rng.uniform(0, 2 * np.pi), rng.uniform(low, high) * RADIUS
    return [float(near[0] + distance * np.cos(angle)), float(near[1] + distance * np.sin(angle)), 0.0]


def midog_points(seed: int = 0, n_images: int = 20) -> dict[str, tuple[list, list]]:
    """Per image ``"001.tiff"``...: (reference points [x, y, 0] in mm, predicted points as MIDOG's
    output ``{"point", "name", "probability"}`` with keys sometimes missing). Edge cases: hits,
    duplicates, near misses, hard negatives named "non-mitotic figure" on a mitosis, unnamed points,
    images without reference or without predictions, and one prediction between two reference points
    nearer the second (the matching order decides: reference order 1 TP, score order 2)."""
    rng = np.random.default_rng(seed)
    images = {}
    for index in range(n_images):
        reference = rng.uniform(0.02, 0.5, size=(int(rng.integers(0, 6)) if index > 1 else 2, 2))
        predictions = []
        if index == 0:  # the order case
            reference = np.array([[0.1, 0.1], [0.1 + 0.8 * RADIUS, 0.1]])
            predictions += [
                {"point": [0.1 + 0.5 * RADIUS, 0.1, 0.0], "name": "mitotic figure", "probability": 0.9},
                {"point": [0.1 - 0.9 * RADIUS, 0.1, 0.0], "name": "mitotic figure", "probability": 0.6},
            ]
        elif index == 1:
            reference = np.empty((0, 2))
        for target in reference if index else []:
            draw = rng.random()
            if draw < 0.5:
                predictions.append({"point": _point(rng, target, 0, 0.95), "probability": float(rng.random())})
            if 0.3 < draw < 0.6:
                predictions.append({"point": _point(rng, target, 0, 0.95), "probability": float(rng.random())})
            if 0.6 < draw < 0.8:
                predictions.append({"point": _point(rng, target, 1.05, 2.0), "probability": float(rng.random())})
            if draw > 0.8:
                predictions.append({"point": _point(rng, target, 0, 0.5), "name": "non-mitotic figure"})
        for _ in range(int(rng.integers(0, 3)) if index not in (0, 2) else 0):
            predictions.append({"point": [*rng.uniform(0, 0.52, 2).tolist(), 0.0], "probability": 0.5})
        for prediction in predictions:
            if "name" not in prediction and rng.random() < 0.8:
                prediction["name"] = "mitotic figure"
        images[f"{index + 1:03d}.tiff"] = ([[*p, 0.0] for p in reference.tolist()], predictions)
    return images


def _images(points: dict[str, tuple[list, list]]) -> list[ImageDetections]:
    return [
        ImageDetections(
            np.asarray(reference, float).reshape(-1, 3),
            np.asarray([p["point"] for p in predictions], float).reshape(-1, 3),
            np.asarray([p.get("probability", 0.5) for p in predictions], float),
            [p.get("name") for p in predictions],
        )
        for reference, predictions in points.values()
    ]


@pytest.mark.parametrize("run", GOLDEN["runs"], ids=lambda run: f"seed{run['seed']}")
def test_midog2021_counts_and_scores_equal_the_official_evaluation(run):
    points = midog_points(run["seed"])
    images = _images(points)
    tp, fp, fn = decision_counts(images, "distance", RADIUS, "reference", classes=MITOSIS)
    expected = [run["case"][name] for name in points]
    assert tp.tolist() == [case["true_positives"] for case in expected]
    assert fp.tolist() == [case["false_positives"] for case in expected]
    assert fn.tolist() == [case["false_negatives"] for case in expected]
    aggregates = run["aggregates"]
    scores = precision_recall_f1(tp, fp, fn, epsilon=1e-6)
    assert scores == pytest.approx([aggregates[key] for key in ("precision", "recall", "f1_score")], abs=1e-9)
    for tumour in range(2):  # the official per-tumour scores: cases 10 t + 1 ... 10 t + 10
        group = slice(10 * tumour, 10 * tumour + 10)
        expected = [aggregates[f"tumor_{tumour}_{key}"] for key in ("precision", "recall", "f1")]
        assert precision_recall_f1(tp[group], fp[group], fn[group], 1e-6) == pytest.approx(expected, abs=1e-9)


def test_matching_order_is_a_choice():
    # Image 001: p (0.9) 0.5 r from A and 0.3 r from B, q (0.6) 0.9 r from A. Reference order: A takes
    # its nearest p, B finds nothing free -> 1 TP. Score order: p takes its nearest B, q takes A -> 2 TP.
    image = _images(midog_points(0, 1))[0]
    assert match_by_distance(image.reference, image.boxes, image.scores, RADIUS, "reference").tolist() == [0, -1]
    assert match_by_distance(image.reference, image.boxes, image.scores, RADIUS, "greedy").tolist() == [1, 0]
    assert decision_counts([image], method="greedy")[0].tolist() == [2]


def test_score_threshold_names_and_epsilon_by_hand():
    image = ImageDetections(
        np.array([[0.0, 0.0], [10.0, 0.0]]),
        np.array([[0.5, 0.0], [10.5, 0.0], [20.0, 0.0], [0.2, 0.0]]),
        np.array([0.9, 0.5, 0.8, 0.7]),
        ["mitotic figure", "mitotic figure", None, "non-mitotic figure"],
    )
    # score > 0.5 keeps 0, 2, 3; names keep 0 and the unnamed 2: TP 1, FP 1, FN 1
    tp, fp, fn = decision_counts([image], "distance", 1.0, "greedy", score_threshold=0.5, classes=MITOSIS)
    assert (tp.tolist(), fp.tolist(), fn.tolist()) == ([1], [1], [1])
    expected = (1 / (2 + 1e-6), 1 / (2 + 1e-6), (2 + 1e-6) / (4 + 1e-6))
    assert precision_recall_f1(tp, fp, fn, epsilon=1e-6) == pytest.approx(expected, abs=1e-15)
    unnamed_dropped = decision_counts([image], "distance", 1.0, "greedy", 0.5, MITOSIS, keep_unnamed=False)
    assert precision_recall_f1(*unnamed_dropped) == (1.0, 0.5, 2 / 3)
    nothing = decision_counts([ImageDetections(np.empty((0, 2)), np.empty((0, 2)), np.empty(0))], "distance", 1.0)
    assert np.isnan(precision_recall_f1(*nothing)[2])
    assert precision_recall_f1(*nothing, empty=1.0)[1] == 1.0
    assert precision_recall_f1(*nothing, epsilon=1e-6) == (0.0, 0.0, 1.0)  # MIDOG's empty tumour: 0, 0, 1


def test_bad_parameters_are_refused():
    image = _images(midog_points(0, 1))[0]
    with pytest.raises(ValueError, match="epsilon"):
        precision_recall_f1(1, 0, 0, epsilon=-1)
    with pytest.raises(ValueError, match="non-negative"):
        precision_recall_f1(1, -1, 0)
    with pytest.raises(ValueError, match="unknown matching method"):
        decision_counts([image], method="nearest")
    with pytest.raises(ValueError, match="names"):
        decision_counts([ImageDetections(image.reference, image.boxes, image.scores, ["x"])], classes=MITOSIS)
    with pytest.raises(ValueError, match="empty"):
        decision_counts([])
    with pytest.raises(ValueError, match="list of names"):  # not its characters
        decision_counts([image], classes=MITOSIS[0])
    with pytest.raises(ValueError, match="3 predictions but 2 scores"):  # before the score filter indexes
        decision_counts([ImageDetections(image.reference, np.zeros((3, 3)), np.array([0.5, 0.6]))], score_threshold=0.1)
