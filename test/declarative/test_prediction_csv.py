"""A declared prediction-file phase (``[submission] kind = "csv"``): the participant uploads one CSV,
a row per case, each value output one of its columns. Run end to end through the command line on a
declaration written here; every number checked against scikit-learn, SciPy or a hand computation to
1e-9, every refused CSV by its exact last stderr line (no metrics.json), every bad declaration by
the key its message names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, documented_section
from scipy.stats import pearsonr
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    mean_absolute_error,
    roc_auc_score,
)

from evaluation import check, make_input, phase
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

DECLARATION = """
name = "csv-phase"
title = "A prediction-file phase: malignancy, age, grade and lesion per image"
[submission]
kind = "csv"                          # one CSV, a row per image: no algorithm jobs
id_column = "image"                   # the CSV's case column (default: [cases] id_column)
[cases]
id_column = "id"                      # the reference CSV's case column
word = "image"
[[outputs]]
slug = "malignancy"
kind = "number"
column = "p_malignant"                # default: the slug
reference = "truth.csv:malignant"
range = [0, 1]
missing = "worst-value"
[[outputs]]
slug = "age"
kind = "number"
reference = "truth.csv:age"
[[outputs]]
slug = "grade"
kind = "choice"
classes = ["low", "mid", "high"]
reference = "truth.csv:grade"
missing = "misclassification"
[[outputs]]
slug = "lesion"
kind = "boolean"
reference = "truth.csv:lesion"
[[metrics]]
metric = "auroc"
output = "malignancy"
bootstrap = true
[[metrics]]
metric = "brier"
output = "malignancy"
[[metrics]]
metric = "average_precision"
output = "malignancy"
[[metrics]]
metric = "mae"
output = "age"
[[metrics]]
metric = "pearson"
output = "age"
[[metrics]]
name = "kappa"
metric = "cohen_kappa"
output = "grade"
[[metrics]]
metric = "balanced_accuracy"
output = "grade"
[[metrics]]
name = "lesion_accuracy"
metric = "accuracy"
output = "lesion"
[bootstrap]
resamples = 300
[leaderboard]
score = "aggregates.auroc"
[[leaderboard.columns]]
title = "Age MAE"
path = "aggregates.mae"
order = "asc"
"""

IMAGES = [f"img{i:02d}" for i in range(1, 13)]
MALIGNANT = np.array([1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
AGE = np.array([61.0, 45.5, 70.0, 38.0, 52.0, 66.0, 49.0, 58.5, 73.0, 41.0, 55.0, 64.0])
GRADE = np.array(["low", "mid", "high", "low", "high", "mid", "low", "high", "mid", "low", "mid", "high"])
LESION = np.array(["1", "0", "0", "1", "1", "1", "0", "0", "0", "1", "0", "1"])
P_MALIGNANT = ["0.81", "0.35", "0.12", "0.64", "", "0.52", "0.2", "0.91", "0.45", "0.3", "0.05", "0.58"]  # img05 blank
AGE_PRED = ["59", "47.25", "6.8e1", "40", "50.5", "61", "52", "57", "70.5", "44", "53", "60"]
GRADE_PRED = ["low", "mid", "mid", "low", "high", "", "low", "high", "high", "mid", "mid", "high"]  # img06 blank
LESION_PRED = ["true", "FALSE", "no", "1", "yes", "0", "0", "false", "0.0", "1.0", "no", "True"]


def write_truth(ground_truth: Path) -> None:
    ground_truth.mkdir(parents=True, exist_ok=True)
    lines = ["id,malignant,age,grade,lesion"]
    lines += [f"{c},{m},{a},{g},{s}" for c, m, a, g, s in zip(IMAGES, MALIGNANT, AGE, GRADE, LESION, strict=True)]
    (ground_truth / "truth.csv").write_text("\n".join(lines) + "\n")


def submission_lines() -> list[str]:
    """The header (with an extra column, ignored) and the rows in reverse order."""
    rows = zip(IMAGES, P_MALIGNANT, AGE_PRED, GRADE_PRED, LESION_PRED, strict=True)
    body = [f"{c},{p},{a},{g},{s},note {c}" for c, p, a, g, s in rows]
    return ["image,p_malignant,age,grade,lesion,comment", *reversed(body)]


def phase_files(root: Path, lines: list[str] | None = None, text: str = DECLARATION) -> tuple[Path, Path, Path]:
    """The declaration, the ground truth and an input folder holding the participant's CSV (a
    UTF-8 BOM and Windows line ends; named otherwise than predictions.csv: the single *.csv counts)."""
    toml, ground_truth, input_dir = root / "csv-phase.toml", root / "gt", root / "input"
    toml.write_text(text)
    write_truth(ground_truth)
    input_dir.mkdir()
    content = "\r\n".join(submission_lines() if lines is None else lines) + "\r\n"
    (input_dir / "my-predictions.csv").write_bytes(b"\xef\xbb\xbf" + content.encode())
    return toml, ground_truth, input_dir


def expected_inputs() -> dict[str, np.ndarray]:
    """The submitted values after the declared missing policies, computed here."""
    p = np.array([float(v) if v else np.nan for v in P_MALIGNANT])
    p = np.where(np.isnan(p), 1.0 - MALIGNANT, p)  # worst value: the end of [0, 1] farthest from the reference
    grade = np.where(np.array(GRADE_PRED) == "", "<missing>", np.array(GRADE_PRED))  # never a reference class
    lesion = np.array([v.lower() in ("1", "1.0", "true", "yes") for v in LESION_PRED])
    return {"p": p, "age": np.array([float(v) for v in AGE_PRED]), "grade": grade, "lesion": lesion}


def test_a_declared_prediction_file_phase_against_independent_references(tmp_path, evaluate_cli):
    toml, ground_truth, input_dir = phase_files(tmp_path)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got, x = run.metrics["aggregates"], expected_inputs()
    assert x["p"][4] == 0.0 and x["age"][2] == 68.0  # img05 is malignant: its worst answer is 0
    assert got["auroc"] == pytest.approx(roc_auc_score(MALIGNANT, x["p"]), abs=1e-12)
    assert got["brier"] == pytest.approx(
        sum((p - y) ** 2 for p, y in zip(x["p"], MALIGNANT, strict=True)) / 12, abs=1e-12
    )
    assert got["average_precision"] == pytest.approx(average_precision_score(MALIGNANT, x["p"]), abs=1e-12)
    assert got["mae"] == pytest.approx(mean_absolute_error(AGE, x["age"]), abs=1e-12)
    assert got["pearson"] == pytest.approx(pearsonr(AGE, x["age"]).statistic, abs=1e-12)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(GRADE, x["grade"]), abs=1e-12)
    with pytest.warns(UserWarning, match="y_pred contains classes not in y_true"):
        balanced = balanced_accuracy_score(GRADE, x["grade"])  # the missing answer's class: no recall of its own
    assert got["balanced_accuracy"] == pytest.approx(balanced, abs=1e-12)
    assert got["lesion_accuracy"] == pytest.approx(accuracy_score(LESION == "1", x["lesion"]), abs=1e-12)
    draws = np.random.default_rng(0).integers(0, 12, size=(300, 12))
    aucs = [roc_auc_score(MALIGNANT[r], x["p"][r]) for r in draws if 0 < MALIGNANT[r].sum() < 12]
    low, high = np.percentile(aucs, [2.5, 97.5])
    assert (got["auroc_ci_low"], got["auroc_ci_high"]) == pytest.approx((low, high), abs=1e-9)
    document = run.metrics
    assert document["missing"] == {"rows": [], "malignancy": ["img05"], "age": [], "grade": ["img06"], "lesion": []}
    assert document["case"]["img05"] == {"malignancy": None, "age": 50.5, "grade": "high", "lesion": True}
    assert document["case"]["img06"]["grade"] is None and document["case"]["img03"]["age"] == 68.0
    assert document["settings"]["submission"] == {"kind": "csv", "file": "predictions.csv", "id_column": "image",
                                                  "max_mb": 10.0}  # fmt: skip
    assert document["settings"]["outputs"]["malignancy"]["column"] == "p_malignant"


def test_rows_missing_under_their_policies(tmp_path, evaluate_cli):
    """A case without a row gets each output's missing policy; listed under missing.rows."""
    text = DECLARATION.replace('reference = "truth.csv:age"', 'reference = "truth.csv:age"\nmissing = "exclude"')
    text = text.replace('reference = "truth.csv:lesion"', 'reference = "truth.csv:lesion"\nmissing = "exclude"')
    lines = [line for line in submission_lines() if not line.startswith(("img03,", "img05,"))]
    toml, ground_truth, input_dir = phase_files(tmp_path, lines, text)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    x, kept = expected_inputs(), [i for i, c in enumerate(IMAGES) if c not in ("img03", "img05")]
    p = x["p"].copy()
    p[2] = 1.0  # img03 (benign) without a row: its worst answer is 1
    grade = x["grade"].copy()
    grade[[2, 4]] = "<missing>"
    got = run.metrics["aggregates"]
    assert got["auroc"] == pytest.approx(roc_auc_score(MALIGNANT, p), abs=1e-12)
    assert got["mae"] == pytest.approx(mean_absolute_error(AGE[kept], x["age"][kept]), abs=1e-12)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(GRADE, grade), abs=1e-12)
    assert run.metrics["missing"]["rows"] == ["img03", "img05"]
    assert run.metrics["missing"]["age"] == ["img03", "img05"]


