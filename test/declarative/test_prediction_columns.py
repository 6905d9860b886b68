"""A prediction-file phase read as columns (``declarative.columns``): the same metrics.json, byte for byte,
as the row-by-row reading it stands in for, and the same first problem (line, case, column) for a CSV it
does not take; the reference CSVs split whole (``reference._csv_rows``) as the ``csv`` module splits them."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from conftest import REPO

from evaluation.declarative import columns, engine, reference
from evaluation.errors import EvaluationError
from evaluation.pipeline import evaluate

sys.path.insert(0, str(REPO / "benchmarks"))
import whole_path

ROWS = 1200  # past metrics_json.FAST_CASES: the per-case section written column by column too


def phase(folder: Path) -> tuple[Path, Path, Path]:
    """The declaration, ground truth folder and participant's CSV of benchmarks/whole_path.py's CSV phase."""
    declaration, truth, answers = whole_path.csv_inputs(folder, ROWS)
    return declaration, truth.parent, answers


def run(declaration: Path, truth: Path, answers: Path, output: Path) -> bytes | str:
    """metrics.json's bytes, or the message of the run's error."""
    try:
        evaluate(str(declaration), answers.parent, output, truth, log=lambda _: None)
    except EvaluationError as error:
        return str(error)
    return (output / "metrics.json").read_bytes()


def both(tmp_path: Path, monkeypatch, edit=None) -> tuple[bytes | str, bytes | str, bool]:
    """The run read as columns and row by row (columns refused), and whether the columns were taken."""
    declaration, truth, answers = phase(tmp_path / "phase")
    if edit:
        answers.write_text(edit(answers.read_text()))
    taken = []
    original = columns.scored_columns

    def spy(*arguments):
        found = original(*arguments)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(engine, "scored_columns", spy)
    fast = run(declaration, truth, answers, tmp_path / "fast")
    monkeypatch.setattr(engine, "scored_columns", lambda *_: None)
    slow = run(declaration, truth, answers, tmp_path / "slow")
    return fast, slow, taken == [True]


def test_columns_give_the_same_metrics_json(tmp_path, monkeypatch):
    fast, slow, taken = both(tmp_path, monkeypatch)
    assert taken and isinstance(fast, bytes) and fast == slow


def replace_cell(line: int, column: int, text: str):
    def edit(content: str) -> str:
        lines = content.split("\n")
        cells = lines[line - 1].split(",")
        cells[column] = text
        lines[line - 1] = ",".join(cells)
        return "\n".join(lines)

    return edit


# cells that are not their float's repr, and some that are (written as they stand in metrics.json)
WRITTEN_OTHERWISE = [
    (1, "0.50"), (1, "+0.25"), (1, ".5"), (1, "1."), (1, "1e-5"), (1, "0.00001"), (1, "00.5"), (1, "0"),
    (1, "0.0001"), (1, "0.000123456789012"), (1, "0.1234567890123456"), (1, "0.30000000000000004"),
    (1, "0.0"), (1, "1.0"), (1, "0.100000000000000"), (2, "-0.0"), (2, "-0"), (2, "1000000000000000.0"),
    (2, "9999999999999999.0"), (2, "12345678901234567890"), (2, "123456789012345.6"), (2, "-2.50"),
    (2, "2.5E3"), (2, "0.000099"), (2, "+7"), (2, "3.141592653589793"), (2, "-12.0"),
]  # fmt: skip


def test_cells_written_otherwise_than_repr_give_the_row_readers_bytes(tmp_path, monkeypatch):
    """The per-case section takes a cell's own text only where it is its float's repr (``repr_lengths``)."""

    def edit(text: str) -> str:
        for line, (column, cell) in enumerate(WRITTEN_OTHERWISE, start=50):
            text = replace_cell(line, column, cell)(text)
        return text

    fast, slow, taken = both(tmp_path, monkeypatch, edit)
    assert taken and isinstance(fast, bytes) and fast == slow


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (replace_cell(40, 1, ""), "line 40"),  # blank under the policy "error"
        (replace_cell(41, 1, "0.2_5"), "not a number"),
        (replace_cell(42, 2, "nan"), "not a finite number"),
        (replace_cell(43, 1, "1.5"), "outside [0, 1]"),
        (replace_cell(44, 1, " 0.25 "), None),  # spaces: stripped, taken
        (replace_cell(45, 0, "image_9999999"), "not in the test set"),
        (lambda text: text.replace("\n", "\nimage_0000003,0.5,1.0\n", 1), "repeats"),
        (lambda text: text.rsplit("\n", 2)[0] + "\n", "has no row"),
        (replace_cell(46, 2, "1.0,2"), "cells"),
        (replace_cell(47, 1, "0.\uff15"), "ascii digits"),  # float() reads a full-width 5 as 5
    ],
)
def test_a_csv_the_columns_refuse_gets_the_row_readers_message(tmp_path, monkeypatch, edit, words):
    fast, slow, taken = both(tmp_path, monkeypatch, edit)
    assert fast == slow
    if words is None:
        assert taken and isinstance(fast, bytes)
    else:
        assert not taken and isinstance(fast, str) and words in fast.lower()


@pytest.mark.parametrize(
    "text",
    [
        "id,a,b\n1,x,y\n2,z,w\n",
        "\ufeffid,a,b\r\n1,x,y\r\n\r\n2, z ,w",
        "id,a,a\n1,x,y\n\n\n2,z,w\n",
        "id\n1\n \n2\n",
        "id,a\n1,x\n2\n",
        "id,a\n1,x\n 2, y \n",
        "id,a\n1,x\n2,y",  # ASCII without a blank line (``_ascii_rows``): with no break at the end,
        "id,a\r\n1,x\r\n2,y\r\n",  # CRLF,
        "id,a\n",  # no row,
        "id\n1\n2\n",  # one column,
        "id,a,b\n1,x,y\n2,z\n",  # a short row,
        "id,a\n1,x,y\n2,z\n",  # a long one,
        "id,a\n1,x\n\n",  # a blank line at the end (read line by line)
        "id,a\n1," + "x" * 100 + "\n2,y\n",  # a long cell (cut out of the text as a str)
    ],
)
def test_reference_rows_split_whole_as_the_csv_module_splits_them(tmp_path, text):
    path = tmp_path / "truth.csv"
    path.write_bytes(text.encode())
    rows = [(n, cells) for n, cells in enumerate(csv.reader(text.lstrip("\ufeff").splitlines()), 1) if cells]
    header, found = rows[0][1], rows[1:]
    if any(len(cells) != len(header) for _, cells in found):
        with pytest.raises(reference.ParserError):
            reference._csv_rows(path.read_bytes())
        return
    cells = [[cells[k] for _, cells in found] for k in range(len(header))]
    split, lines, columns = reference._csv_rows(path.read_bytes())
    assert (split, list(lines), columns) == (header, [n for n, _ in found], cells)


@pytest.mark.parametrize("one_hot", [False, True])
@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (None, None),
        (replace_cell(30, 1, ""), "line 30"),  # a blank class cell
        (replace_cell(31, 2, "-0.1"), "cannot be negative"),
        (replace_cell(32, 3, "1.5"), "outside [0, 1]"),
        (replace_cell(33, 1, "0.9"), "sums to"),
        (replace_cell(34, 1, " 0.5 "), "sums to"),  # spaces: stripped, then the sum
        (replace_cell(35, 1, "0.\uff15"), "ascii digits"),
    ],
)
def test_a_probabilities_csv_read_as_columns_gives_the_row_readers_bytes_or_message(
    tmp_path, monkeypatch, one_hot, edit, words
):
    """A probabilities output (a column per class) is read and scored whole: the same metrics.json as the row
    reader (a per-case object per image), or, for a CSV the columns refuse, the row reader's first problem."""
    declaration, truth_csv, answers = whole_path.probability_inputs(tmp_path / "phase", ROWS, one_hot)
    truth = truth_csv.parent
    if edit:
        answers.write_text(edit(answers.read_text()))
    taken = []
    original = columns.scored_columns
    monkeypatch.setattr(engine, "scored_columns", lambda *a: taken.append(original(*a)) or taken[-1])
    fast = run(declaration, truth, answers, tmp_path / "fast")
    monkeypatch.setattr(engine, "scored_columns", lambda *_: None)
    slow = run(declaration, truth, answers, tmp_path / "slow")
    assert fast == slow
    if words is None:
        assert isinstance(fast, bytes) and taken[0] is not None
        assert json.loads(fast)["case"]["ISIC_0000000"]["diagnosis"].keys() == {"MEL", "NV", "BCC"}
    else:
        assert taken == [None] and isinstance(fast, str) and words in fast.lower()
