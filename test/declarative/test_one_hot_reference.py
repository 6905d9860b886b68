"""A one-hot reference for ``choice`` and ``probabilities`` outputs (``reference = "truth.csv"``: a
0/1 column per class, ISIC's ``image,MEL,NV,...``), run end to end through the command line on
declarations written here: the same data as a one-hot truth and as a class-name column give
byte-identical aggregates; an ISIC-layout truth (float spellings, weight columns) in a prediction-file
phase equals scikit-learn and the official ISIC scoring package (``isic-challenge-scoring`` 5.6.0,
where the definitions coincide) to 1e-9; every bad ground truth fails with its exact last stderr line
(no metrics.json, no cell's text); every bad declaration is refused naming the key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from declarative.helpers import isic_score, leaning_probabilities
from isic_challenge_scoring import classification as isic_classification
from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

from evaluation.declarative.answers import MISCLASSIFIED
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

CLASSES = ("MEL", "NV", "BCC", "AK", "BKL", "DF", "VASC", "SCC")  # ISIC 2019 without UNK
N = 24
IMAGES = [f"ISIC_{i:07d}" for i in range(1, N + 1)]
FILE = "predictions.csv"
LISTED = ", ".join(CLASSES)

HEAD = """
name = "isic-one-hot"
title = "An ISIC-like prediction-file phase scored against a one-hot truth"
[submission]
kind = "csv"
id_column = "image"
[cases]
id_column = "image"
word = "image"
"""
DIAGNOSIS = f"""
[[outputs]]
slug = "diagnosis"
kind = "probabilities"
classes = {json.dumps(CLASSES)}
reference = "truth.csv"
"""
LABEL = f"""
[[outputs]]
slug = "label"
kind = "choice"
classes = {json.dumps(CLASSES)}
reference = "truth.csv"
missing = "misclassification"
"""
DIAGNOSIS_METRICS = """
[[metrics]]
metric = "balanced_accuracy"
output = "diagnosis"
bootstrap = true
[[metrics]]
name = "auc"
metric = "auroc"
output = "diagnosis"
bootstrap = true
[[metrics]]
name = "ap"
metric = "average_precision"
output = "diagnosis"
[[metrics]]
metric = "brier"
output = "diagnosis"
"""
LABEL_METRICS = """
[[metrics]]
name = "label_balanced_accuracy"
metric = "balanced_accuracy"
output = "label"
[[metrics]]
name = "label_kappa"
metric = "cohen_kappa"
output = "label"
"""
TAIL = """
[bootstrap]
resamples = 50
[leaderboard]
score = "aggregates.balanced_accuracy"
"""
DECLARATION = HEAD + DIAGNOSIS + LABEL + DIAGNOSIS_METRICS + LABEL_METRICS + TAIL
ISIC = HEAD + DIAGNOSIS + DIAGNOSIS_METRICS + TAIL  # the class probabilities only, as ISIC's CSV
CLASS_NAMES = DECLARATION.replace('reference = "truth.csv"', 'reference = "truth.csv:diagnosis"')


TRUTH, PROBABILITIES = leaning_probabilities(CLASSES, N, seed=11, own=0.2, other=0.8 / 7, total=40)
CHOICES = [CLASSES[(CLASSES.index(t) + 1) % len(CLASSES)] if i % 3 == 0 else t for i, t in enumerate(TRUTH)]


def one_hot_lines(
    columns: tuple[str, ...] = CLASSES, one: str = "1.0", zero: str = "0.0", extra: str = ""
) -> list[str]:
    """An ISIC-layout truth: ``image``, a column per class (``one`` / ``zero``), then ``extra`` cells."""
    header = ",".join(("image", *columns)) + (",score_weight,validation_weight" if extra else "")
    return [header] + [",".join((image, *(one if c == label else zero for c in CLASSES))) + extra
                       for image, label in zip(IMAGES, TRUTH, strict=True)]  # fmt: skip


def class_name_lines() -> list[str]:
    return ["image,diagnosis"] + [f"{image},{label}" for image, label in zip(IMAGES, TRUTH, strict=True)]


def prediction_lines() -> list[str]:
    """The participant's CSV: the class probabilities and the chosen class of each image."""
    return [",".join(("image", *CLASSES, "label"))] + [
        ",".join((image, *(str(p) for p in row), choice))
        for image, row, choice in zip(IMAGES, PROBABILITIES.tolist(), CHOICES, strict=True)
    ]