def replace_line(prefix: str, new: str):
    return lambda lines: [new if line.startswith(prefix) else line for line in lines]


def drop_column(lines: list[str], index: int) -> list[str]:
    return [",".join(cell for i, cell in enumerate(line.split(",")) if i != index) for line in lines]


FILE = "my-predictions.csv"
# Line numbers: the header is line 1, then img12 (line 2) down to img01 (line 13).
CSV_ERRORS = {
    "unknown image": (
        lambda lines: [*lines, "img99,0.5,50,low,1,"],
        f"Line 14 of the prediction file {FILE} is for image img99, which is not in the test set.",
    ),
    "duplicate image": (
        lambda lines: [*lines, "img10,0.5,50,low,1,"],
        f"Line 14 of the prediction file {FILE} repeats image img10 (first on line 4).",
    ),
    "missing row, policy error": (
        lambda lines: [line for line in lines if not line.startswith(("img04,", "img07,"))],
        f"The prediction file {FILE} has no row for image img04, img07; every image needs the output 'age'.",
    ),
    "missing column": (
        lambda lines: drop_column(lines, 2),
        f"The prediction file {FILE} has no column 'age' (output 'age'); its columns: 'image', 'p_malignant', "
        "'grade', 'lesion', 'comment'.",
    ),
    "blank cell, policy error": (
        replace_line("img10,", "img10,0.3,,mid,1.0,"),
        f"Line 4 of the prediction file {FILE} has no value for image img10 in column 'age'.",
    ),
    "not a number": (
        replace_line("img10,", "img10,0.3,forty,mid,1.0,"),
        f"The output 'age' of image img10 (line 4 of {FILE}, column 'age') is 'forty', not a number.",
    ),
    "not finite": (
        replace_line("img10,", "img10,0.3,nan,mid,1.0,"),
        f"The output 'age' of image img10 (line 4 of {FILE}, column 'age') is 'nan', not a finite number.",
    ),
    "outside the range": (
        replace_line("img11,", "img11,1.5,53,mid,no,"),
        f"The output 'malignancy' of image img11 (line 3 of {FILE}, column 'p_malignant') is 1.5, outside [0, 1].",
    ),
    "not a class": (
        replace_line("img11,", "img11,0.05,53,medium,no,"),
        f"The output 'grade' of image img11 (line 3 of {FILE}, column 'grade') is not one of the strings low, "
        "mid, high.",
    ),
    "not a boolean": (
        replace_line("img11,", "img11,0.05,53,mid,maybe,"),
        f"The output 'lesion' of image img11 (line 3 of {FILE}, column 'lesion') is 'maybe', not a boolean "
        "(1, 1.0, true, yes / 0, 0.0, false, no).",
    ),
    "a cell too many": (
        replace_line("img11,", "img11,0.05,53,mid,no,,extra"),
        f"Line 3 of the prediction file {FILE} has 7 cells; its header has 6 columns.",
    ),
    "a row without its image": (
        replace_line("img11,", ",0.05,53,mid,no,"),
        f"Line 3 of the prediction file {FILE} has no image in column 'image'.",
    ),
    "no image column": (
        lambda lines: ["name" + lines[0].removeprefix("image"), *lines[1:]],
        f"The prediction file {FILE} has no column 'image' (its header: 'name', 'p_malignant', 'age', 'grade', "
        "'lesion', 'comment').",
    ),
    "a column twice": (
        lambda lines: [lines[0].replace("comment", "age"), *lines[1:]],
        f"The header of the prediction file {FILE} has the column 'age' twice.",
    ),
    "a cell beyond the CSV field limit": (
        replace_line("img11,", "img11,0.05,53,mid,no," + "x" * 200_000),
        f"The prediction file {FILE} is not valid CSV (line 3: field larger than field limit (131072)).",
    ),
}


