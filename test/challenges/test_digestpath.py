"""DigestPath 2019 tasks 1 and 2 through the command line: hand-computed cases and bad input."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
import SimpleITK as sitk
from PIL import Image

from evaluation.platform.detections import platform_boxes
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

TASK1 = get("digestpath2019-task1").phase  # the declared challenge's sockets
(DETECTION_INPUT,), (DETECTIONS,) = TASK1.inputs, TASK1.outputs

TASK2 = get("digestpath2019-task2").phase  # the declared challenge's sockets
(TISSUE_INPUT,), (TISSUE_MASK, MALIGNANCY) = TASK2.inputs, TASK2.outputs

GOLDEN_TRUTH = {
    "p1.jpg": [[10, 10, 30, 30], [50, 52, 70, 72], [300, 300, 320, 320]],
    "p2.jpg": [[6, 6, 26, 26], [61, 60, 81, 80]],
    "n1.jpg": [],
    "n2.jpg": [],
}
GOLDEN_PREDICTIONS = {
    "p1.jpg": [[10, 10, 30, 30, 0.95], [12, 12, 31, 31, 0.90], [50, 50, 70, 70, 0.80], [100, 100, 120, 120, 0.40],
               [200, 200, 220, 220, 0.30]],
    "p2.jpg": [[5, 5, 25, 25, 0.85], [60, 60, 80, 80, 0.20]],
    "n1.jpg": [[0, 0, 10, 10, 0.9], [20, 20, 30, 30, 0.5], [40, 40, 50, 50, 0.25]],
    "n2.jpg": [[0, 0, 10, 10, 0.6]],
}  # fmt: skip


def task1_case(root: Path, predictions=GOLDEN_PREDICTIONS, truth=GOLDEN_TRUTH, voc: bool = False):
    ground_truth = root / "gt"
    ground_truth.mkdir(parents=True)
    if voc:
        for name, boxes in truth.items():
            objects = "".join(
                f"<object><name>ring</name><bndbox><xmin>{a}</xmin><ymin>{b}</ymin><xmax>{c}</xmax><ymax>{d}</ymax>"
                "</bndbox></object>"
                for a, b, c, d in boxes
            )
            (ground_truth / f"{Path(name).stem}.xml").write_text(
                f"<annotation><filename>{name}</filename>{objects}</annotation>"
            )
    else:
        (ground_truth / "boxes.json").write_text(json.dumps(truth))
    jobs = [
        JobSpec({DETECTION_INPUT: name}, {DETECTIONS: platform_boxes(rows) if i % 2 else rows})
        for i, (name, rows) in enumerate(predictions.items())
    ]
    write_input(root / "input", jobs)
    return ground_truth, root / "input"


@pytest.mark.parametrize("voc", [False, True])
def test_task1_golden_case(tmp_path, evaluate_cli, voc):
    # Derived by hand in test/metrics/test_detection.py::test_golden_case_by_hand.
    ground_truth, input_dir = task1_case(tmp_path, voc=voc)
    run = evaluate_cli("digestpath2019-task1", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    assert aggregates["instance_recall"] == pytest.approx(0.8)
    assert aggregates["recall_valid"] == pytest.approx(0.8)
    assert aggregates["normal_fp"] == pytest.approx(2.0) and aggregates["fp_score"] == pytest.approx(98.0)
    assert aggregates["froc"] == pytest.approx(4.6 / 6)
    assert run.metrics["case"]["p1.jpg"] == {"predictions": 5, "true_positives": 2, "negative_image": False,
                                             "recall": pytest.approx(2 / 3)}  # fmt: skip
    assert run.metrics["settings"]["matching"] == "greedy"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[30, 10, 10, 30, 0.5]], "Detection 0 of image p1.jpg is degenerate"),
        ([[10, 10, 30, 30, 1.5]], "Detection 0 of image p1.jpg has a score outside [0, 1]"),
        ([[10, 10, 30, 30]], "Detection 0 of image p1.jpg is not [x1, y1, x2, y2, score]"),
        ([[10, "a", 30, 30, 0.5]], "Detection 0 of image p1.jpg is not a number"),
        ({"boxes": "none"}, "no list of 'boxes'"),
        ("boxes", "neither a list nor bounding-box JSON"),
    ],
)
def test_task1_bad_detections(tmp_path, evaluate_cli, rows, message):
    ground_truth, input_dir = task1_case(tmp_path, predictions={**GOLDEN_PREDICTIONS, "p1.jpg": [[1, 1, 2, 2, 0.1]]})
    pk = json.loads((input_dir / "predictions.json").read_text())[0]["pk"]
    (input_dir / pk / "output" / DETECTIONS.relative_path).write_text(json.dumps(rows))
    run = evaluate_cli("digestpath2019-task1", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert message in run.last_error_line


def test_task1_nan_coordinate(tmp_path, evaluate_cli):
    ground_truth, input_dir = task1_case(tmp_path)
    pk = json.loads((input_dir / "predictions.json").read_text())[0]["pk"]
    (input_dir / pk / "output" / DETECTIONS.relative_path).write_text("[[NaN, 1, 2, 3, 0.5]]")
    run = evaluate_cli("digestpath2019-task1", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "p1.jpg" in run.last_error_line and "NaN" in run.last_error_line


def test_task1_unknown_and_missing_images(tmp_path, evaluate_cli):
    ground_truth, input_dir = task1_case(tmp_path, predictions={**GOLDEN_PREDICTIONS, "x.jpg": []})
    run = evaluate_cli("digestpath2019-task1", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "'x.jpg', which is not in the reference" in run.last_error_line
    missing = {k: v for k, v in GOLDEN_PREDICTIONS.items() if k != "n2.jpg"}
    ground_truth, input_dir = task1_case(tmp_path / "b", predictions=missing)
    run = evaluate_cli("digestpath2019-task1", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "No algorithm job for image n2.jpg" in run.last_error_line


def test_task1_without_negative_images_is_a_clear_error(tmp_path, evaluate_cli):
    truth = {k: v for k, v in GOLDEN_TRUTH.items() if v}
    ground_truth, input_dir = task1_case(tmp_path, {k: GOLDEN_PREDICTIONS[k] for k in truth}, truth)
    run = evaluate_cli("digestpath2019-task1", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "no negative (normal) image" in run.last_error_line


def test_task1_hungarian_option(tmp_path, evaluate_cli):
    """Where the two matchings differ. References R1 [0, 0, 10, 10], R2 [8, 0, 18, 10]; predictions P1
    [5, 0, 15, 10] (score 0.9): IoU R1 50/150 = 0.33, R2 70/130 = 0.54; P2 [9, 0, 19, 10] (0.8): IoU R1
    10/190 = 0.05, R2 90/110 = 0.82. Greedy: P1 takes R2, P2 finds nothing above 0.3 -> 1 TP. The
    maximum-IoU assignment: P1-R1 + P2-R2 (0.33 + 0.82 > 0.54) -> 2 TPs."""
    truth = {"p.jpg": [[0, 0, 10, 10], [8, 0, 18, 10]], "n.jpg": []}
    predictions = {"p.jpg": [[5, 0, 15, 10, 0.9], [9, 0, 19, 10, 0.8]], "n.jpg": []}
    expected = {"greedy": 1, "hungarian": 2}
    for method, true_positives in expected.items():
        ground_truth, input_dir = task1_case(tmp_path / method, predictions, truth)
        run = evaluate_cli("digestpath2019-task1", input_dir, "--set", f"matching={method}", ground_truth=ground_truth)
        assert run.exit_code == 0, run.stderr
        assert run.metrics["case"]["p.jpg"]["true_positives"] == true_positives, method
        assert run.metrics["aggregates"]["instance_recall"] == pytest.approx(true_positives / 2, abs=1e-12)
        assert run.metrics["settings"]["matching"] == method


# --- task 2 ---------------------------------------------------------------------------------------


def task2_case(root: Path, predicted_shape=(4, 4), likelihoods=(0.9, 0.5, 0.4)):
    """Three 4x4 images. A: reference 4 pixels, prediction 2 of them + 2 others -> Dice 2*2/8 = 0.5.
    B: both empty -> 1.0. C: reference 2 pixels, prediction empty -> 0.0."""
    ground_truth = root / "gt"
    (ground_truth / "masks").mkdir(parents=True)
    references = {"a.png": [(0, 0), (0, 1), (1, 0), (1, 1)], "b.png": [], "c.png": [(3, 3), (3, 2)]}
    predictions = {"a.png": [(0, 0), (0, 1), (2, 2), (2, 3)], "b.png": [], "c.png": []}
    labels = {"a.png": 1, "b.png": 0, "c.png": 1}
    jobs = []
    for (name, pixels), likelihood in zip(references.items(), likelihoods, strict=True):
        mask = np.zeros((4, 4), np.uint8)
        for y, x in pixels:
            mask[y, x] = 255
        Image.fromarray(mask).save(ground_truth / "masks" / name)
        predicted = np.zeros(predicted_shape, np.uint8)
        for y, x in predictions[name]:
            predicted[y, x] = 1
        path = root / f"{name}.mha"
        sitk.WriteImage(sitk.GetImageFromArray(predicted), str(path))
        jobs.append(JobSpec({TISSUE_INPUT: name}, {TISSUE_MASK: path, MALIGNANCY: likelihood}))
    with (ground_truth / "labels.csv").open("w", newline="") as file:
        csv.writer(file).writerows([("image", "label"), *labels.items()])
    write_input(root / "input", jobs)
    return ground_truth, root / "input"


def test_task2_hand_computed(tmp_path, evaluate_cli):
    ground_truth, input_dir = task2_case(tmp_path)
    run = evaluate_cli("digestpath2019-task2", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["dice"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    # AUC: malignant a (.9) and c (.4) against benign b (.5): 1 of 2 pairs ordered -> 0.5
    assert run.metrics["aggregates"]["auc"] == pytest.approx(0.5)
    assert run.metrics["case"]["b.png"]["dice"] == 1.0
    positives = evaluate_cli("digestpath2019-task2", input_dir, "--set", "dice_average=positives",
                             ground_truth=ground_truth)  # fmt: skip
    assert positives.metrics["aggregates"]["dice"] == pytest.approx((0.5 + 0.0) / 2)


def test_task2_mask_size_mismatch(tmp_path, evaluate_cli):
    ground_truth, input_dir = task2_case(tmp_path, predicted_shape=(4, 5))
    run = evaluate_cli("digestpath2019-task2", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert re.search(r"The predicted mask of image [abc]\.png is 5x4 pixels; the image is 4x4", run.last_error_line)


def test_task2_bad_likelihood_and_unreadable_mask(tmp_path, evaluate_cli):
    ground_truth, input_dir = task2_case(tmp_path, likelihoods=(0.9, "high", 0.4))
    run = evaluate_cli("digestpath2019-task2", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "likelihood of image b.png is not a number" in run.last_error_line
    ground_truth, input_dir = task2_case(tmp_path / "two")
    job = json.loads((input_dir / "predictions.json").read_text())[2]
    folder = input_dir / job["pk"] / "output" / TISSUE_MASK.relative_path
    next(folder.iterdir()).write_bytes(b"not an image")
    run = evaluate_cli("digestpath2019-task2", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and run.last_error_line == (
        "Case c.png: the image output 'colonoscopy-tissue-segmentation' could not be read: "
        "it does not start with a MetaImage header."
    )  # refused by the platform layer before any image reader opens it (test/test_hostile.py)