def phase(root: Path, truth: list[str], text: str = DECLARATION, lines: list[str] | None = None) -> tuple[Path, ...]:
    """The declaration, the ground truth (truth.csv) and the input folder under ``root``."""
    toml, ground_truth, input_dir = root / "isic-one-hot.toml", root / "gt", root / "input"
    root.mkdir(parents=True, exist_ok=True)
    toml.write_text(text)
    ground_truth.mkdir()
    (ground_truth / "truth.csv").write_text("\n".join(truth) + "\n")
    input_dir.mkdir()
    (input_dir / FILE).write_text("\n".join(prediction_lines() if lines is None else lines) + "\n")
    return toml, ground_truth, input_dir


def scored(root: Path, evaluate_cli, truth: list[str], text: str = DECLARATION, lines: list[str] | None = None):
    toml, ground_truth, input_dir = phase(root, truth, text, lines)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    return run.metrics


def same_scores(one: dict, other: dict) -> None:
    """Byte-identical aggregates, per-case values and missing blocks (as metrics.json writes them)."""
    for key in ("aggregates", "case", "missing"):
        assert json.dumps(one[key]) == json.dumps(other[key]), key


def test_one_hot_and_class_names_give_byte_identical_aggregates(tmp_path, evaluate_cli):
    by_name = scored(tmp_path / "names", evaluate_cli, class_name_lines(), CLASS_NAMES)
    one_hot = scored(tmp_path / "one-hot", evaluate_cli, one_hot_lines())
    same_scores(one_hot, by_name)
    assert "balanced_accuracy_ci_low" in one_hot["aggregates"] and "auc_macro_ci_high" in one_hot["aggregates"]
    outputs = one_hot["settings"]["outputs"]
    assert outputs["diagnosis"] == {
        "kind": "probabilities", "reference": "truth.csv", "missing": "error", "classes": list(CLASSES),
        "sum": "one", "sum_tolerance": 0.001, "blank": "error", "columns": {c: c for c in CLASSES},
        "reference_columns": {c: c for c in CLASSES}, "true_values": ["1", "1.0", "true", "yes"],
        "false_values": ["0", "0.0", "false", "no"],
    }  # fmt: skip
    assert outputs["label"]["reference_columns"] == {c: c for c in CLASSES}
    assert "reference_columns" not in by_name["settings"]["outputs"]["diagnosis"]

    # other spellings, columns renamed (and in another order), undeclared columns: the same scores
    renamed = {c: f"is_{c.lower()}" for c in CLASSES}
    table = ", ".join(f'{c} = "{column}"' for c, column in renamed.items())
    text = DECLARATION.replace('reference = "truth.csv"', f'reference = "truth.csv"\nreference_columns = {{ {table} }}'
                               '\ntrue_values = ["pos"]\nfalse_values = ["neg"]')  # fmt: skip
    order = list(range(len(CLASSES)))[::-1]
    lines = [",".join(cells[0:1] + [cells[1 + k] for k in order] + ["0"]) for cells in
             (line.split(",") for line in one_hot_lines(tuple(renamed.values()), "Pos", "NEG"))]  # fmt: skip
    lines[0] = lines[0].rsplit(",", 1)[0] + ",UNK"  # ISIC's UNK column, not declared: ignored
    same_scores(scored(tmp_path / "renamed", evaluate_cli, lines, text), by_name)