@pytest.mark.parametrize("name", list(CSV_ERRORS))
def test_a_bad_prediction_file_fails_with_one_line(tmp_path, evaluate_cli, name):
    change, message = CSV_ERRORS[name]
    toml, ground_truth, input_dir = phase_files(tmp_path, change(submission_lines()))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.last_error_line) == (1, message)
    assert not run.wrote_metrics and "Traceback" not in run.stderr + run.stdout


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _not_utf8(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"img09,", b"img\xff9,"))


def _huge(path: Path) -> None:  # sparse: nothing is written, nothing may be read
    with open(path, "wb") as stream:
        stream.write(b"image,p_malignant\n")
        stream.truncate(200 * 2**20)


def _escaping_link(path: Path) -> None:
    path.unlink()
    path.symlink_to("/etc/passwd")


def _fifo(path: Path) -> None:  # opening it to read would block forever
    path.unlink()
    os.mkfifo(path)


def _two_files(path: Path) -> None:
    (path.parent / "other.csv").write_text("image\n")


FILE_ERRORS = {
    "empty": (_empty, f"The prediction file {FILE} is empty; it needs a header line with the column 'image'."),
    "not UTF-8": (_not_utf8, f"The prediction file {FILE} is not UTF-8 text (line 5)."),
    "huge": (
        _huge,
        f"The prediction file {FILE} is 209.7 MB (209715200 bytes), more than the 10 MB allowed; it was not read.",
    ),
    "a FIFO": (_fifo, f"The prediction file {FILE} is a FIFO (named pipe), not a regular file; it was not read."),
    "a link out of the input": (_escaping_link, f"the output path '{FILE}' points outside the input folder."),
    "two CSV files": (
        _two_files,
        f"Expected one CSV file of predictions (predictions.csv) in the input; it holds 2 ({FILE}, other.csv).",
    ),
}


