"""A ``probabilities`` output in a declared prediction-file phase: the participant's CSV holds one
probability column per class (ISIC's ``image,MEL,NV,BCC,...``). Run end to end through the command
line on a declaration written here; every number equal to scikit-learn and to the official ISIC
scoring package (``isic-challenge-scoring`` 5.6.0, for the metrics whose definitions coincide) to
1e-9; every refused CSV by its exact last stderr line (no metrics.json); make_input's CSV scored as
the hand-written one; every bad declaration by the key its message names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import documented_section
from declarative.helpers import first_argmax, isic_score, leaning_probabilities
from isic_challenge_scoring import classification as isic_classification
from isic_challenge_scoring.classification import ClassificationScore
from sklearn.metrics import accuracy_score, average_precision_score, balanced_accuracy_score, roc_auc_score

from evaluation import check, make_input
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

CLASSES = ("MEL", "NV", "BCC", "BKL")
N = 16
IMAGES = [f"ISIC_{i:07d}" for i in range(1, N + 1)]
FILE = "predictions.csv"

DECLARATION = """
name = "isic-like"
title = "An ISIC-like prediction-file phase: one probability column per diagnosis"
[submission]
kind = "csv"
id_column = "image"
[cases]
id_column = "image"
word = "image"
[[outputs]]
slug = "diagnosis"
kind = "probabilities"
classes = ["MEL", "NV", "BCC", "BKL"]  # the CSV columns MEL, NV, BCC, BKL (default: each class's name)
reference = "truth.csv:diagnosis"
[[metrics]]
metric = "balanced_accuracy"
output = "diagnosis"
[[metrics]]
name = "auc"
metric = "auroc"
output = "diagnosis"
[[metrics]]
name = "ap"
metric = "average_precision"
output = "diagnosis"
[[metrics]]
metric = "brier"
output = "diagnosis"
[[metrics]]
metric = "accuracy"
output = "diagnosis"
[leaderboard]
score = "aggregates.balanced_accuracy"
[[leaderboard.columns]]
title = "AUC (macro)"
path = "aggregates.auc_macro"
"""


TRUTH, PROBABILITIES = leaning_probabilities(CLASSES, N, seed=5, own=0.34, other=0.22, total=20)


def csv_lines(probabilities: np.ndarray = PROBABILITIES, header: tuple[str, ...] = CLASSES) -> list[str]:
    """The participant's CSV: the header, then a row per image in file order (line i + 2 for image i)."""
    return [",".join(("image", *header))] + [
        ",".join((image, *(str(p) for p in row))) for image, row in zip(IMAGES, probabilities, strict=True)
    ]


def phase_files(root: Path, lines: list[str] | None = None, text: str = DECLARATION) -> tuple[Path, Path, Path]:
    """The declaration, the ground truth (truth.csv: a class name per image) and the input folder."""
    toml, ground_truth, input_dir = root / "isic-like.toml", root / "gt", root / "input"
    toml.write_text(text)
    ground_truth.mkdir()
    rows = [f"{image},{label}" for image, label in zip(IMAGES, TRUTH, strict=True)]
    (ground_truth / "truth.csv").write_text("\n".join(["image,diagnosis", *rows]) + "\n")
    input_dir.mkdir()
    (input_dir / FILE).write_text("\n".join(csv_lines() if lines is None else lines) + "\n")
    return toml, ground_truth, input_dir


def isic_reference(root: Path, predictions: Path) -> ClassificationScore:
    """The official ISIC scoring of the same CSV against the same truth, written in its one-hot
    format (``image`` and a 0/1 column per category; without weight columns every weight is 1.0)."""
    truth = root / "isic-truth.csv"
    rows = [",".join((image, *("1.0" if c == label else "0.0" for c in CLASSES))) for image, label in
            zip(IMAGES, TRUTH, strict=True)]  # fmt: skip
    truth.write_text("\n".join([",".join(("image", *CLASSES)), *rows]) + "\n")
    return isic_score(truth, predictions)


