"""Weighted leaderboards: a metric's case weights from a reference column (``sample_weights``, with
``zero_weight`` and ``absent_weight``), and ``ties = "wrong"`` on the argmax metrics of a probabilities
output. Expected values from scikit-learn with ``sample_weight`` (the definition isic-challenge-scoring 5.6.0
calls, ``classification.py``) and from hand counts written here; ISIC's own comparisons:
test_isic_declaration.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, mean_absolute_error, roc_auc_score

from evaluation.declarative import measures
from evaluation.declarative.engine import DeclaredChallenge
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.platform.metrics_json import json_safe

PROBABILITIES = """
name = "weighted"
title = "Weighted"
[submission]
kind = "csv"
id_column = "image"
[cases]
id_column = "image"
word = "image"
[[outputs]]
slug = "diagnosis"
kind = "probabilities"
classes = ["A", "B", "C"]
sum = "any"
reference = "truth.csv"
[[metrics]]
metric = "balanced_accuracy"
output = "diagnosis"
METRIC
[leaderboard]
score = "aggregates.balanced_accuracy"
"""

NUMBERS = """
name = "weighted-numbers"
title = "Weighted numbers"
[submission]
kind = "csv"
[[outputs]]
slug = "p"
kind = "number"
reference = "truth.csv:y"
range = [0, 1]
[[metrics]]
metric = "auroc"
output = "p"
sample_weights = "truth.csv:w"
[[metrics]]
metric = "mae"
output = "p"
sample_weights = "truth.csv:w"
zero_weight = ["c3"]
[leaderboard]
score = "aggregates.auroc"
"""


def _run(toml: str, root: Path, truth: str, predictions: str) -> dict:
    for folder, name, text in (("gt", "truth.csv", truth), ("in", "predictions.csv", predictions)):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / name).write_text(text)
    challenge = DeclaredChallenge(parse(toml, "weighted.toml", str(root)))
    settings = challenge.settings({})
    reference = challenge.load_reference(root / "gt", settings)
    prepared = challenge.prepare(root / "in", reference, settings)
    results = {task.case: challenge.score_case(task, settings) for task in prepared.tasks}
    return json_safe(challenge.aggregate(results or prepared.scored, prepared.missing, reference, settings))


TRUTH = "image,A,B,C,w\ni1,1,0,0,1\ni2,1,0,0,2\ni3,0,1,0,0\ni4,0,1,0,1\ni5,0,0,1,0.5\ni6,0,0,1,1\n"
SCORES = "image,A,B,C\ni1,0.5,0.5,0\ni2,0.7,0.2,0.1\ni3,0.1,0.8,0.1\ni4,0.6,0.3,0.1\ni5,0.2,0.2,0.6\ni6,0.3,0.3,0.3\n"


def test_balanced_accuracy_weighted_with_ties_wrong(tmp_path):
    """Rows 1 (A/B) and 6 (A/B/C) tie: no class, wrong; row 3 weighs 0."""
    metric = 'ties = "wrong"\nsample_weights = "truth.csv:w"'
    found = _run(PROBABILITIES.replace("METRIC", metric), tmp_path, TRUTH, SCORES)["aggregates"]
    truth, predicted = ["A", "A", "B", "B", "C", "C"], ["-", "A", "B", "A", "C", "-"]
    expected = balanced_accuracy_score(truth, predicted, sample_weight=[1, 2, 0, 1, 0.5, 1])
    assert found["balanced_accuracy"] == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx((2 / 3 + 0 + 0.5 / 1.5) / 3)  # by hand: A 2 of 3, B 0 of 1, C 0.5 of 1.5


def test_ties_first_is_the_default(tmp_path):
    found = _run(PROBABILITIES.replace("METRIC", ""), tmp_path, TRUTH, SCORES)["aggregates"]
    expected = balanced_accuracy_score(["A", "A", "B", "B", "C", "C"], ["A", "A", "B", "A", "C", "A"])
    assert found["balanced_accuracy"] == pytest.approx(expected, abs=1e-12)


def test_a_number_output_weighted(tmp_path):
    truth = "case,y,w\nc1,1,1\nc2,0,2\nc3,1,1\nc4,0,0.5\nc5,1,0\n"
    predictions = "case,p\nc1,0.8\nc2,0.3\nc3,0.2\nc4,0.9\nc5,0.1\n"
    found = _run(NUMBERS, tmp_path, truth, predictions)["aggregates"]
    y, p, w = np.array([1, 0, 1, 0, 1]), np.array([0.8, 0.3, 0.2, 0.9, 0.1]), np.array([1, 2, 1, 0.5, 0])
    assert found["auroc"] == pytest.approx(roc_auc_score(y, p, sample_weight=w), abs=1e-12)
    w[2] = 0  # zero_weight = ["c3"]
    assert found["mae"] == pytest.approx(mean_absolute_error(y, p, sample_weight=w), abs=1e-12)


def test_absent_weight_when_the_column_is_absent(tmp_path):
    metric = 'sample_weights = "truth.csv:weight"\nabsent_weight = 1.0\nzero_weight = ["i2"]'
    found = _run(PROBABILITIES.replace("METRIC", metric), tmp_path, TRUTH, SCORES)["aggregates"]
    predicted = ["A", "A", "B", "A", "C", "A"]
    expected = balanced_accuracy_score(["A", "A", "B", "B", "C", "C"], predicted, sample_weight=[1, 0, 1, 1, 1, 1])
    assert found["balanced_accuracy"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("truth", "line"),
    [
        *((TRUTH.replace("i4,0,1,0,1", f"i4,0,1,0,{cell}"), f"truth.csv:w: the weight of image i4 ('{cell}') is "
           "not a number >= 0.") for cell in ("x", "-1", "inf", "")),
        ("".join(line.rsplit(",", 1)[0] + ",0\n" for line in TRUTH.splitlines()).replace("A,B,C,0", "A,B,C,w"),
         "truth.csv:w: every image has the weight 0."),
        (TRUTH.replace(",w\n", ",v\n"), "truth.csv lacks the column(s) w, which metric 'balanced_accuracy' reads as "
         "case weights."),
    ],
)  # fmt: skip
def test_bad_weights_are_the_organizers_one_line(tmp_path, truth, line):
    with pytest.raises(ConfigurationError) as error:
        _run(PROBABILITIES.replace("METRIC", 'sample_weights = "truth.csv:w"'), tmp_path, truth, SCORES)
    assert str(error.value) == line


@pytest.mark.parametrize(
    ("content", "error"),
    [(b"\xff\xfe,w\n", "UnicodeDecodeError"), (b'image,w\n"i1,1\n', "ParserError"), (b"", "EmptyDataError"),
     (b"image,w\ni1,1,3\n", "ParserError"), (None, None)],
)  # fmt: skip
def test_a_weights_file_of_its_own_that_is_not_csv_is_the_organizers_one_line(tmp_path, content, error):
    """Its header is read for ``absent_weight`` before any column: a broken file is named, not a traceback."""
    (tmp_path / "gt").mkdir()
    if content is not None:
        (tmp_path / "gt" / "weights.csv").write_bytes(content)
    metric = 'sample_weights = "weights.csv:w"\nabsent_weight = 1.0'
    with pytest.raises(ConfigurationError) as raised:
        _run(PROBABILITIES.replace("METRIC", metric), tmp_path, TRUTH, SCORES)
    assert str(raised.value) == (
        "The ground truth has no weights.csv." if error is None
        else f"weights.csv must be UTF-8 CSV with columns image,w ({error}): fix it in the phase's ground truth."
    )  # fmt: skip


@pytest.mark.parametrize(
    ("metric", "problem"),
    [
        ('sample_weights = "truth.csv"', "weighted.toml: metrics[0].sample_weights: 'truth.csv' is not "
         "'file.csv:column' (the weight of each case)"),
        ('sample_weights = "truth.csv:w"\nbootstrap = true', "weighted.toml: metrics[0].sample_weights: a weighted "
         "metric is neither bootstrapped nor scored by group"),
        ('zero_weight = ["i1"]', "weighted.toml: metrics[0].zero_weight: applies to a weighted metric "
         "(sample_weights = 'file.csv:column')"),
        ('sample_weights = "truth.csv:w"\nabsent_weight = 0.0', "weighted.toml: metrics[0].absent_weight: must be a "
         "positive number"),
        ('ties = "last"', "weighted.toml: metrics[0].ties:"),
    ],
)  # fmt: skip
def test_declaration_problems_name_the_key(metric, problem):
    with pytest.raises(ConfigurationError) as error:
        parse(PROBABILITIES.replace("METRIC", metric), "weighted.toml")
    assert str(error.value).startswith(problem)


def test_a_metric_without_case_weights_refuses_them():
    toml = NUMBERS.replace('metric = "mae"', 'metric = "pearson"')
    with pytest.raises(ConfigurationError, match=r"metrics\[1\]\.sample_weights: pearson takes no case weights"):
        parse(toml, "weighted.toml")


def test_ties_apply_to_probabilities_only():
    toml = PROBABILITIES.replace(
        'kind = "probabilities"\nclasses = ["A", "B", "C"]\nsum = "any"\nreference = "truth.csv"',
        'kind = "choice"\nclasses = ["A", "B", "C"]\nreference = "truth.csv:y"',
    )
    with pytest.raises(ConfigurationError, match=r"metrics\[0\]\.ties: applies to the argmax of a probabilities"):
        parse(toml.replace("METRIC", 'ties = "wrong"'), "weighted.toml")


WHOLE = [
    ("ece", {"bins": 10}),
    ("auroc", {"single_class": "error"}),
    ("average_precision", {"no_positive": "error"}),
    ("auroc_above_sensitivity", {"sensitivity": 0.8, "single_class": 0.5}),
]


@pytest.mark.parametrize(("metric", "params"), WHOLE)
def test_whole_weights_repeat_the_cases(metric, params):
    """A case of weight k counts as k copies of it, per class, through either route (``sample_weight`` or one row of
    the catalogue's ``weights``); a case of weight 0 as none."""
    rng = np.random.default_rng(7)
    classes = ("A", "B", "C")
    truth = np.array(classes)[rng.integers(0, 3, 300)]
    probabilities = np.round(rng.dirichlet(np.ones(3), 300), 2)
    weights = rng.integers(0, 4, 300).astype(float)
    repeated = np.repeat(np.arange(300), weights.astype(int))
    weighted, macro = measures.per_class_metric(metric, truth, probabilities, classes, params, sample=weights)
    expected, expected_macro = measures.per_class_metric(metric, truth[repeated], probabilities[repeated], classes,
                                                         params)  # fmt: skip
    assert weighted == pytest.approx(expected, abs=1e-12)
    assert macro == pytest.approx(expected_macro, abs=1e-12)