@pytest.mark.parametrize("name", list(FILE_ERRORS))
def test_a_bad_prediction_file_is_refused_before_it_is_parsed(tmp_path, evaluate_cli, name):
    change, message = FILE_ERRORS[name]
    toml, ground_truth, input_dir = phase_files(tmp_path)
    change(input_dir / FILE)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.last_error_line) == (1, message)
    assert not run.wrote_metrics and "Traceback" not in run.stderr + run.stdout


def test_the_check_reads_the_csv_as_the_evaluation(tmp_path, capsys):
    toml, _, input_dir = phase_files(tmp_path)
    assert check.main(["--challenge", str(toml), "--input", str(input_dir)]) == 0
    out = capsys.readouterr().out
    assert "12 rows checked, all outputs valid" in out
    warning = f"image img05 (line 9 of {FILE}, column 'p_malignant'): no value; the evaluation applies the missing"
    assert f"Warning: {warning} policy 'worst-value'." in out
    assert "Not checked: which cases the test set holds" in out
    assert check.main(["--challenge", str(toml), "--input", str(input_dir / FILE)]) == 0  # the CSV itself
    assert "12 rows checked, all outputs valid" in capsys.readouterr().out
    assert check.main(["--challenge", "isic2019", "--input", str(REPO / "test/input/isic2019/predictions.csv")]) == 0
    assert "rows checked, all outputs valid" in capsys.readouterr().out
    _, message = CSV_ERRORS["not a boolean"]
    (input_dir / FILE).write_text("\n".join(CSV_ERRORS["not a boolean"][0](submission_lines())) + "\n")
    assert check.main(["--challenge", str(toml), "--input", str(input_dir)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == message


def test_make_input_writes_the_csv_from_per_case_outputs(tmp_path, evaluate_cli, capsys):
    """make_input turns DIR/<case>/<slug>.json into the phase's CSV; the run equals the hand-written CSV's."""
    toml, ground_truth, input_dir = phase_files(tmp_path)
    outputs = tmp_path / "outputs"
    for i, case in enumerate(IMAGES):
        folder = outputs / case
        folder.mkdir(parents=True)
        if P_MALIGNANT[i]:
            (folder / "malignancy.json").write_text(P_MALIGNANT[i])
        (folder / "age.json").write_text(json.dumps(float(AGE_PRED[i])))
        if GRADE_PRED[i]:
            (folder / "grade.json").write_text(json.dumps(GRADE_PRED[i]))
        (folder / "lesion.json").write_text(json.dumps(LESION_PRED[i].lower() in ("1", "1.0", "true", "yes")))
    built = tmp_path / "built"
    assert make_input.main(["--challenge", str(toml), "--outputs", str(outputs), "--output", str(built)]) == 0
    assert "Wrote 12 rows of a prediction file" in capsys.readouterr().out
    lines = (built / "predictions.csv").read_text().splitlines()
    assert lines[:2] == ["image,p_malignant,age,grade,lesion", "img01,0.81,59.0,low,1"]
    assert lines[5] == "img05,,50.5,high,1"
    by_hand = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth).metrics
    built_run = evaluate_cli(str(toml), built, ground_truth=ground_truth).metrics
    assert built_run["aggregates"] == by_hand["aggregates"] and built_run["case"] == by_hand["case"]
    (outputs / "img01" / "mask.mha").write_bytes(b"")
    assert make_input.main(["--challenge", str(toml), "--outputs", str(outputs), "--output", str(built)]) == 1
    assert capsys.readouterr().err.strip() == "Case img01: mask.mha is not an output of csv-phase."
    assert check.main(["--challenge", str(toml), "--outputs", str(outputs)]) == 1


def test_the_phase_settings_are_a_csv_submission(tmp_path, capsys):
    toml, _, _ = phase_files(tmp_path)
    assert phase.main(["--challenge", str(toml)]) == 0
    settings = json.loads(capsys.readouterr().out)
    assert phase.main(["--challenge", "isic2019"]) == 0
    isic = json.loads(capsys.readouterr().out)
    assert settings.keys() == isic.keys()
    assert (settings["submission_kind"], settings["algorithm_inputs"], settings["algorithm_outputs"]) == ("CSV", [], [])
    assert settings["score_jsonpath"] == "aggregates.auroc"
    assert settings["extra_results_columns"] == [{"title": "Age MAE", "path": "aggregates.mae", "order": "asc"}]


JOBS = DECLARATION.split("[submission]")[0] + '[[inputs]]\nslug = "ct"\n' + DECLARATION.split('word = "image"')[1]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('kind = "csv" ', 'kind = "zip" ', r"submission\.kind: 'zip' is not one of jobs, csv"),
        ('id_column = "image" ', 'file = "../p.csv"\nid_column = "image" ', r"submission\.file: '\.\./p\.csv' must"),
        ('id_column = "image" ', 'file = "p.txt"\nid_column = "image" ', r"submission\.file: 'p\.txt' must be a file"),
        ('id_column = "image" ', 'max_mb = 0\nid_column = "image" ', r"submission\.max_mb: must be positive"),
        ('id_column = "image" ', 'id_column = "image"\nfolder = "x"', r"submission\.folder: unknown key"),
        ("[cases]\nid", '[[inputs]]\nslug = "ct"\n[cases]\nid', r"csv-phase\.toml: inputs: a prediction-file phase"),
        ('word = "image"', 'word = "image"\nstrip = ["_0000"]', r"cases\.strip: names a job's case"),
        ('column = "p_malignant"', 'column = "image"', r"outputs\[0\]\.column: 'image' is the case column"),
        ('column = "p_malignant"', 'column = "age"', r"outputs\[1\]\.column: 'age' is the column of another output"),
        ('column = "p_malignant"', 'column = ""', r"outputs\[0\]\.column: '' is not a column name"),
        ('slug = "age"\nkind = "number"', 'slug = "age"\nkind = "number"\nrelative_path = "age.json"',
         r"outputs\[1\]\.relative_path: unknown key"),
        ('slug = "lesion"\nkind = "boolean"', 'slug = "lesion"\nkind = "csv-column"',
         r"outputs\[3\]\.kind: 'csv-column': declare \[submission\] kind = 'csv' and give a number, boolean, choice"),
        ('slug = "age"\nkind = "number"\nreference = "truth.csv:age"',
         'slug = "age"\nkind = "segmentation"\nreference = "labels/{case}.mha"\nlabels = { a = 1 }',
         r"outputs\[1\]\.kind: a segmentation output cannot be a column of a prediction CSV \(\[submission\] kind = "
         r"'csv'\): only number, boolean, choice"),
        ('slug = "age"\nkind = "number"\nreference = "truth.csv:age"',
         'slug = "age"\nkind = "boxes"\nreference = "boxes/{case}.json"', r"outputs\[1\]\.kind: a boxes output cannot"),
        ("[leaderboard]", '[report.missing_names]\nage = "rows"\n[leaderboard]',
         r"report\.missing_names\.age: must be a key of letters, digits, '_' and '-' other than 'rows'"),
    ],
)  # fmt: skip
def test_bad_prediction_file_declarations_name_the_key(old, new, message):
    assert old in DECLARATION
    with pytest.raises(ConfigurationError, match=message):
        parse(DECLARATION.replace(old, new, 1), "csv-phase.toml")