def test_an_isic_like_phase_equals_scikit_learn_and_the_isic_scoring(tmp_path, evaluate_cli, monkeypatch):
    toml, ground_truth, input_dir = phase_files(tmp_path)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    assert sorted(got) == sorted(
        ["balanced_accuracy", "brier", "accuracy", "auc_macro", "ap_macro"]
        + [f"{name}_{c}" for name in ("auc", "ap") for c in CLASSES]
    )
    for k, c in enumerate(CLASSES):
        assert got[f"auc_{c}"] == pytest.approx(roc_auc_score(c == TRUTH, PROBABILITIES[:, k]), abs=1e-9)
        assert got[f"ap_{c}"] == pytest.approx(average_precision_score(c == TRUTH, PROBABILITIES[:, k]), abs=1e-9)
    assert got["auc_macro"] == pytest.approx(np.mean([got[f"auc_{c}"] for c in CLASSES]), abs=1e-12)
    assert got["ap_macro"] == pytest.approx(np.mean([got[f"ap_{c}"] for c in CLASSES]), abs=1e-12)
    predicted = first_argmax(PROBABILITIES, CLASSES)
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(TRUTH, predicted), abs=1e-9)
    assert got["accuracy"] == pytest.approx(accuracy_score(TRUTH, predicted), abs=1e-9)
    one_hot = (TRUTH[:, None] == np.array(CLASSES)).astype(float)
    assert got["brier"] == pytest.approx(sum(((PROBABILITIES - one_hot) ** 2).sum(axis=1)) / N, abs=1e-9)
    assert 0.3 < got["balanced_accuracy"] < 1 and 0.5 < got["auc_macro"] < 1  # neither trivial nor perfect

    monkeypatch.setattr(isic_classification.metrics, "roc", lambda *args: None)  # display curves only (slow)
    isic = isic_reference(tmp_path, input_dir / FILE)
    assert got["balanced_accuracy"] == pytest.approx(isic.aggregate["balanced_accuracy"], abs=1e-9)
    for c in CLASSES:  # scikit-learn with every weight 1: the same one-vs-rest areas
        assert got[f"auc_{c}"] == pytest.approx(isic.per_category.loc[c, "auc"], abs=1e-9)
        assert got[f"ap_{c}"] == pytest.approx(isic.per_category.loc[c, "ap"], abs=1e-9)
    assert got["auc_macro"] == pytest.approx(isic.macro_average["auc"], abs=1e-9)
    assert got["ap_macro"] == pytest.approx(isic.macro_average["ap"], abs=1e-9)

    document = run.metrics
    assert document["case"][IMAGES[0]] == {"diagnosis": dict(zip(CLASSES, PROBABILITIES[0].tolist(), strict=True))}
    assert document["missing"] == {"rows": [], "diagnosis": []}
    assert document["settings"]["outputs"]["diagnosis"]["columns"] == {c: c for c in CLASSES}


RENAMED = DECLARATION.replace(
    'reference = "truth.csv:diagnosis"',
    'reference = "truth.csv:diagnosis"\ncolumns = { MEL = "p_mel", BKL = "p_bkl" }\nmissing = "worst-value"',
)


def test_renamed_columns_and_missing_rows_under_the_policy(tmp_path, evaluate_cli):
    """``columns`` renames two classes' columns; a row of blank class cells and a case without a row
    get the worst value (all mass on the first declared class that is not the reference)."""
    lines = csv_lines(header=("p_mel", "NV", "BCC", "p_bkl"))
    lines = [line + ",note" for line in lines]  # an extra column: ignored
    lines[3] = f"{IMAGES[2]},,,,,blank"  # image 3: every class cell blank
    del lines[6]  # image 6: no row
    toml, ground_truth, input_dir = phase_files(tmp_path, lines, RENAMED)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    expected = PROBABILITIES.copy()
    for i in (2, 5):
        wrong = next(c for c in CLASSES if c != TRUTH[i])
        expected[i] = [float(c == wrong) for c in CLASSES]
    got = run.metrics["aggregates"]
    for k, c in enumerate(CLASSES):
        assert got[f"auc_{c}"] == pytest.approx(roc_auc_score(c == TRUTH, expected[:, k]), abs=1e-9)
    assert got["balanced_accuracy"] == pytest.approx(
        balanced_accuracy_score(TRUTH, first_argmax(expected, CLASSES)), abs=1e-9
    )
    document = run.metrics
    assert document["missing"] == {"rows": [IMAGES[5]], "diagnosis": [IMAGES[2], IMAGES[5]]}
    assert document["case"][IMAGES[2]] == {"diagnosis": None}  # an imputed answer is never shown
    assert document["settings"]["outputs"]["diagnosis"]["columns"] == {
        "MEL": "p_mel", "NV": "NV", "BCC": "BCC", "BKL": "p_bkl"
    }  # fmt: skip


