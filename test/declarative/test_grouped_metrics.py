"""Groups on metrics of one value beyond the value metrics (a probabilities output's Brier score), and
a group left without a value when one of its cases lacks its output (``incomplete_group = "null"``),
by hand."""

from __future__ import annotations

import numpy as np
import pytest
from declarative.helpers import (
    IMAGES,
    detection_data,
    detections,
    evaluate,
    platform_boxes,
    tiny_case,
    tiny_data,
    voc_ap,
    write_json,
)

from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

GROUPED = """
name = "grouped"
title = "Grouped"
[[inputs]]
slug = "slide"
name = "{case}.png"
[cases]
id_column = "patient"
word = "patient"
[[outputs]]
slug = "age-estimate"
kind = "number"
missing = "exclude"                   # p3 has no answer: left out of the MAE
reference = "truth.csv:age"
[[outputs]]
slug = "tissue"
kind = "probabilities"
classes = ["a", "b", "c"]
reference = "truth.csv:tissue"
[[metrics]]
name = "mae_complete"
metric = "mae"
output = "age-estimate"
groups = "truth.csv:site"
incomplete_group = "null"
[[metrics]]
name = "mae_scored"
metric = "mae"
output = "age-estimate"
groups = "truth.csv:site"
[[metrics]]
name = "brier_by_site"
metric = "brier"
output = "tissue"
groups = "truth.csv:site"
over_groups = "mean_minus_std"
[leaderboard]
score = "aggregates.brier_by_site"
"""

ROWS = {  # patient: site, age, tissue
    "p1": ("X", 50, "a"), "p2": ("X", 60, "b"), "p3": ("Y", 70, "c"),
    "p4": ("Y", 80, "a"), "p5": ("Z", 40, "b"), "p6": ("Z", 30, "c"),
}  # fmt: skip
AGES = {"p1": 55.0, "p2": 58.0, "p4": 90.0, "p5": 41.0, "p6": 36.0}  # p3 without an answer
PROBABILITIES = {
    "p1": [0.7, 0.2, 0.1], "p2": [0.1, 0.8, 0.1], "p3": [0.2, 0.2, 0.6],
    "p4": [0.3, 0.3, 0.4], "p5": [0.5, 0.5, 0.0], "p6": [0.0, 0.1, 0.9],
}  # fmt: skip


def test_grouped_brier_and_an_incomplete_group_by_hand(tmp_path, evaluate_cli):
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text(
        "patient,site,age,tissue\n" + "".join(f"{p},{s},{a},{t}\n" for p, (s, a, t) in ROWS.items())
    )
    toml = tmp_path / "grouped.toml"
    toml.write_text(GROUPED)
    challenge = get(str(toml))
    age, tissue = challenge.phase.outputs
    jobs = [
        JobSpec(challenge.job_inputs(p), {**({age: AGES[p]} if p in AGES else {}), tissue: PROBABILITIES[p]})
        for p in ROWS
    ]
    write_input(tmp_path / "input", jobs)
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    # MAE per site: X (5 + 2) / 2, Y p4 only 10 (p3 excluded), Z (1 + 6) / 2
    assert aggregates["mae_scored_by_group"] == pytest.approx({"X": 3.5, "Y": 10.0, "Z": 3.5})
    assert aggregates["mae_scored"] == pytest.approx((3.5 + 10 + 3.5) / 3)
    # incomplete_group = "null": site Y has a patient without an answer -> null, the mean over X and Z
    assert aggregates["mae_complete_by_group"] == {"X": pytest.approx(3.5), "Y": None, "Z": pytest.approx(3.5)}
    assert aggregates["mae_complete"] == pytest.approx(3.5)
    # Brier (multi-class): per patient sum_k (p_k - [y = k])^2, mean per site, then mean - population std
    classes = ["a", "b", "c"]
    brier = {p: sum((q - (classes[k] == ROWS[p][2])) ** 2 for k, q in enumerate(PROBABILITIES[p])) for p in ROWS}
    sites = {s: np.mean([brier[p] for p in ROWS if ROWS[p][0] == s]) for s in "XYZ"}
    assert aggregates["brier_by_site_by_group"] == pytest.approx(sites)
    values = np.array(list(sites.values()))
    assert aggregates["brier_by_site"] == pytest.approx(values.mean() - values.std())
    assert run.metrics["settings"]["metrics"]["mae_complete"]["incomplete_group"] == "null"
    assert "incomplete_group" not in run.metrics["settings"]["metrics"]["mae_scored"]


