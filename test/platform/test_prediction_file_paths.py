"""The two ways ``read_prediction_table`` splits a CSV agree: a file without quotes is split whole
(``_split_plain``: str.split, numpy cell counts); every file can also be read by the ``csv`` module
row by row (``_split_csv``, the reference: Python's csv is the definition of the format here). On
random quote-free files of valid and malformed rows, blank lines, spaces, CRLF, duplicate and empty
ids, both give the same rows (lines, cells) or the same one-line message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.errors import SubmissionError
from evaluation.platform import prediction_file
from evaluation.platform.prediction_file import read_prediction_table

PIECES = ["a", "b", "x1", "x2", "x3", " x1", "x4 ", "0.5", "é", "", " ", "\t"]
WEIGHTS = np.array([4, 4, 4, 4, 4, 2, 2, 4, 2, 1, 1, 1]) / 33


def random_csv(rng: np.random.Generator, width: int, id_first: bool) -> str:
    header = ["case", *(f"c{k}" for k in range(width - 1))]
    if not id_first:
        header.reverse()
    lines = [",".join(header)]
    for _ in range(int(rng.integers(0, 8))):
        kind = rng.random()
        if kind < 0.08:
            lines.append("")
        elif kind < 0.14:
            lines.append("  ")
        else:
            cells = width + (int(rng.integers(-1, 2)) if kind < 0.2 else 0)
            lines.append(",".join(str(rng.choice(PIECES, p=WEIGHTS)) for _ in range(max(cells, 0))))
    end = str(rng.choice(["\n", "\r\n"]))
    return end.join(lines) + (end if rng.random() < 0.5 else "")


def outcome(path: Path) -> object:
    try:
        table = read_prediction_table(path, "case", 1.0)
    except SubmissionError as error:
        return str(error)
    return [(case, row.line, row.values) for case, row in table.rows.items()]


@pytest.mark.parametrize("seed", range(300))
def test_the_whole_file_split_equals_the_csv_module(tmp_path: Path, monkeypatch, seed: int) -> None:
    rng = np.random.default_rng(seed)
    path = tmp_path / "predictions.csv"
    path.write_bytes(random_csv(rng, int(rng.integers(1, 4)), rng.random() < 0.7).encode())
    fast = outcome(path)
    monkeypatch.setattr(prediction_file, "_split_plain", lambda *arguments: prediction_file._split_csv(*arguments[:3]))
    assert fast == outcome(path)