def test_a_blank_row_under_blank_skip_equals_a_blank_class_name(tmp_path, evaluate_cli):
    """``blank = "skip"``: a row whose class cells are all blank (here "NA", a declared blank spelling)
    leaves the case, as a blank class-name cell does; every output being a CSV reference, the case is
    no case at all (the participant's CSV has no row for it)."""
    policy = '\nblank = "skip"\nblank_values = ["", "na"]'
    names = class_name_lines()
    names[3] = f"{IMAGES[2]},NA"
    lines = [line for line in prediction_lines() if not line.startswith(IMAGES[2])]
    text = CLASS_NAMES.replace('"truth.csv:diagnosis"', '"truth.csv:diagnosis"' + policy)  # both outputs
    by_name = scored(tmp_path / "names", evaluate_cli, names, text, lines)
    truth = one_hot_lines()
    truth[3] = ",".join([IMAGES[2]] + ["NA"] * len(CLASSES))
    text = DECLARATION.replace('"truth.csv"', '"truth.csv"' + policy)
    one_hot = scored(tmp_path / "one-hot", evaluate_cli, truth, text, lines)
    same_scores(one_hot, by_name)
    assert IMAGES[2] not in one_hot["case"] and len(one_hot["case"]) == N - 1


def test_an_isic_layout_truth_equals_scikit_learn_and_the_isic_scoring(tmp_path, evaluate_cli, monkeypatch):
    """ISIC's own truth.csv (``1.0`` / ``0.0``, score and validation weights of 1.0, which the
    declaration does not read) against the participant's ISIC CSV of class probabilities."""
    truth = one_hot_lines(extra=",1.0,1.0")
    lines = [line.rsplit(",", 1)[0] for line in prediction_lines()]  # ISIC's own columns only
    got = scored(tmp_path, evaluate_cli, truth, ISIC, lines)["aggregates"]
    predicted = np.array(CLASSES)[PROBABILITIES.argmax(axis=1)]
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(TRUTH, predicted), abs=1e-9)
    for k, c in enumerate(CLASSES):
        assert got[f"auc_{c}"] == pytest.approx(roc_auc_score(c == TRUTH, PROBABILITIES[:, k]), abs=1e-9)
    assert got["auc_macro"] == pytest.approx(np.mean([got[f"auc_{c}"] for c in CLASSES]), abs=1e-12)
    assert 0.2 < got["balanced_accuracy"] < 1 and 0.5 < got["auc_macro"] < 1  # neither trivial nor perfect

    monkeypatch.setattr(isic_classification.metrics, "roc", lambda *args: None)  # display curves only (slow)
    isic = isic_score(tmp_path / "gt" / "truth.csv", tmp_path / "input" / FILE)
    assert got["balanced_accuracy"] == pytest.approx(isic.aggregate["balanced_accuracy"], abs=1e-9)
    for c in CLASSES:  # every weight 1: the same one-vs-rest areas
        assert got[f"auc_{c}"] == pytest.approx(isic.per_category.loc[c, "auc"], abs=1e-9)
        assert got[f"ap_{c}"] == pytest.approx(isic.per_category.loc[c, "ap"], abs=1e-9)
    assert got["auc_macro"] == pytest.approx(isic.macro_average["auc"], abs=1e-9)


def change_row(index: int, cells: list[str]):
    """A change of the truth: image ``index`` (0-based, on line index + 2) gets the class cells ``cells``."""
    return lambda lines: [*lines[: index + 1], ",".join([IMAGES[index], *cells]), *lines[index + 2 :]]


def cells(**changed: str) -> list[str]:
    """Image 5's class cells (its reference class 1.0, the others 0.0) with ``changed`` ones."""
    return [changed.get(c, "1.0" if c == TRUTH[4] else "0.0") for c in CLASSES]


