"""A broken clinical.csv under the declared HECKTOR 2025 tasks 2 and 3: the last stderr line is the
one the former Python classes gave (``evaluation/challenges/hecktor.py`` before the merge of branch
'hecktor-decl', 62d8734^1: ``_clinical`` read the file with pandas), written out here; where the
declared engine deliberately differs, the test says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, GROUND_TRUTH, REPO

TASKS = ("hecktor2025-task2", "hecktor2025-task3")
CLINICAL = (GROUND_TRUTH / "hecktor2025-task2" / "clinical.csv").read_text(encoding="utf-8")
HEADER, FIRST, SECOND, *_ = CLINICAL.splitlines()
EXPECTED = REPO / "test" / "expected"
UNPARSEABLE = (
    "The HECKTOR ground truth clinical.csv cannot be parsed as UTF-8 CSV ({}): fix it in the phase's ground truth."
)


def _without(*columns: str) -> str:
    names = HEADER.split(",")
    keep = [i for i, name in enumerate(names) if name not in columns]
    return "".join(",".join(line.split(",")[i] for i in keep) + "\n" for line in CLINICAL.splitlines())


def _with(patient_line: str, column: str, value: str) -> str:
    cells = patient_line.split(",")
    cells[HEADER.split(",").index(column)] = value
    return CLINICAL.replace(patient_line, ",".join(cells), 1)


# (name, task or both, clinical.csv bytes (None: no file), the old classes' last line)
BROKEN = [
    ("not UTF-8", TASKS, CLINICAL.encode() + b"X-9\xff,1,0,T1,N0,1\n", UNPARSEABLE.format("UnicodeDecodeError")),
    ("a quote left open", TASKS, CLINICAL.encode() + b'"X-9,1,0,T1,N0,1\n', UNPARSEABLE.format("ParserError")),
    ("a row longer than the header", TASKS, CLINICAL.encode() + b"X-9,1,0,T1,N0,1,7\n",
     UNPARSEABLE.format("ParserError")),
    ("an empty file", TASKS, b"", UNPARSEABLE.format("EmptyDataError")),
    ("no file", TASKS, None, "The HECKTOR ground truth has no clinical.csv."),
    ("no PatientID", TASKS, _without("PatientID").encode(), "clinical.csv lacks the column(s) PatientID."),
    ("no RFS, no Relapse", ("hecktor2025-task2",), _without("RFS", "Relapse").encode(),
     "clinical.csv lacks the column(s) RFS, Relapse."),
    ("no Relapse", ("hecktor2025-task2",), _without("Relapse").encode(), "clinical.csv lacks the column(s) Relapse."),
    ("no HPV Status", ("hecktor2025-task3",), _without("HPV Status").encode(),
     "clinical.csv lacks the column(s) HPV Status."),
]  # fmt: skip
CASES = [pytest.param(task, data, line, id=f"{task} {name}") for name, tasks, data, line in BROKEN for task in tasks]


def _run(tmp_path: Path, evaluate_cli, task: str, data: bytes | None):
    ground_truth = tmp_path / "gt"
    ground_truth.mkdir()
    if data is not None:
        (ground_truth / "clinical.csv").write_bytes(data)
    return evaluate_cli(task, DEMO_INPUT / task, ground_truth=ground_truth)


@pytest.mark.parametrize(("task", "data", "line"), CASES)
def test_a_broken_clinical_csv_gives_the_former_classes_line(tmp_path, evaluate_cli, task, data, line):
    run = _run(tmp_path, evaluate_cli, task, data)
    assert run.exit_code == 1 and run.last_error_line == line, run.stderr
    assert not (run.output / "metrics.json").exists()


@pytest.mark.parametrize(
    ("task", "column", "value", "line"),
    [
        ("hecktor2025-task2", "RFS", "abc", "clinical.csv:RFS: the value of case CHUV-002 is not a finite number."),
        ("hecktor2025-task2", "RFS", "inf", "clinical.csv:RFS: the value of case CHUV-002 is not a finite number."),
        ("hecktor2025-task2", "Relapse", "x", "clinical.csv:Relapse: the event of case CHUV-002 is not a boolean "
         "(1/1.0/true/yes/0/0.0/false/no)."),
        ("hecktor2025-task3", "HPV Status", "maybe", "clinical.csv:HPV Status: the value of case CHUV-002 is not a "
         "boolean (1/1.0/true/positive/yes/+/0/0.0/false/negative/no/-)."),
    ],
)  # fmt: skip
def test_a_bad_clinical_value_names_the_patient_and_not_the_value(tmp_path, evaluate_cli, task, column, value, line):
    """The one deliberate difference: the former classes echoed the cell ("clinical.csv: the row of
    CHUV-002 is malformed (could not convert string to float: 'abc')."), a ground-truth value; the
    declared engine names the file, column and patient only."""
    run = _run(tmp_path, evaluate_cli, task, _with(SECOND, column, value).encode())
    assert run.exit_code == 1 and run.last_error_line == line, run.stderr
    assert value not in run.stderr


@pytest.mark.parametrize("task", TASKS)
def test_a_short_row_is_refused_not_read_as_blank(tmp_path, evaluate_cli, task):
    """pandas filled a row shorter than the header with blanks (the patient silently left out under
    blank = "skip"); the declared engine refuses it."""
    run = _run(tmp_path, evaluate_cli, task, (CLINICAL + "X-9,1,0\n").encode())
    assert run.exit_code == 1 and run.last_error_line == UNPARSEABLE.format("ParserError"), run.stderr


def test_the_demo_clinical_csv_is_as_these_tests_assume():
    assert HEADER == "PatientID,RFS,Relapse,T-stage,N-stage,HPV Status" and SECOND.startswith("CHUV-002,")
    assert FIRST.startswith("CHUM-001,")


# HECKTOR 2026 (declared since issue 29): a broken clinical.csv, the last line of the former module
# (evaluation/challenges/hecktor.py at ed3f064) -> the declared engine's. The declaration reads only the columns
# it scores (the HPV Status is HECKTOR 2025 task 3's), and names the file, column and patient, not the cell.
_2026 = (GROUND_TRUTH / "hecktor2026" / "clinical.csv").read_text(encoding="utf-8")
_LABEL_PATIENTS = "every output needs a reference for the same cases."
CLINICAL_2026 = [
    ("no file", None, "The HECKTOR ground truth has no clinical.csv."),  # the same
    ("no N-stage", _2026.replace(",N-stage", "").replace(",N2,", ",").replace(",N0,", ",").replace(",N3,", ",")
     .replace(",N1,", ","), "clinical.csv lacks the column(s) N-stage."),  # the same
    ("a patient twice", _2026 + "CHUM-001,1296,0,T1,N2,1\n", "clinical.csv lists case CHUM-001 twice."),
    # was: clinical.csv lists a patient twice.
    ("no row for a label image", _2026.replace("MDA-008,60,0,T3,N3,1\n", ""),
     "The ground truth of output 't-stage' (clinical.csv:T-stage) has no reference for case MDA-008, unlike "
     f"labels/{{case}}.*: {_LABEL_PATIENTS}"),  # was: clinical.csv has no row for MDA-008, which has a label image.
    ("RFS without Relapse", _2026.replace("CHUV-002,352,1,", "CHUV-002,352,,"),
     "clinical.csv:Relapse: the event of case CHUV-002 is not a boolean (1/1.0/true/yes/0/0.0/false/no)."),
    # was: clinical.csv: the RFS of CHUV-002 needs a finite time and a Relapse flag.
    ("an unscored stage", _2026.replace("CHUV-002,352,1,T3", "CHUV-002,352,1,Tx"),
     "clinical.csv:T-stage: the value of case CHUV-002 is not one of the declared classes."),
    # was: clinical.csv: the stage of CHUV-002 is not a scored class.
]  # fmt: skip


@pytest.mark.parametrize(("data", "line"), [pytest.param(d, li, id=n) for n, d, li in CLINICAL_2026])
def test_a_broken_2026_clinical_csv(tmp_path, evaluate_cli, data, line):
    ground_truth = tmp_path / "gt"
    shutil.copytree(GROUND_TRUTH / "hecktor2026", ground_truth)
    (ground_truth / "clinical.csv").unlink()
    if data is not None:
        (ground_truth / "clinical.csv").write_text(data, encoding="utf-8")
    run = evaluate_cli("hecktor2026", DEMO_INPUT / "hecktor2026", ground_truth=ground_truth)
    assert run.exit_code == 1 and run.last_error_line == line, run.stderr
    assert not (run.output / "metrics.json").exists()


def test_2026_scores_the_label_patients_of_a_larger_clinical_csv(tmp_path, evaluate_cli):
    """As the module: a clinical.csv row without a label image is not a patient of the phase
    (extra_cases = "ignore"), nor is the HPV Status read (the former module refused a bad one)."""
    ground_truth = tmp_path / "gt"
    shutil.copytree(GROUND_TRUTH / "hecktor2026", ground_truth)
    (ground_truth / "clinical.csv").write_text(_2026.replace(",1\n", ",maybe\n", 1) + "X-9,100,1,T1,N0,1\n")
    run = evaluate_cli("hecktor2026", DEMO_INPUT / "hecktor2026", ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert (run.output / "metrics.json").read_bytes() == (EXPECTED / "hecktor2026" / "metrics.json").read_bytes()
