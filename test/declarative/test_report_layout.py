"""``[report.layout]`` (metrics.json as a challenge's own nested document), ``[submission] strip_suffixes``, an
option that sets ``submission.max_mb``, and a whole-set python metric's case weights and texts: on a small
prediction-file phase written here, every expected value counted by hand (ISIC's full document:
test_isic_declaration.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

RULES = """
import numpy as np


def summary(predictions, references, context):
    weights = context.weights["w"]
    hits = (predictions.argmax(axis=1) == np.searchsorted(context.classes, references)).astype(float)
    return {"weighted_hits": float(weights @ hits), "absent": [c for c in context.classes if c not in references],
            "note": "hits weighed by w", "rows": len(references)}
"""

DECLARATION = """
name = "layout"
title = "Layout"
[submission]
kind = "csv"
id_column = "image"
strip_suffixes = [".jpg", ".png"]
[cases]
id_column = "image"
[[outputs]]
slug = "p"
kind = "probabilities"
classes = ["A", "B", "C"]
sum = "any"
reference = "truth.csv"
[[metrics]]
metric = "auroc"
output = "p"
single_class = "exclude"
[[metrics]]
name = "mine"
metric = "python"
output = "p"
function = "rules.py:summary"
over = "set"
key = "{label}"
returns = ["weighted_hits", "absent", "note", "rows"]
sample_weights = ["truth.csv:w"]
[[options]]
name = "max_file_mb"
default = 10.0
sets = ["submission.max_mb"]
[report]
per_case = false
missing = false
settings = "options"
constants = { reference = "by hand" }
flat = true
[report.layout]
"top.hits" = "weighted_hits"
"per_class.{class}.auc" = "auroc_{class}"
"macro.auc" = "auroc_macro"
"top.auc" = "auroc_macro"
"notes.absent" = "absent"
"notes.text" = "note"
"dataset.rows" = "rows"
[leaderboard]
score = "top.auc"
"""

TRUTH = "image,A,B,C,w\ni1,1,0,0,1\ni2,1,0,0,2\ni3,0,1,0,1\ni4,0,1,0,0.5\n"
SCORES = "image,A,B,C\ni1.JPG,0.7,0.2,0.1\ni2.png,0.4,0.5,0.1\ni3,0.3,0.6,0.1\ni4.jpg,0.5,0.4,0.1\n"


def _write(root: Path, toml: str = DECLARATION, truth: str = TRUTH, scores: str = SCORES) -> Path:
    for folder, name, text in (("gt", "truth.csv", truth), ("in", "predictions.csv", scores), ("", "rules.py", RULES),
                               ("", "layout.toml", toml)):  # fmt: skip
        (root / folder).mkdir(exist_ok=True)
        (root / folder / name).write_text(text)
    return root / "layout.toml"


def test_the_document_follows_the_layout(tmp_path, evaluate_cli):
    """AUROC of A: positives i1 (0.7), i2 (0.4) against i3 (0.3), i4 (0.5): 3 of 4 pairs; B: i3 (0.6), i4 (0.4)
    against i1 (0.2), i2 (0.5): 3 of 4; C: no positive, null, out of the macro. Weighted argmax hits: i1 (1) and
    i3 (1) right, i2 (B for A) and i4 (A for B) wrong: 2."""
    run = evaluate_cli(str(_write(tmp_path)), tmp_path / "in", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.last_error_line
    text = (run.output / "metrics.json").read_text()
    assert json.loads(text) == {
        "top": {"hits": 2.0, "auc": 0.75},
        "per_class": {"A": {"auc": 0.75}, "B": {"auc": 0.75}, "C": {"auc": None}},
        "macro": {"auc": 0.75},
        "notes": {"absent": ["C"], "text": "hits weighed by w"},
        "dataset": {"rows": 4},
        "settings": {"challenge": "layout", "reference": "by hand", "max_file_mb": 10.0},
    }
    assert list(json.loads(text)) == ["top", "per_class", "macro", "notes", "dataset", "settings"]


def test_an_option_sets_the_largest_file(tmp_path, evaluate_cli):
    run = evaluate_cli(str(_write(tmp_path)), tmp_path / "in", "--set", "max_file_mb=0.00001",
                       ground_truth=tmp_path / "gt")  # fmt: skip
    assert (run.exit_code, run.wrote_metrics) == (1, False)
    assert run.last_error_line.startswith("The prediction file predictions.csv is 0.0 MB (")
    assert "more than the 1e-05 MB allowed" in run.last_error_line


def test_a_suffix_stripped_twice_is_a_case_twice(tmp_path, evaluate_cli):
    scores = SCORES + "i3.jpg,0.3,0.6,0.1\n"
    run = evaluate_cli(str(_write(tmp_path, scores=scores)), tmp_path / "in", ground_truth=tmp_path / "gt")
    assert run.last_error_line == "Line 6 of the prediction file predictions.csv repeats case i3 (first on line 4)."


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('"dataset.rows" = "rows"\n', "", "report.layout: places no path for the aggregate 'rows'"),
        ('"macro.auc" = "auroc_macro"', '"per_class.A" = "auroc_macro"', "report.layout: 'per_class.A' is written "
         "twice, or both a value and an object"),
        ('"top.hits" = "weighted_hits"', '"settings.hits" = "weighted_hits"', "report.layout.settings.hits: "
         "'settings.hits' is not a path"),
        ('"top.hits" = "weighted_hits"', '"top.{class}" = "weighted_hits"', "report.layout.top.{class}: {class} goes "
         "in both the path and the key"),
        ('"top.hits" = "weighted_hits"', '"top.hits" = "hits"', "report.layout.top.hits: 'hits' is not an aggregate "
         "key"),
        ('"top.hits" = "weighted_hits"', '"top..hits" = "weighted_hits"', "report.layout.top..hits: 'top..hits' is "
         "not a path"),
        ('strip_suffixes = [".jpg", ".png"]', 'strip_suffixes = [""]', "submission.strip_suffixes: must be suffixes"),
        ('sets = ["submission.max_mb"]', 'sets = ["submission.file"]', "options[0].sets: 'submission.file' names no "
         "declared value"),
        ('sets = ["submission.max_mb"]', 'sets = ["leaderboard"]', "options[0].values: needs a whole [leaderboard] "
         "per choice"),
    ],
)  # fmt: skip
def test_layout_problems_name_the_key(tmp_path, old, new, problem):
    path = _write(tmp_path, DECLARATION.replace(old, new, 1))
    with pytest.raises(ConfigurationError) as error:
        parse(path.read_text(), "layout.toml", str(tmp_path))
    assert str(error.value).startswith(f"layout.toml: {problem}")


READER = """
import numpy as np