IMAGE = IMAGES[4]  # on line 6
OTHER = next(c for c in CLASSES if c != TRUTH[4])
SPELLINGS = "1/1.0/true/yes/0/0.0/false/no"
NAMED = DECLARATION.replace('word = "image"', 'word = "image"\nground_truth_name = "ISIC"')
SKIP = DECLARATION.replace('reference = "truth.csv"', 'reference = "truth.csv"\nblank = "skip"', 1)
TRUTH_ERRORS = {
    "no class at 1": (
        DECLARATION,
        change_row(4, cells(**{TRUTH[4]: "0"})),
        f"Line 6 of truth.csv has no class column at 1 for image {IMAGE}; a one-hot reference needs exactly one "
        f"({LISTED}).",
    ),
    "two classes at 1": (
        DECLARATION,
        change_row(4, cells(**{OTHER: "true"})),
        f"Line 6 of truth.csv has more than one class column at 1 for image {IMAGE}; a one-hot reference needs "
        f"exactly one ({LISTED}).",
    ),
    "not a 0/1 spelling": (
        DECLARATION,
        change_row(4, cells(**{OTHER: "0.5"})),
        f"Line 6 of truth.csv has a cell for image {IMAGE} in column '{OTHER}' that is not 0 or 1 ({SPELLINGS}).",
    ),
    "a blank cell": (
        DECLARATION,
        change_row(4, cells(**{OTHER: ""})),
        f"Line 6 of truth.csv has a blank cell for image {IMAGE} in column '{OTHER}'.",
    ),
    "every cell blank, blank = error": (
        DECLARATION,
        change_row(4, [""] * len(CLASSES)),
        f"Line 6 of truth.csv has a blank cell for image {IMAGE} in column 'MEL'.",
    ),
    "some cells blank, blank = skip": (
        SKIP,
        change_row(4, cells(**{OTHER: ""})),
        f"Line 6 of truth.csv has a blank cell for image {IMAGE} in column '{OTHER}' (blank = 'skip' skips a row "
        "only when all its class cells are blank).",
    ),
    "the ground truth named": (
        NAMED,
        change_row(4, cells(**{TRUTH[4]: "no"})),
        f"Line 6 of the ISIC ground truth truth.csv has no class column at 1 for image {IMAGE}; a one-hot reference "
        f"needs exactly one ({LISTED}).",
    ),
    "a class column missing": (
        DECLARATION,
        lambda lines: [line.rsplit(",", 1)[0] for line in lines],
        "truth.csv lacks the column(s) SCC.",
    ),
    "an image twice": (
        DECLARATION,
        lambda lines: [*lines, lines[5]],
        f"truth.csv lists case {IMAGE} twice.",
    ),
    "not CSV": (
        DECLARATION,
        lambda lines: [*lines[:3], lines[3] + ",1", *lines[4:]],
        f"truth.csv must be UTF-8 CSV with columns image,{','.join(CLASSES)} and 0/1 labels (ParserError): fix it "
        "in the phase's ground truth.",
    ),
    "not CSV, the ground truth named": (
        NAMED,
        lambda lines: [*lines[:3], lines[3] + ",1", *lines[4:]],
        "The ISIC ground truth truth.csv cannot be parsed as UTF-8 CSV (ParserError): fix it in the phase's ground "
        "truth.",
    ),
    "no truth.csv, the ground truth named": (NAMED, None, "The ISIC ground truth has no truth.csv."),
}


@pytest.mark.parametrize("name", list(TRUTH_ERRORS))
def test_a_bad_one_hot_truth_is_one_line_without_a_cell(tmp_path, evaluate_cli, name):
    text, change, message = TRUTH_ERRORS[name]
    toml, ground_truth, input_dir = phase(tmp_path, one_hot_lines() if change is None else change(one_hot_lines()),
                                          text)  # fmt: skip
    if change is None:
        (ground_truth / "truth.csv").unlink()
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.last_error_line) == (1, message)
    assert not run.wrote_metrics and "Traceback" not in run.stderr + run.stdout
    assert "0.5" not in run.stderr  # a bad cell's text is never shown