def replace_row(index: int, cells: str):
    """A change of the CSV: image ``index`` (0-based, on line index + 2) gets the class cells ``cells``."""
    return lambda lines: [*lines[: index + 1], f"{IMAGES[index]},{cells}", *lines[index + 2 :]]


IMAGE = IMAGES[4]  # on line 6
ALL = "columns 'MEL', 'NV', 'BCC', 'BKL'"
CSV_ERRORS = {
    "some class cells blank": (
        replace_row(4, "0.5,,0.5,"),
        f"Line 6 of the prediction file {FILE} has no value for image {IMAGE} in column 'NV'; the output "
        "'diagnosis' needs a probability in each of its columns, or none.",
    ),
    "every class cell blank, policy error": (
        replace_row(4, ",,,"),
        f"Line 6 of the prediction file {FILE} has no value for image {IMAGE} in {ALL}.",
    ),
    "not a number": (
        replace_row(4, "0.5,half,0.25,0.25"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, column 'NV') is 'half', not a number.",
    ),
    "a digit separator": (
        replace_row(4, "0.2_5,0.25,0.25,0.25"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, column 'MEL') is '0.2_5', not a number.",
    ),
    "not finite": (
        replace_row(4, "0.5,0.5,inf,0"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, column 'BCC') is 'inf', not a finite number.",
    ),
    "NaN": (
        replace_row(4, "nan,0.5,0.5,0"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, column 'MEL') is 'nan', not a finite number.",
    ),
    "negative": (
        replace_row(4, "0.6,0.6,-0.2,0"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, column 'BCC') is -0.2; a probability cannot "
        "be negative.",
    ),
    "above 1": (
        replace_row(4, "0,0,0,1.5"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, column 'BKL') is 1.5, outside [0, 1].",
    ),
    "a sum off 1": (
        replace_row(4, "0.5,0.2,0.1,0.1"),
        f"The output 'diagnosis' of image {IMAGE} (line 6 of {FILE}, {ALL}) sums to 0.9; the probabilities must "
        "sum to 1 (within 0.001).",
    ),
    "a class column missing": (
        lambda lines: [line.rsplit(",", 1)[0] for line in lines],
        f"The prediction file {FILE} has no column 'BKL' (output 'diagnosis', class 'BKL'); its columns: 'image', "
        "'MEL', 'NV', 'BCC'.",
    ),
    "a row missing": (
        lambda lines: [line for line in lines if not line.startswith(IMAGE)],
        f"The prediction file {FILE} has no row for image {IMAGE}; every image needs the output 'diagnosis'.",
    ),
    "a cell too few": (
        replace_row(4, "0.5,0.5,0"),
        f"Line 6 of the prediction file {FILE} has 4 cells; its header has 5 columns.",
    ),
}


@pytest.mark.parametrize("name", list(CSV_ERRORS))
def test_a_bad_row_fails_with_one_line_naming_line_case_and_column(tmp_path, evaluate_cli, name):
    change, message = CSV_ERRORS[name]
    toml, ground_truth, input_dir = phase_files(tmp_path, change(csv_lines()))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.last_error_line) == (1, message)
    assert not run.wrote_metrics and "Traceback" not in run.stderr + run.stdout