from evaluation.errors import SubmissionError


def read(context):
    text = context.text().read()
    if "bad" in text:
        raise SubmissionError(f"{context.file}: bad ({context.size} bytes, {context.max_mb:g} MB allowed).")
    rows = [line.split(";") for line in text.splitlines()[1:]]
    if "wrong" in text:
        return [rows]
    cases = context.cases or [row[0] for row in rows]
    return {row[0]: dict(zip(context.columns, map(float, row[1:]))) for row in rows if row[0] in cases}


def read_columns(context):
    rows = [line.split(";") for line in context.text().read().splitlines()[1:]]
    cases = context.cases or [row[0] for row in rows]
    kept = [row for row in rows if row[0] in cases]
    return [row[0] for row in kept], np.array([row[1:] for row in kept], dtype=float).reshape(len(kept), -1)
"""


def _reading(root: Path, scores: str, reader: str = "read") -> Path:
    toml = DECLARATION.replace('strip_suffixes = [".jpg", ".png"]', f'reader = "reader.py:{reader}"')
    (root / "reader.py").write_text(READER)
    return _write(root, toml, scores=scores)


def test_a_reader_of_its_own(tmp_path, evaluate_cli):
    """A semicolon-separated file, read by the declaration's reader: the same document as the CSV above."""
    scores = "image;A;B;C\ni1;0.7;0.2;0.1\ni2;0.4;0.5;0.1\ni3;0.3;0.6;0.1\ni4;0.5;0.4;0.1\n"
    run = evaluate_cli(str(_reading(tmp_path, scores)), tmp_path / "in", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.last_error_line
    assert json.loads((run.output / "metrics.json").read_text())["top"] == {"hits": 2.0, "auc": 0.75}


@pytest.mark.parametrize(
    ("scores", "line"),
    [
        ("image;A;B;C\nbad\n", "predictions.csv: bad (16 bytes, 10 MB allowed)."),
        ("image;A;B;C\nwrong\n", "reader.py: read: the prediction file predictions.csv: returned a list, not {case: "
         "{column: value}}"),
        ("image;A;B;C\ni1;0.7;0.2;0.1\n", "reader.py:read: returned no row for case i2 (the reader checks the cases)"),
    ],
)  # fmt: skip
def test_a_readers_problems(tmp_path, evaluate_cli, scores, line):
    """The reader's SubmissionError is the participant's line; a return of another shape, or without a reference
    case, the organizer's."""
    run = evaluate_cli(str(_reading(tmp_path, scores)), tmp_path / "in", ground_truth=tmp_path / "gt")
    assert (run.exit_code, run.wrote_metrics) == (1, False)
    assert run.last_error_line.startswith(line)


@pytest.mark.parametrize(
    ("scores", "whole"),
    [
        ("image;A;B;C\ni1;0.7;0.2;0.1\ni2;0.4;0.5;0.1\ni3;0.3;0.6;0.1\ni4;0.5;0.4;0.1\n", True),
        ("image;A;B;C\ni4;0.5;0.4;0.1\ni2;0.4;0.5;0.1\ni3;0.3;0.6;0.1\ni1;0.7;0.2;0.1\ni9;0.1;0.1;0.1\n", True),
        ("image;A;B;C\ni1;0.7;0.2;0.1\ni2;0.4;0.5;0.1\ni3;0.3;1.6;0.1\ni4;0.5;0.4;0.1\n", False),
        ("image;A;B;C\ni1;0.7;0.2;0.1\ni2;0.4;0.5;0.1\ni3;0.3;nan;0.1\ni4;0.5;0.4;0.1\n", False),
        ("image;A;B;C\ni1;0.7;0.2;0.1\ni3;0.3;0.6;0.1\ni4;0.5;0.4;0.1\n", False),
        ("image;A;B;C\ni1;0.7;0.2;0.1\ni2;0.4;0.5;0.1\ni3;0.3;0.6;0.1\ni4;0.5;0.4;0.1\ni2;0.4;0.5;0.1\n", False),
    ],
    ids=["in-order", "shuffled", "outside", "nan", "lacking", "twice"],
)
def test_a_reader_returning_columns(tmp_path, evaluate_cli, scores, whole):
    """A reader may return (cases, matrix): scored whole, the same metrics.json as its rows give; a value the
    rows refuse (outside [0, 1], not finite), a case lacking or given twice: read as its rows, their own line."""
    runs = []
    for reader in ("read", "read_columns"):
        root = tmp_path / reader
        root.mkdir()
        runs.append(evaluate_cli(str(_reading(root, scores, reader)), root / "in", ground_truth=root / "gt"))
    rows, columns = runs
    assert (columns.exit_code, columns.wrote_metrics) == (rows.exit_code, rows.wrote_metrics)
    assert ("(as columns)" in columns.stdout, "(as columns)" in rows.stdout) == (whole, False)
    if rows.exit_code == 0:
        assert (columns.output / "metrics.json").read_bytes() == (rows.output / "metrics.json").read_bytes()
    else:
        assert columns.last_error_line == rows.last_error_line.replace("reader.py:read:", "reader.py:read_columns:")