_DICE_BY_GRADE = """
[[metrics]]
name = "dice_by_grade"
metric = "dice"
output = "seg"
labels = ["a"]
aggregates = [__FORM__]
groups = "truth.csv:grade"
incomplete_group = __INCOMPLETE__
"""


@pytest.mark.parametrize(
    ("form", "incomplete", "expected"),
    [  # per-case Dice of a: c1 1/3, c2 1, c3 1 (both empty), c4 0 (no segmentation: an empty mask)
        ('"mean"', '"score"', {"low": (1 / 3 + 1) / 2, "high": (1 + 0) / 2}),
        ('"mean"', '"null"', {"low": (1 / 3 + 1) / 2, "high": None}),  # c4 has no output: its grade is null
        # pooled: low 2 * 4 / (8 + 16 + 0), high 2 * 8 / (8 + 8 + 8 + 0)
        ('"dataset"', '"score"', {"low": 1 / 3, "high": 2 / 3}),
    ],
)
def test_a_segmentation_metric_of_one_value_by_group(tmp_path, evaluate_cli, form, incomplete, expected):
    root, references, predictions, likelihoods, grades = tiny_data(tmp_path)
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    extra = _DICE_BY_GRADE.replace("__FORM__", form).replace("__INCOMPLETE__", incomplete)
    toml.write_text(toml.read_text().replace("[leaderboard]", extra + "[leaderboard]"))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    key = f"dice_by_grade_a_{form.strip(chr(34))}"
    assert aggregates["dice_by_grade_by_group"] == pytest.approx(expected)
    scored = [value for value in expected.values() if value is not None]
    assert aggregates[key] == pytest.approx(sum(scored) / len(scored))
    assert run.metrics["case"]["c1"]["dice_by_grade_a"] == pytest.approx(1 / 3)  # per case as without groups


_BOXES_BY_SITE = """
name = "boxes-by-site"
title = "Cell detection per site"
[[inputs]]
slug = "histopathology-image"
[[outputs]]
slug = "cells"
kind = "boxes"
reference = "boxes/{case}.json"
[[metrics]]
name = "ap_by_site"
metric = "detection_average_precision"
output = "cells"
groups = "sites.csv:site"
undefined_group = "exclude"           # site C: no reference box, AP undefined
[leaderboard]
score = "aggregates.ap_by_site"
"""


def test_detection_average_precision_by_group_by_hand(tmp_path):
    """The images' AP per site (all-point interpolated, by hand: helpers.voc_ap on greedy IoU matches)."""
    ref_boxes, pred_boxes, _, _ = detection_data()
    sites = {"img0": "A", "img1": "A", "img2": "B", "img3": "B", "img4": "C", "img5": "C"}
    declaration = tmp_path / "boxes-by-site.toml"
    declaration.write_text(_BOXES_BY_SITE)
    for image in IMAGES:
        write_json(tmp_path / "gt" / "boxes" / f"{image}.json", ref_boxes[image])
        write_json(tmp_path / "outputs" / image / "cells.json", platform_boxes(pred_boxes[image]))
    (tmp_path / "gt" / "sites.csv").write_text("case,site\n" + "".join(f"{i},{s}\n" for i, s in sites.items()))
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    expected = {}
    for site in "AB":
        members = [image for image in IMAGES if sites[image] == site]
        scores, flags, _, n = detections({i: ref_boxes[i] for i in members}, {i: pred_boxes[i] for i in members},
                                         "iou", 0.5)  # fmt: skip
        expected[site] = voc_ap(scores, flags, n)
    aggregates = metrics["aggregates"]
    found = aggregates["ap_by_site_by_group"]
    assert found["C"] is None and {site: found[site] for site in "AB"} == pytest.approx(expected, abs=1e-12)
    assert aggregates["ap_by_site"] == pytest.approx((expected["A"] + expected["B"]) / 2, abs=1e-12)