def test_the_check_reads_the_class_columns_as_the_evaluation(tmp_path, capsys):
    toml, _, input_dir = phase_files(tmp_path)
    assert check.main(["--challenge", str(toml), "--input", str(input_dir)]) == 0
    assert f"{N} rows checked, all outputs valid" in capsys.readouterr().out
    (input_dir / FILE).write_text("\n".join(replace_row(4, ",,,")(csv_lines())) + "\n")
    uniform = toml.read_text().replace('reference = "truth.csv:diagnosis"', 'reference = "truth.csv:diagnosis"\n'
                                       'missing = "uniform"')  # fmt: skip
    toml.write_text(uniform)
    assert check.main(["--challenge", str(toml), "--input", str(input_dir)]) == 0
    assert (
        f"Warning: image {IMAGE} (line 6 of {FILE}, {ALL}): no value; the evaluation applies the missing policy "
        "'uniform'." in capsys.readouterr().out
    )
    change, message = CSV_ERRORS["a sum off 1"]
    (input_dir / FILE).write_text("\n".join(change(csv_lines())) + "\n")
    assert check.main(["--challenge", str(toml), "--input", str(input_dir)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == message


def test_make_input_writes_the_class_columns_from_job_answers(tmp_path, evaluate_cli, capsys):
    """make_input turns DIR/<image>/diagnosis.json (a JSON object or a list) into the class columns;
    the run equals the hand-written CSV's, and an answer of the wrong shape is refused."""
    toml, ground_truth, input_dir = phase_files(tmp_path)
    outputs = tmp_path / "outputs"
    for i, image in enumerate(IMAGES):
        answer = PROBABILITIES[i].tolist()
        (outputs / image).mkdir(parents=True)
        document = dict(zip(reversed(CLASSES), reversed(answer), strict=True)) if i % 2 else answer
        (outputs / image / "diagnosis.json").write_text(json.dumps(document))
    built = tmp_path / "built"
    assert make_input.main(["--challenge", str(toml), "--outputs", str(outputs), "--output", str(built)]) == 0
    assert f"Wrote {N} rows of a prediction file" in capsys.readouterr().out
    lines = (built / FILE).read_text().splitlines()
    assert lines[0] == "image,MEL,NV,BCC,BKL"
    assert lines[1:] == sorted(csv_lines()[1:])  # a row per image folder, in name order
    by_hand = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth).metrics
    built_run = evaluate_cli(str(toml), built, ground_truth=ground_truth).metrics
    assert built_run["aggregates"] == by_hand["aggregates"] and built_run["case"] == by_hand["case"]
    assert check.main(["--challenge", str(toml), "--outputs", str(outputs)]) == 0
    assert f"{N} rows checked, all outputs valid" in capsys.readouterr().out

    (outputs / IMAGES[0] / "diagnosis.json").unlink()  # absent: blank class cells
    assert make_input.main(["--challenge", str(toml), "--outputs", str(outputs), "--output", str(built)]) == 0
    assert (built / FILE).read_text().splitlines()[1] == f"{IMAGES[0]},,,,"
    (outputs / IMAGES[0] / "diagnosis.json").write_text("[0.5, 0.5]")
    assert make_input.main(["--challenge", str(toml), "--outputs", str(outputs), "--output", str(built)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"Case {IMAGES[0]}: diagnosis.json is a list of 2 values; it needs 4, one per class in the order MEL, NV, "
        "BCC, BKL."
    )


OUTPUT = 'reference = "truth.csv:diagnosis"'
AGE = '\n[[outputs]]\nslug = "age"\nkind = "number"\nreference = "truth.csv:age"\n'
JOBS = DECLARATION.split("[submission]")[0] + '[[inputs]]\nslug = "dermoscopy"\n'
JOBS += DECLARATION.split('word = "image"')[1]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (OUTPUT, OUTPUT + '\ncolumn = "p"', r"isic-like\.toml: outputs\[0\]\.column: a probabilities output reads one "
         r"column per class: declare columns = \{ <class> = '<CSV column>', \.\.\. \} \(default: each class's own "
         r"name\)$"),
        (OUTPUT, OUTPUT + "\ncolumns = 3", r"outputs\[0\]\.columns: must be a table, not an integer 3$"),
        (OUTPUT, OUTPUT + '\ncolumns = { AK = "p_ak" }',
         r"outputs\[0\]\.columns\.AK: is not a class of this output \(MEL, NV, BCC, BKL\)$"),
        (OUTPUT, OUTPUT + "\ncolumns = { MEL = 1 }",
         r"outputs\[0\]\.columns\.MEL: must be a string, not an integer 1$"),
        (OUTPUT, OUTPUT + '\ncolumns = { NV = " nv" }',
         r"outputs\[0\]\.columns\.NV: ' nv' is not a column name \(none, or with surrounding spaces\)$"),
        (OUTPUT, OUTPUT + '\ncolumns = { BCC = "image" }',
         r"outputs\[0\]\.columns\.BCC: 'image' is the case column of the prediction CSV \(\[submission\] id_column\)$"),
        (OUTPUT, OUTPUT + '\ncolumns = { BCC = "MEL" }', r"outputs\[0\]\.columns\.BCC: 'MEL' is the column of class "
         r"'MEL' too$"),
        ('classes = ["MEL"', 'classes = ["image"', r"outputs\[0\]\.columns\.image: 'image' is the case column"),
        ("[[metrics]]", AGE.replace("truth.csv:age", 'truth.csv:age"\ncolumn = "NV') + "[[metrics]]",
         r"outputs\[1\]\.column: 'NV' is the column of another output too \('diagnosis'\)$"),
        ("[[metrics]]", AGE + 'columns = { MEL = "x" }\n[[metrics]]', r"outputs\[1\]\.columns: unknown key"),
        ('[[outputs]]\nslug = "diagnosis"', AGE[1:] + 'column = "MEL"\n[[outputs]]\nslug = "diagnosis"',
         r"outputs\[1\]\.columns\.MEL: 'MEL' is the column of another output too \('age'\)$"),
        (OUTPUT, OUTPUT + '\ncolumns = { MEL = "age" }' + AGE, r"outputs\[1\]\.column: 'age' is the column of "
         r"another output too \('diagnosis'\)$"),
        ('slug = "diagnosis"\nkind = "probabilities"', 'slug = "diagnosis"\nkind = "probabilities"\n'
         'relative_path = "d.json"', r"outputs\[0\]\.relative_path: unknown key"),
    ],
)  # fmt: skip
def test_bad_class_column_declarations_name_the_key(old, new, message):
    assert old in DECLARATION
    with pytest.raises(ConfigurationError, match=message):
        parse(DECLARATION.replace(old, new, 1), "isic-like.toml")