UNPARSED = "The ISIC ground truth truth.csv cannot be parsed as UTF-8 CSV ({}): fix it in the phase's ground truth."
TRUTH_FILES = {  # truth.csv replaced by: what the whole-file reader (``reference._ascii_rows``) or its checks say
    "a FIFO": (lambda path: os.mkfifo(path), "The ISIC ground truth has no truth.csv."),
    "a folder": (lambda path: path.mkdir(), "The ISIC ground truth has no truth.csv."),
    "empty": (lambda path: path.write_bytes(b""), UNPARSED.format("EmptyDataError")),
    "a line break": (
        lambda path: path.write_bytes(b"\n"),
        f"truth.csv lacks the column(s) image, {', '.join(CLASSES)}.",
    ),
    "not UTF-8": (
        lambda path: path.write_bytes(path.read_bytes() + b"ISIC_9,\xff\n"),
        UNPARSED.format("UnicodeDecodeError"),
    ),
    "a row too long": (
        lambda path: path.write_bytes(path.read_bytes() + b"ISIC_9" + b",0" * 9 + b"\n"),
        UNPARSED.format("ParserError"),
    ),
}


@pytest.mark.parametrize("name", list(TRUTH_FILES))
def test_a_truth_file_that_is_no_csv_is_one_line(tmp_path, evaluate_cli, name):
    """The reference CSV read whole from its bytes: a file that is not a regular CSV is the organizer's one line,
    never a hang (a FIFO is not opened), a traceback or a metrics.json."""
    make, message = TRUTH_FILES[name]
    toml, ground_truth, input_dir = phase(tmp_path, one_hot_lines(), NAMED)
    path = ground_truth / "truth.csv"
    if name in ("a FIFO", "a folder"):
        path.unlink()
    make(path)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.last_error_line) == (1, message)
    assert not run.wrote_metrics and "Traceback" not in run.stderr + run.stdout


OUTPUT = 'slug = "diagnosis"\nkind = "probabilities"\nclasses = ["MEL", "NV", "BCC"]\nreference = "truth.csv"'
JOBS = f"""
name = "one-hot"
title = "A one-hot reference"
[[inputs]]
slug = "dermoscopy"
[cases]
id_column = "image"
[[outputs]]
{OUTPUT}
[[metrics]]
metric = "balanced_accuracy"
output = "diagnosis"
[leaderboard]
score = "aggregates.balanced_accuracy"
"""


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (OUTPUT, OUTPUT.replace("truth.csv", "truth.csv:diagnosis") + '\nreference_columns = { MEL = "m" }',
         r"one-hot\.toml: outputs\[0\]\.reference_columns: applies to a one-hot reference only \(a choice or "
         r"probabilities output with reference = 'file\.csv'\)$"),
        (OUTPUT, OUTPUT + "\nreference_columns = 3", r"outputs\[0\]\.reference_columns: must be a table, not an "
         r"integer 3$"),
        (OUTPUT, OUTPUT + '\nreference_columns = { AK = "ak" }',
         r"outputs\[0\]\.reference_columns\.AK: is not a class of this output \(MEL, NV, BCC\)$"),
        (OUTPUT, OUTPUT + "\nreference_columns = { MEL = 1 }",
         r"outputs\[0\]\.reference_columns\.MEL: must be a string, not an integer 1$"),
        (OUTPUT, OUTPUT + '\nreference_columns = { NV = "" }',
         r"outputs\[0\]\.reference_columns\.NV: '' is not a column name \(none, or with surrounding spaces\)$"),
        (OUTPUT, OUTPUT + '\nreference_columns = { BCC = "image" }',
         r"outputs\[0\]\.reference_columns\.BCC: 'image' is the case column of the reference CSVs \(\[cases\] "
         r"id_column\)$"),
        (OUTPUT, OUTPUT + '\nreference_columns = { BCC = "MEL" }',
         r"outputs\[0\]\.reference_columns\.BCC: 'MEL' is the column of class 'MEL' too$"),
        (OUTPUT, OUTPUT + '\ntrue_values = ["1"]\nfalse_values = ["1", "0"]',
         r"outputs\[0\]\.false_values: shares a spelling with true_values$"),
        (OUTPUT, OUTPUT + '\nblank_values = ["", "0"]',
         r"outputs\[0\]\.blank_values: shares a spelling with true_values or false_values$"),
        (OUTPUT, OUTPUT.replace("truth.csv", "truth.csv:diagnosis") + '\ntrue_values = ["1"]',
         r"outputs\[0\]\.true_values: unknown key"),
        (OUTPUT, OUTPUT + '\nreference_none = "UNK"',
         r"outputs\[0\]\.reference_none: 'UNK' is not one of error, skip or a class of this output \(MEL, NV, BCC\)$"),
        (OUTPUT, OUTPUT + '\nreference_none = "BCC"\nreference_columns = { BCC = "bcc" }',
         r"outputs\[0\]\.reference_columns\.BCC: is the reference_none class, read from no column$"),
        (OUTPUT, OUTPUT.replace('"BCC"]', '"skip"]') + '\nreference_none = "skip"',
         r"outputs\[0\]\.reference_none: 'skip' is both a policy and a class of this output: rename the class$"),
        (OUTPUT, OUTPUT.replace("truth.csv", "truth.csv:diagnosis") + '\nreference_none = "skip"',
         r"outputs\[0\]\.reference_none: applies to a one-hot reference only"),
        (OUTPUT, OUTPUT.replace("truth.csv", "../truth.csv"),
         r"outputs\[0\]\.reference: '\.\./truth\.csv' must be a relative path inside the ground truth$"),
        (OUTPUT, OUTPUT.replace("truth.csv", "/gt/truth.csv:diagnosis"),
         r"outputs\[0\]\.reference: '/gt/truth\.csv:diagnosis' must be a relative path inside the ground truth$"),
        (OUTPUT, OUTPUT.replace("truth.csv", "truth.txt"),
         r"outputs\[0\]\.reference: 'truth\.txt' is not 'file\.csv:column' or a one-hot 'file\.csv' \(a 0/1 column "
         r"per class\)$"),
        (OUTPUT, OUTPUT.replace('"probabilities"', '"number"').replace("classes = [\"MEL\", \"NV\", \"BCC\"]\n", ""),
         r"outputs\[0\]\.reference: 'truth\.csv' is not 'file\.csv:column'$"),
    ],
)  # fmt: skip
def test_bad_one_hot_declarations_name_the_key(old, new, message):
    assert old in JOBS
    with pytest.raises(ConfigurationError, match=message):
        parse(JOBS.replace(old, new, 1), "one-hot.toml")


