"""The participant's CSV of a prediction-file phase: found, size-checked, decoded and split into rows.

A prediction-file phase has no algorithm jobs: the participant uploads one CSV, which the platform
puts at ``/input/predictions.csv`` (../shared/spec/platform.md). ``find_prediction_file`` finds it
(that name, else the single ``*.csv`` of the input folder; never a path whose links leave the
folder); ``read_prediction_table`` reads it through ``files.read_bytes`` (a regular file, its size
refused from ``os.stat`` before a byte is read) and returns each row as a mapping column -> text,
keyed by the row's case, so that a challenge can read one column per output or several (per-class
probabilities). Every problem is one line naming the file and the line (and the case when known).
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from evaluation.errors import SubmissionError
from evaluation.platform.files import contained, read_bytes, regular_size

PREDICTION_FILE = "predictions.csv"
SHOWN_CHARACTERS = 40  # of a participant's own cell or header, quoted in a message


class PredictionRow(NamedTuple):
    """One data row: its line in the file (1 = the header; a row with a quoted line break: its last
    line) and its cells (stripped) in the header's order. A tuple, not a dict per row: a file at the
    size limit holds hundreds of thousands of rows (benchmarks/prediction_csv.py)."""

    line: int
    columns: tuple[str, ...]
    values: tuple[str, ...]

    @property
    def cells(self) -> Mapping[str, str]:
        """The row as a mapping column -> text."""
        return dict(zip(self.columns, self.values, strict=True))


@dataclass(frozen=True)
class PredictionTable:
    """The rows of a prediction CSV by case (file order), and its header's columns."""

    file: str
    columns: tuple[str, ...]
    rows: Mapping[str, PredictionRow]


def find_prediction_file(input_dir: Path, name: str = PREDICTION_FILE) -> Path:
    """``name`` in the input folder, else its single ``*.csv`` (resolved, never a path outside it);
    ``input_dir`` itself when it is a file (the participant's pre-flight check of one CSV: the
    evaluation refuses an input that is not a folder before it gets here)."""
    if input_dir.is_file():
        return Path(os.path.realpath(input_dir))
    if os.path.lexists(input_dir / name):
        return contained(input_dir, name)
    found = sorted(p.name for p in input_dir.iterdir() if p.name.lower().endswith(".csv"))
    if len(found) != 1:
        detail = f"it holds {len(found)} ({', '.join(found)})" if found else "it holds none"
        raise SubmissionError(f"Expected one CSV file of predictions ({name}) in the input; {detail}.")
    return contained(input_dir, found[0])


def shown(text: str) -> str:
    """A participant's own text, quoted and cut for a one-line message."""
    return repr(text[:SHOWN_CHARACTERS] + ("..." if len(text) > SHOWN_CHARACTERS else ""))


def read_prediction_table(path: Path, id_column: str, max_mb: float, word: str = "case") -> PredictionTable:
    """The rows of the CSV at ``path`` by their ``id_column`` (``word`` names it in messages).

    Refused, each with one line: a file larger than ``max_mb`` MB (unread), one that is not UTF-8
    (a BOM is allowed) or not CSV, an empty file, a header without ``id_column`` or with a column
    twice, a row with more or fewer cells than the header, a row without an id, an id twice.
    Blank lines are skipped; cells are stripped of surrounding spaces.
    """
    name, what, max_bytes = path.name, f"The prediction file {path.name}", int(max_mb * 1e6)
    size = regular_size(path, what)
    if size > max_bytes:
        raise SubmissionError(
            f"{what} is {size / 1e6:.1f} MB ({size} bytes), more than the {max_mb:g} MB allowed; it was not read."
        )
    data = read_bytes(path, what, max_bytes=max_bytes)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SubmissionError(f"The prediction file {name} is not UTF-8 text (line {line}).") from None
    if not text.strip():
        raise SubmissionError(f"The prediction file {name} is empty; it needs a header line with the column "
                              f"'{id_column}'.")  # fmt: skip
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: dict[str, PredictionRow] = {}
    try:
        header = next(reader)
        columns = tuple(cell.strip() for cell in header)
        counts = Counter(columns)  # one pass: list.count per column is quadratic in a hostile header's width
        twice = next((c for c in columns if counts[c] > 1), None)
        if twice is not None:
            raise SubmissionError(f"The header of the prediction file {name} has the column {shown(twice)} twice.")
        if id_column not in columns:
            listed = ", ".join(shown(c) for c in columns[:10])
            raise SubmissionError(f"The prediction file {name} has no column '{id_column}' (its header: {listed}).")
        position, width = columns.index(id_column), len(columns)
        for cells in reader:
            if len(cells) != width:
                if not cells or (len(cells) == 1 and not cells[0].strip()):
                    continue  # a blank line
                raise SubmissionError(f"Line {reader.line_num} of the prediction file {name} has {len(cells)} cells; "
                                      f"its header has {width} columns.")  # fmt: skip
            line = reader.line_num
            values = tuple(map(str.strip, cells))
            case = values[position]
            if not case:
                raise SubmissionError(f"Line {line} of the prediction file {name} has no {word} in column "
                                      f"'{id_column}'.")  # fmt: skip
            if case in rows:
                raise SubmissionError(f"Line {line} of the prediction file {name} repeats {word} {case} (first on line "
                                      f"{rows[case].line}).", case)  # fmt: skip
            rows[case] = PredictionRow(line, columns, values)
    except csv.Error as error:
        where = f"line {reader.line_num}: {error}"
        raise SubmissionError(f"The prediction file {name} is not valid CSV ({where}).") from None
    return PredictionTable(name, columns, rows)