def test_class_columns_belong_to_prediction_file_phases_only():
    declaration = parse(JOBS, "jobs.toml")
    assert not declaration.submission.csv and declaration.output("diagnosis").columns == ()
    with pytest.raises(ConfigurationError, match=r"jobs\.toml: outputs\[0\]\.columns: unknown key"):
        parse(JOBS.replace(OUTPUT, OUTPUT + '\ncolumns = { MEL = "p" }'), "jobs.toml")
    renamed = parse(RENAMED, "isic-like.toml").output("diagnosis")
    assert renamed.columns == (("MEL", "p_mel"), ("NV", "NV"), ("BCC", "BCC"), ("BKL", "p_bkl"))


def test_the_readme_sketch_of_class_columns_runs(tmp_path, evaluate_cli):
    """The README's prediction-file sketch with class columns, as written, on a small ground truth and
    CSV: per-class AUROC by scikit-learn."""
    section = documented_section("More catalogue metrics")
    block = next(b.split("\n```", 1)[0] for b in section.split("```toml\n")[1:] if "columns = {" in b)
    toml = tmp_path / "sketch.toml"
    toml.write_text(block)
    (tmp_path / "gt").mkdir()
    truth = ["MEL", "NV", "BCC", "NV", "MEL", "BCC"]
    rows = [f"ISIC_{i},{label}" for i, label in enumerate(truth)]
    (tmp_path / "gt" / "truth.csv").write_text("\n".join(["image_id,diagnosis", *rows]) + "\n")
    answers = np.array([[0.7, 0.2, 0.1], [0.3, 0.6, 0.1], [0.2, 0.3, 0.5], [0.5, 0.4, 0.1], [0.4, 0.4, 0.2],
                        [0.1, 0.2, 0.7]])  # fmt: skip
    (tmp_path / "input").mkdir()
    lines = ["image,p_melanoma,NV,BCC"] + [f"ISIC_{i},{','.join(map(str, row))}" for i, row in enumerate(answers)]
    (tmp_path / "input" / FILE).write_text("\n".join(lines) + "\n")
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    for k, c in enumerate(("MEL", "NV", "BCC")):
        expected = roc_auc_score(np.array(truth) == c, answers[:, k])
        assert run.metrics["aggregates"][f"auroc_{c}"] == pytest.approx(expected, abs=1e-12)