def test_the_declared_reference():
    output = parse(JOBS.replace(OUTPUT, OUTPUT + '\nreference_columns = { MEL = "melanoma" }'), "j.toml").outputs[0]
    assert output.reference.one_hot and output.reference.csv_file == "truth.csv"
    assert output.reference.columns == (("MEL", "melanoma"), ("NV", "NV"), ("BCC", "BCC"))
    unknown = parse(JOBS.replace(OUTPUT, OUTPUT + '\nreference_none = "NV"'), "j.toml").outputs[0].reference
    assert unknown.none == "NV" and unknown.read_columns == ("MEL", "BCC")
    by_name = parse(JOBS.replace("truth.csv", "truth.csv:diagnosis"), "j.toml").outputs[0].reference
    assert not by_name.one_hot and by_name.read_columns == ("diagnosis",)


CHOICE_JOBS = f"""
name = "one-hot-jobs"
title = "A choice output of algorithm jobs against a one-hot truth"
[[inputs]]
slug = "dermoscopy"
[cases]
id_column = "image"
[[outputs]]
slug = "label"
kind = "choice"
classes = {json.dumps(CLASSES)}
reference = "truth.csv"
missing = "misclassification"
[[metrics]]
metric = "balanced_accuracy"
output = "label"
bootstrap = true
[[metrics]]
metric = "accuracy"
output = "label"
[bootstrap]
resamples = 50
[leaderboard]
score = "aggregates.balanced_accuracy"
"""


def jobs_run(
    root: Path, evaluate_cli, text: str, truth: list[str], answers: list[str | None], images: list[str] = IMAGES
) -> dict:
    """A run of algorithm jobs, one per image with its answer (``None``: a job without the output)."""
    (root / "gt").mkdir(parents=True)
    (root / "gt" / "truth.csv").write_text("\n".join(truth) + "\n")
    (root / "c.toml").write_text(text)
    challenge = get(str(root / "c.toml"))
    (socket,) = challenge.phase.outputs
    jobs = [JobSpec(challenge.job_inputs(image), {} if answer is None else {socket: answer})
            for image, answer in zip(images, answers, strict=True)]  # fmt: skip
    write_input(root / "input", jobs)
    run = evaluate_cli(str(root / "c.toml"), root / "input", ground_truth=root / "gt")
    assert run.exit_code == 0, run.stderr
    return run.metrics


