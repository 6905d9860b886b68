"""A broken clinical.csv under the declared HECKTOR 2025 tasks 2 and 3: the last stderr line is the
one the former Python classes gave (``evaluation/challenges/hecktor.py`` before the merge of branch
'hecktor-decl', 62d8734^1: ``_clinical`` read the file with pandas), written out here; where the
declared engine deliberately differs, the test says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DEMO_INPUT, GROUND_TRUTH

TASKS = ("hecktor2025-task2", "hecktor2025-task3")
CLINICAL = (GROUND_TRUTH / "hecktor2025-task2" / "clinical.csv").read_text(encoding="utf-8")
HEADER, FIRST, SECOND, *_ = CLINICAL.splitlines()
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