def test_a_column_belongs_to_prediction_file_phases_only():
    declaration = parse(JOBS.replace('\ncolumn = "p_malignant"', ""), "jobs.toml")
    assert not declaration.submission.csv and declaration.output("age").column == ""
    with pytest.raises(ConfigurationError, match=r"jobs\.toml: outputs\[0\]\.column: unknown key"):
        parse(JOBS, "jobs.toml")
    with pytest.raises(ConfigurationError, match=r"submission\.file: unknown key \(known here: kind\)"):
        parse(JOBS + '[submission]\nkind = "jobs"\nfile = "p.csv"\n', "jobs.toml")


def test_the_file_named_by_the_declaration_wins(tmp_path, evaluate_cli):
    """``file`` is looked up first: beside it, other CSV files are ignored."""
    text = DECLARATION.replace('kind = "csv" ', 'kind = "csv"\nfile = "my-predictions.csv" ', 1)
    toml, ground_truth, input_dir = phase_files(tmp_path, text=text)
    _two_files(input_dir / FILE)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["settings"]["submission"]["file"] == FILE
    assert os.path.exists(input_dir / "other.csv")


def test_the_readme_sketch_of_a_prediction_file_phase_runs(tmp_path, evaluate_cli):
    """The README's CSV sketch, as written, on a small ground truth and CSV: AUROC by scikit-learn, MAE by hand."""
    section = documented_section("More catalogue metrics")
    block = next(b.split("\n```", 1)[0] for b in section.split("```toml\n")[1:] if 'kind = "csv"' in b)
    toml = tmp_path / "sketch.toml"
    toml.write_text(block)
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text("image_id,melanoma,breslow_mm\na,1,1.5\nb,0,0.2\nc,0,0.0\nd,1,3.0\n")
    (tmp_path / "input").mkdir()
    (tmp_path / "input" / "predictions.csv").write_text("image,p_melanoma,thickness\nd,0.7,2.5\nb,0.4,0.5\nc,0.8,0\n")
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1
    assert (
        run.last_error_line
        == "The prediction file predictions.csv has no row for image a; every image needs the output 'thickness'."
    )
    (tmp_path / "input" / "predictions.csv").write_text(
        "image,p_melanoma,thickness\nd,0.7,2.5\nb,0.4,0.5\nc,0.8,0\na,,1\n"
    )
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    expected_auroc = roc_auc_score([1, 0, 0, 1], [0.0, 0.4, 0.8, 0.7])  # a's blank cell: the worst value 0
    assert run.metrics["aggregates"]["auroc"] == pytest.approx(expected_auroc, abs=1e-12)
    assert run.metrics["aggregates"]["mae"] == pytest.approx((0.5 + 0.3 + 0.0 + 0.5) / 4, abs=1e-12)


def test_read_prediction_table_gives_each_row_as_a_mapping(tmp_path):
    """The generic reader: a row per case as column -> stripped text, its line (quoted commas and
    line breaks kept inside a cell, blank lines skipped, a BOM dropped)."""
    from evaluation.platform.prediction_file import read_prediction_table

    path = tmp_path / "p.csv"
    path.write_bytes(b'\xef\xbb\xbfimage, p_a ,p_b\n\nx1, 0.25 ,"0.5"\n"x,2","multi\nline",0.75\n\n')
    table = read_prediction_table(path, "image", 1.0)
    assert table.file == "p.csv" and table.columns == ("image", "p_a", "p_b")
    assert list(table.rows) == ["x1", "x,2"]
    assert (table.rows["x1"].line, dict(table.rows["x1"].cells)) == (3, {"image": "x1", "p_a": "0.25", "p_b": "0.5"})
    assert (table.rows["x,2"].line, table.rows["x,2"].cells["p_a"]) == (5, "multi\nline")