def test_a_choice_output_of_jobs_scores_the_same_against_either_form(tmp_path, evaluate_cli):
    """Algorithm jobs (predictions.json), two of them without the output (misclassified): the one-hot
    truth and the class-name column give byte-identical aggregates, equal to scikit-learn."""
    answers = [None if i in (3, 7) else c for i, c in enumerate(CHOICES)]
    by_name = CHOICE_JOBS.replace('"truth.csv"', '"truth.csv:diagnosis"')
    names = jobs_run(tmp_path / "names", evaluate_cli, by_name, class_name_lines(), answers)
    one_hot = jobs_run(tmp_path / "one-hot", evaluate_cli, CHOICE_JOBS, one_hot_lines(), answers)
    same_scores(one_hot, names)
    answered = [MISCLASSIFIED if a is None else a for a in answers]
    got = one_hot["aggregates"]
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(TRUTH, answered), abs=1e-9)
    assert got["accuracy"] == pytest.approx(accuracy_score(TRUTH, answered), abs=1e-9)
    assert one_hot["missing"]["label"] == [IMAGES[3], IMAGES[7]]


UNKNOWN = (0, 5, 13)  # images whose class is UNK: in a truth without a UNK column, a row of zeros


def test_reference_none_a_class_without_a_column(tmp_path, evaluate_cli):
    """ISIC 2019's UNK without a UNK column: ``reference_none = "UNK"`` makes a row without a class at
    1 that class; the same scores as a class-name column naming UNK."""
    text = CHOICE_JOBS.replace(json.dumps(CLASSES), json.dumps((*CLASSES, "UNK")))
    names = [line if i - 1 not in UNKNOWN else line.split(",")[0] + ",UNK" for i, line in enumerate(class_name_lines())]
    truth = [line if i - 1 not in UNKNOWN else ",".join([line.split(",")[0]] + ["0.0"] * len(CLASSES))
             for i, line in enumerate(one_hot_lines())]  # fmt: skip
    answers = [("UNK" if i in (0, 1) else c) for i, c in enumerate(CHOICES)]
    by_name = jobs_run(tmp_path / "names", evaluate_cli, text.replace('"truth.csv"', '"truth.csv:diagnosis"'), names,
                       answers)  # fmt: skip
    one_hot = jobs_run(tmp_path / "one-hot", evaluate_cli, text.replace('"truth.csv"', '"truth.csv"\nreference_none = '
                       '"UNK"'), truth, answers)  # fmt: skip
    same_scores(one_hot, by_name)
    reference = [line.split(",")[1] for line in names[1:]]
    assert one_hot["aggregates"]["balanced_accuracy"] == pytest.approx(
        balanced_accuracy_score(reference, answers), abs=1e-9
    )
    assert one_hot["settings"]["outputs"]["label"]["reference_none"] == "UNK"
    assert "UNK" not in one_hot["settings"]["outputs"]["label"]["reference_columns"]

    # "skip": those rows leave the output (every output a CSV reference: they are no cases at all)
    kept = [i for i in range(N) if i not in UNKNOWN]
    text = CHOICE_JOBS.replace('"truth.csv"', '"truth.csv"\nreference_none = "skip"')
    skipped = jobs_run(tmp_path / "skip", evaluate_cli, text, truth, [CHOICES[i] for i in kept],
                       [IMAGES[i] for i in kept])  # fmt: skip
    assert list(skipped["case"]) == [IMAGES[i] for i in kept]
    assert skipped["aggregates"]["accuracy"] == pytest.approx(
        accuracy_score(TRUTH[kept], [CHOICES[i] for i in kept]), abs=1e-9
    )
