"""``metric = "auroc_above_sensitivity"`` declared (a number output, a probabilities output per class), run
through the command line on prediction-file phases written here, against isic-challenge-scoring 5.6.0
``metrics.auc_above_sensitivity`` (run here); its edge case (a single class) as declared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from isic_challenge_scoring.metrics import auc_above_sensitivity as reference

N = 40
IMAGES = [f"img{k:02d}" for k in range(N)]
rng = np.random.default_rng(80)
LABELS = np.r_[0, 1, 2, rng.integers(0, 3, N - 3)]
SCORES = np.round((rng.random((N, 3)) + 0.5 * np.eye(3)[LABELS]) / 1.5, 2)  # in [0, 1], tied
CLASSES = ("A", "B", "C")

HEAD = """
name = "partial-auroc"
title = "Partial AUROC above a sensitivity"
[submission]
kind = "csv"
id_column = "image"
[cases]
id_column = "image"
word = "image"
"""
NUMBER = (
    HEAD
    + """
[[outputs]]
slug = "p"
kind = "number"
reference = "truth.csv:label"
range = [0, 2]
[[metrics]]
metric = "auroc_above_sensitivity"
output = "p"
sensitivity = 0.6
[leaderboard]
score = "aggregates.auroc_above_sensitivity"
"""
)
PER_CLASS = (
    HEAD
    + """
[[outputs]]
slug = "diagnosis"
kind = "probabilities"
classes = ["A", "B", "C"]
sum = "any"
reference = "truth.csv:label"
[[metrics]]
name = "pauc"
metric = "auroc_above_sensitivity"
output = "diagnosis"
single_class = "exclude"
[leaderboard]
score = "aggregates.pauc_macro"
"""
)


def official(truth: np.ndarray, scores: np.ndarray, sensitivity: float) -> float:
    return reference(pd.Series(truth, dtype=float), pd.Series(scores), pd.Series(np.ones(truth.size)), sensitivity)


def phase(root: Path, declaration: str, truth: list, predictions: pd.DataFrame) -> tuple[str, Path, Path]:
    (root / "gt").mkdir()
    (root / "in").mkdir()
    pd.DataFrame({"image": IMAGES, "label": truth}).to_csv(root / "gt" / "truth.csv", index=False)
    predictions.insert(0, "image", IMAGES)
    predictions.to_csv(root / "in" / "predictions.csv", index=False)
    (root / "partial.toml").write_text(declaration)
    return str(root / "partial.toml"), root / "in", root / "gt"


def test_a_number_output_equals_the_reference(tmp_path, evaluate_cli):
    truth = (LABELS == 1).astype(int)
    toml, inputs, gt = phase(tmp_path, NUMBER, truth.tolist(), pd.DataFrame({"p": SCORES[:, 1]}))
    run = evaluate_cli(toml, inputs, ground_truth=gt)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]["auroc_above_sensitivity"]
    assert got == pytest.approx(official(truth, SCORES[:, 1], 0.6), abs=1e-12)
    assert run.metrics["settings"]["metrics"]["auroc_above_sensitivity"]["sensitivity"] == 0.6


def test_per_class_and_macro_equal_the_reference(tmp_path, evaluate_cli):
    truth = [CLASSES[k] for k in LABELS]
    toml, inputs, gt = phase(tmp_path, PER_CLASS, truth, pd.DataFrame(SCORES, columns=list(CLASSES)))
    run = evaluate_cli(toml, inputs, ground_truth=gt)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    one_vs_rest = np.equal.outer(LABELS, np.arange(3)).astype(int)
    expected = {f"pauc_{c}": official(one_vs_rest[:, j], SCORES[:, j], 0.8) for j, c in enumerate(CLASSES)}
    expected["pauc_macro"] = float(np.mean(list(expected.values())))
    assert {key: got[key] for key in expected} == pytest.approx(expected, abs=1e-12)


def test_a_single_class_is_refused_excluded_or_the_declared_value(tmp_path, evaluate_cli):
    truth = ["A" if k == 0 else "B" for k in LABELS]  # no image of class C
    predictions = pd.DataFrame(SCORES, columns=list(CLASSES))
    toml, inputs, gt = phase(tmp_path, PER_CLASS, truth, predictions)
    got = evaluate_cli(toml, inputs, ground_truth=gt).metrics["aggregates"]
    assert got["pauc_C"] is None and got["pauc_macro"] == pytest.approx((got["pauc_A"] + got["pauc_B"]) / 2)
    Path(toml).write_text(PER_CLASS.replace('single_class = "exclude"', "single_class = 0.0"))
    assert evaluate_cli(toml, inputs, ground_truth=gt).metrics["aggregates"]["pauc_C"] == 0.0
    Path(toml).write_text(PER_CLASS.replace('single_class = "exclude"\n', ""))
    run = evaluate_cli(toml, inputs, ground_truth=gt)
    assert (run.exit_code, run.wrote_metrics) == (1, False)
    assert run.last_error_line == (
        "The reference of output 'diagnosis' holds no case of class 'C' over the scored cases: "
        "auroc_above_sensitivity is undefined for it (declare single_class = <number> or 'exclude')."
    )
