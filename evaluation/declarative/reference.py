"""The reference of a declared challenge, read from the ground truth and checked (its errors are the organizer's).

``load_declared_reference`` lists the cases (from the first output whose reference lists them) and reads every
reference: path patterns resolve to one file per case (``{stem}`` / ``.*`` patterns case by case), CSV columns
to one value per case (c_index: with the ``event`` column; one-hot class columns: one class per case), boxes /
points references to one JSON file per image or one JSON document ``{image: objects}`` (``platform.detections``).
"""

from __future__ import annotations

import csv
import glob
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.declarative.output_kinds import CLASS_REFERENCE, Choice, Number, OutputSpec, Probabilities
from evaluation.declarative.schema import BINARY_REFERENCE_METRICS, Cases, Declaration
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.platform.detections import point_names, point_numbers
from evaluation.platform.files import read_bytes
from evaluation.platform.ground_truth import image_file, inside, read_file
from evaluation.platform.matching import stem
from evaluation.platform.prediction_file import (
    cell_texts,
    distinct_rows,
    float_cells,
    padded_cells,
    plain_decimals,
)
from evaluation.platform.sockets import parse_json_bytes


@dataclass(frozen=True, eq=False)
class DeclaredReference:
    """The cases (sorted) and, per output, the reference file or value of every case."""

    cases: tuple[str, ...]
    files: Mapping[str, Mapping[str, Path]]
    values: Mapping[str, Mapping[str, Any]]
    root: Path  # the ground-truth folder
    events: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)  # c_index: output -> case -> event
    groups: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # a grouped metric -> case -> group
    order: tuple[str, ...] = ()  # the cases in the row order of the first output's reference CSV (stacked frames)
    # points outputs with reference_diameter / reference_ignore: output -> case -> (diameters, ignored)
    findings: Mapping[str, Mapping[str, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    stacks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # listed stacks ([cases] stacks): their frames
    fields: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # [cases] fields: field -> case -> text
    weights: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)  # metric -> column -> weights


def strip_marker(name: str, markers: Sequence[str]) -> str:
    """``name`` without the first of ``markers`` it ends with (letter case ignored), as ``[cases] strip``."""
    return next((name[: -len(m)] for m in markers if m and name.lower().endswith(m.lower())), name)


def _pattern_cases(ground_truth: Path, pattern: str) -> dict[str, Path]:
    head, tail = pattern.split("{case}")
    matcher = re.compile(re.escape(head) + "(.+)" + re.escape(tail))
    found = {}
    for path in sorted(ground_truth.glob(pattern.replace("{case}", "*"))):
        match = matcher.fullmatch(path.relative_to(ground_truth).as_posix())
        if match and path.is_file():
            found[match.group(1)] = path
    return found


def _listed_cases(ground_truth: Path, output: OutputSpec, cases: Cases) -> dict[str, Path]:
    """The reference files of a ``<folder>/{case}.*`` pattern: every file of the folder ending in one
    of the output's reference suffixes (letter case ignored), named by its case as a job is (the
    suffix and a ``[cases] strip`` marker removed); no folder, no file or two files for a case are errors."""
    folder_text = output.reference.pattern.removesuffix("{case}.*")
    folder = ground_truth / folder_text
    whose = cases.ground_truth
    if not folder.is_dir():
        raise ConfigurationError(f"{whose} has no {folder_text or './'} folder.")
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or not path.name.lower().endswith(output.reference.suffixes):
            continue
        case = strip_marker(stem(path.name, output.reference.suffixes), cases.strip)
        if case in found:
            raise ConfigurationError(f"{whose} has two label files for {case}.")
        found[case] = path
    if not found:
        raise ConfigurationError(f"{whose} {folder_text or './'} folder holds no label image.")
    return found


def _per_case_files(ground_truth: Path, output: OutputSpec, cases: Sequence[str]) -> dict[str, Path]:
    """The reference file of each case for a ``{stem}`` or ``.*`` pattern: exactly one must exist."""
    pattern, found = output.reference.pattern or "", {}
    for case in cases:
        filled = glob.escape(pattern.replace("{stem}", stem(case)).replace("{case}", case).removesuffix(".*"))
        candidates = sorted(ground_truth.glob(filled + ".*")) if pattern.endswith(".*") else [ground_truth / filled]
        files = [
            p for p in candidates
            if p.is_file() and (not output.reference.suffixes or p.name.lower().endswith(output.reference.suffixes))
        ]  # fmt: skip
        if len(files) != 1:
            raise ConfigurationError(
                f"The ground truth needs exactly one {output.noun or 'reference'} for {case} (found {len(files)}): "
                f"{pattern}."
            )
        found[case] = files[0]
    return found


class ParserError(csv.Error):
    """A CSV that is no table: a broken quote, or a row whose cells do not match its header (pandas'
    ``read_csv`` name, which the former HECKTOR classes' messages gave)."""


class EmptyDataError(csv.Error):
    """A CSV without even a header row (pandas' name, as ``ParserError``)."""


def frame_cases(stack: str, count: int) -> tuple[str, ...]:
    """The cases of a listed stack's ``count`` frames: ``<stack>:<frame>``, the frame its position in the stack
    (from 0)."""
    return tuple([f"{stack}:{frame}" for frame in range(count)])


def _listed_stacks(
    ground_truth: Path, cases: Cases, needed: Sequence[str]
) -> tuple[dict[str, tuple[str, ...]], dict[str, list[Any]]]:
    """``[cases] stacks``: the stacks of the JSON ground truth by name (sorted), each its frames' cases in
    ``frame_order``, and the ``needed`` fields of every frame in that order (``{field: [value, ...]}``; the
    file: ``{stack: [{field: value, ...}, ...]}``)."""
    path, named = ground_truth / cases.stacks, cases.ground_truth
    if not path.is_file():
        raise ConfigurationError(f"{named} has no {cases.stacks}.")
    stacks: dict[str, tuple[str, ...]] = {}
    columns: dict[str, list[Any]] = {name: [] for name in needed}
    data = read_file(ground_truth, path)
    try:
        document = json.loads(data.decode("utf-8"))
        key = cases.frame_order
        for stack, frames in sorted(document.items()):
            ordered = sorted(frames, key=lambda record: int(record[key]))
            stacks[stack] = frame_cases(stack, len(ordered))
            for name, column in columns.items():
                column.extend([record[name] for record in ordered])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        name = cases.ground_truth_name
        where = f" (see the documentation's {name} page for its format)" if name else ""
        raise ConfigurationError(
            f"{named} {cases.stacks} is malformed ({type(error).__name__}): fix it in the phase's ground truth{where}."
        ) from None
    if not stacks:
        raise ConfigurationError(f"{named} {cases.stacks} lists no stack.")
    return stacks, columns


def _csv_rows(raw: bytes) -> tuple[list[str], Sequence[int], list[Sequence[str]]]:
    """The header, the rows' lines (1 = the header; a row with a quoted line break: its last line) and the
    cells of each column of a UTF-8 CSV (``raw``: its bytes; a BOM allowed, blank lines skipped), strictly: no
    quote left open, every row as many cells as the header (a short row is not a blank cell). A file without
    quotes, NULs or lone carriage returns is split whole (each line a row); any other by the ``csv`` module, row
    by row."""
    data = raw
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = ""  # read row by row: a malformed row before the undecodable byte is the error, as always
    plain = (
        text and '"' not in text and "\x00" not in text and ("\r" not in text or text.count("\r") == text.count("\r\n"))
    )
    if plain and "\r" in text:
        text = text.replace("\r\n", "\n")
        data = text.encode()
    whole = _ascii_rows(text, data[len(data) - len(text) :]) if plain and text.isascii() else None
    if whole is not None:
        return whole
    lines = text.split("\n") if plain else []
    if lines and not lines[-1]:
        lines.pop()
    if lines and lines[0] and max(map(len, lines)) <= csv.field_size_limit():
        header, body, numbers = lines[0].split(","), lines[1:], range(2, len(lines) + 1)
        if "" in body:  # a blank line
            kept = [k for k, line in enumerate(body) if line]
            body, numbers = [body[k] for k in kept], [k + 2 for k in kept]
        if body and set(map(str.count, body, repeat(","))) != {len(header) - 1}:
            raise ParserError()
        cells = ",".join(body).split(",") if body else []
        return header, numbers, [cells[k :: len(header)] for k in range(len(header))]
    with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise EmptyDataError()
            found, rows = [], []
            for cells in reader:
                if cells and len(cells) != len(header):
                    raise ParserError()
                if cells:
                    found.append(reader.line_num)
                    rows.append(cells)
        except (EmptyDataError, ParserError):
            raise
        except csv.Error:  # the csv module's own: a quote left open
            raise ParserError() from None
    return header, found, [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in header]


def _ascii_rows(text: str, encoded: bytes) -> tuple[list[str], Sequence[int], list[Sequence[str]]] | None:
    """``_csv_rows`` of an ASCII CSV (``encoded``: its bytes) without quotes, NULs or carriage returns and with
    no blank line (else ``None``): its lines' ends and commas found by numpy (every line as many cells as the
    header: a ``ParserError``), each column its cells' bytes (``_Column``)."""
    data = np.frombuffer(encoded, np.uint8)
    breaks = np.flatnonzero(data == ord("\n"))
    if not text.endswith("\n"):
        breaks = np.r_[breaks, data.size]  # the last line ends at the end of the text
    lengths = np.diff(breaks, prepend=-1) - 1
    if not lengths[0] or (lengths[1:] == 0).any() or lengths.max() > csv.field_size_limit():
        return None  # (no header, a blank line, or a line the csv module refuses)
    found = np.flatnonzero(data == ord(","))
    before = np.searchsorted(found, breaks)  # the commas before each line's end
    width, commas = int(before[0]) + 1, np.diff(before)  # the header's cells, each row's commas
    if (commas != width - 1).any():
        raise ParserError()
    edges = [breaks[:-1], *found.reshape(breaks.size, width - 1)[1:].T, breaks[1:]]  # (each column's, before it)
    bare = not any(space in text for space in " \t\x0b\x0c\x1c\x1d\x1e\x1f")
    columns = [_Column(text, data, edges[k] + 1, edges[k + 1], bare) if commas.size else [] for k in range(width)]
    return text[: breaks[0]].split(","), range(2, commas.size + 2), columns


class _Column(Sequence[str]):
    """A column of an ASCII CSV read whole (``_ascii_rows``): its cells' bytes (``data[starts[k]:ends[k]]``),
    their strs made on first use (a number column read whole needs none: ``numbers``); ``bare``: no cell of
    the file holds a space (``str.strip`` leaves it as it is)."""

    def __init__(self, text: str, data: np.ndarray, starts: np.ndarray, ends: np.ndarray, bare: bool) -> None:
        self._text, self._data, self._starts, self._ends, self.bare = text, data, starts, ends, bare
        self._cells: list[str] | None = None
        self._rows: np.ndarray | None = None

    def _padded(self) -> np.ndarray | None:
        """The cells as ``padded_cells`` with a NUL after each, made once (their strs and ``distinct`` read them);
        ``None`` for a cell longer than 64 bytes."""
        lengths = self._ends - self._starts
        if self._rows is None and lengths.max(initial=0) <= 64:
            self._rows = padded_cells(self._data, self._starts, lengths, int(lengths.max(initial=0)) // 8 + 1)
        return self._rows

    def _strings(self) -> list[str]:
        if self._cells is None:
            rows = self._padded()
            self._cells = (
                cell_texts(rows, self._ends - self._starts) if rows is not None
                else list(map(self._text.__getitem__, map(slice, self._starts.tolist(), self._ends.tolist())))
            )  # fmt: skip
        return self._cells

    def numbers(self) -> np.ndarray | None:
        """The cells as floats when every one is a plain decimal (``plain_decimals``), read from the bytes."""
        return plain_decimals(self._data, self._starts, self._ends)

    def distinct(self) -> bool:
        """Whether no two cells are the same (``distinct_rows`` of their bytes; of long cells, their strs)."""
        rows = self._padded()
        return len(set(self)) == len(self) if rows is None else distinct_rows(rows)

    def characters(self) -> np.ndarray | None:
        """The cells' bytes when every cell is one byte (a one-hot column of 0s and 1s), else ``None``."""
        return self._data[self._starts] if self._starts.size and (self._ends - self._starts == 1).all() else None

    def __getitem__(self, index: Any) -> Any:
        return self._strings()[index]

    def __len__(self) -> int:
        return self._starts.size

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings())

    def __contains__(self, cell: object) -> bool:
        if cell == "":
            return bool((self._starts == self._ends).any())
        return cell in self._strings()

    def __eq__(self, other: object) -> bool:
        return list(self) == other

    __hash__ = None  # type: ignore[assignment]


# the reference CSVs of one load, each split and its cases checked once: path -> (header, the rows' lines, the
# cells of each column, the stripped cases)
Tables = dict[Path, tuple[list[str], Sequence[int], list[Sequence[str]], Sequence[str]]]


def _csv_column(
    ground_truth: Path,
    file: str,
    column: str,
    declaration: Declaration,
    binary: bool,
    reader: str = "",
    tables: Tables | None = None,
) -> ByCase:
    """One column of a CSV reference by case (stripped); ``reader`` ends the message of an absent column."""
    ids, _, cells = _csv_table(ground_truth, file, (column,), declaration, binary, reader, tables)
    return ByCase(ids, cells[0])


class ByCase(Mapping[str, Any]):
    """A column by case (a reference CSV's cells, a number reference's values): its cases and their values
    in order (``cells``; a number reference: ``numbers``, a one-hot reference: ``strings``, read-only, the list
    made from them when asked for), the look-up by case made on first use (a column read whole needs none), the
    cells as an array of strings made once (``strings``: a class reference, read by each metric of its
    output)."""

    def __init__(
        self,
        cases: Sequence[str],
        cells: Sequence[Any] | None,
        numbers: np.ndarray | None = None,
        strings: np.ndarray | None = None,
    ) -> None:
        self.cases, self._cells, self.numbers, self._strings = cases, cells, numbers, strings
        for array in (numbers, strings):
            if array is not None:
                array.flags.writeable = False
        self._index: dict[str, Any] | None = None

    @property
    def cells(self) -> Sequence[Any]:
        """The values in case order (a number reference's floats; a class reference's names)."""
        if self._cells is None:
            made = self.numbers if self.numbers is not None else self._strings
            self._cells = made.tolist() if made is not None else []
        return self._cells

    def of(self, cases: Sequence[str]) -> bool:
        """Whether its cases are ``cases``, in their order."""
        mine = self.cases
        if mine is cases or len(mine) != len(cases):
            return mine is cases
        return mine == cases if type(mine) is type(cases) else list(mine) == list(cases)

    def strings(self) -> np.ndarray:
        """``np.array(cells, dtype=str)``, read-only (shared by its readers)."""
        if self._strings is None:
            self._strings = np.array(self.cells, dtype=str)
            self._strings.flags.writeable = False
        return self._strings

    def __getitem__(self, case: str) -> Any:
        if self._index is None:
            self._index = dict(zip(self.cases, self.cells, strict=True))
        return self._index[case]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def values(self) -> ValuesView[Any]:
        """The cells in order, without the look-up by case (a count over a column: ``engine.dataset_counts``)."""
        return _Cells(self)


class _Cells(ValuesView[Any]):
    """``ByCase.values()``: its cells iterated as they are."""

    _mapping: ByCase

    def __iter__(self) -> Iterator[Any]:
        return iter(self._mapping.cells)


def _csv_cells(
    ground_truth: Path, file: str, columns: tuple[str, ...], declaration: Declaration, binary: bool, tables: Tables
) -> dict[str, tuple[int, tuple[str, ...]]]:
    """The cells of ``columns`` of a CSV reference (stripped) by case, with the row's line."""
    ids, lines, cells = _csv_table(ground_truth, file, columns, declaration, binary, "", tables)
    by_row = list(zip(*cells, strict=True)) if cells else [()] * len(ids)
    return dict(zip(ids, zip(lines, by_row, strict=True), strict=True))


def _csv_file(
    ground_truth: Path, file: str, declaration: Declaration, columns: tuple[str, ...], binary: bool
) -> tuple[list[str], Sequence[int], list[Sequence[str]]]:
    """``_csv_rows`` of the ground truth's ``file``; a file absent or not UTF-8 CSV is the organizer's one line
    (naming the ``columns`` read from it)."""
    path, cases = ground_truth / file, declaration.cases
    if not path.is_file():
        raise ConfigurationError(f"{cases.ground_truth} has no {file}.")
    try:
        return _csv_rows(read_file(ground_truth, path))
    except (UnicodeDecodeError, csv.Error) as error:
        what = (
            f"{cases.ground_truth} {file} cannot be parsed as UTF-8 CSV"
            if cases.ground_truth_name
            else f"{file} must be UTF-8 CSV with columns {','.join((cases.id_column, *columns))}"
            f"{' and 0/1 labels' if binary else ''}"
        )
        raise ConfigurationError(f"{what} ({type(error).__name__}): fix it in the phase's ground truth.") from None


def _csv_table(
    ground_truth: Path,
    file: str,
    columns: tuple[str, ...],
    declaration: Declaration,
    binary: bool,
    reader: str = "",
    tables: Tables | None = None,
) -> tuple[Sequence[str], Sequence[int], list[Sequence[str]]]:
    """The cases of a CSV reference (stripped), their rows' lines and the cells of each of ``columns``
    (stripped); the file must hold every column the declaration reads from it (all absent ones named at
    once) and each case once. ``tables``: the files this load has read (each read once; the first
    problem is the first reader's, in its words)."""
    path, id_column = ground_truth / file, declaration.cases.id_column
    if tables is not None and path in tables:
        header, lines, found, ids = tables[path]
        return ids, lines, _stripped(found, _present(header, file, declaration, columns, reader), columns)
    header, lines, found = _csv_file(ground_truth, file, declaration, columns, binary)
    place = _present(header, file, declaration, columns, reader)
    ids = _strip(found[place[id_column]])
    if not (ids.distinct() if isinstance(ids, _Column) else len(set(ids)) == len(ids)):
        seen: set[str] = set()
        case = next(case for case in ids if case in seen or seen.add(case))
        raise ConfigurationError(f"{file} lists case {case} twice.")
    if tables is not None:
        tables[path] = header, lines, found, ids
    return ids, lines, _stripped(found, place, columns)


def _present(
    header: list[str], file: str, declaration: Declaration, columns: tuple[str, ...], reader: str
) -> dict[str, int]:
    """Each column of ``header`` by its place (a column twice: its last, as a dict of the row), once the file
    holds every column the declaration reads from it and ``columns`` (all absent ones named at once)."""
    read = [column for o in declaration.outputs for ref in (o.reference, o.event) if ref and ref.csv_file == file
            for column in ref.read_columns]  # fmt: skip
    absent = [c for c in dict.fromkeys((declaration.cases.id_column, *read, *columns)) if c not in header]
    if absent:
        raise ConfigurationError(f"{file} lacks the column(s) {', '.join(absent)}{reader}.")
    return {column: k for k, column in enumerate(header)}


def _stripped(found: list[Sequence[str]], place: dict[str, int], columns: tuple[str, ...]) -> list[Sequence[str]]:
    """The cells of each of ``columns`` (stripped)."""
    return [_strip(found[place[column]]) for column in columns]


def _strip(cells: Sequence[str]) -> Sequence[str]:
    """The cells stripped (a copy, or a ``_Column`` none of whose cells holds a space as it is): at once when none
    holds a space (in ASCII: ``str.strip``'s own)."""
    if isinstance(cells, _Column) and cells.bare:
        return cells
    joined = "".join(cells)
    if joined.isascii() and not any(space in joined for space in " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"):
        return list(cells)
    return list(map(str.strip, cells))


def _one_hot(
    ground_truth: Path, output: OutputSpec, declaration: Declaration, tables: Tables
) -> Mapping[str, str | None]:
    """A one-hot reference (``reference = "truth.csv"``): each case's one class whose column is true
    (a cell spelled as a boolean reference: ``true_values`` / ``false_values``; a row without one:
    the ``reference_none`` class), ``None`` for a row whose class cells are all blank under
    ``blank = "skip"`` or without a class under ``reference_none = "skip"``. Any other row is the
    organizer's error of one line naming the file, line, case and column, never a cell's text."""
    ref, cases = output.reference, declaration.cases
    file, named = ref.csv_file or "", cases.ground_truth_name
    source = f"the {named} ground truth {file}" if named else file
    columns = dict(ref.columns)
    spellings = "/".join(output.true_values + output.false_values)
    ids, _, cells = _csv_table(ground_truth, file, ref.read_columns, declaration, True, "", tables)
    whole = _one_hot_classes(output, cells)
    if whole is not None:
        return ByCase(ids, None, strings=whole)
    found: dict[str, str | None] = {}
    for case, (line, cells) in _csv_cells(ground_truth, file, ref.read_columns, declaration, True, tables).items():
        where, who = f"Line {line} of {source}", f"{cases.noun} {case}"
        texts = dict(zip(columns, (cell.lower() for cell in cells), strict=True))
        blank = [name for name, text in texts.items() if text in output.blank_values]
        if blank and len(blank) == len(texts) and output.blank == "skip":
            found[case] = None
            continue
        if blank:
            rule = " (blank = 'skip' skips a row only when all its class cells are blank)" * (output.blank == "skip")
            raise ConfigurationError(f"{where} has a blank cell for {who} in column '{columns[blank[0]]}'{rule}.")
        odd = next((name for name, text in texts.items() if text not in output.true_values + output.false_values), None)
        if odd is not None:
            raise ConfigurationError(
                f"{where} has a cell for {who} in column '{columns[odd]}' that is not 0 or 1 ({spellings})."
            )
        ones = [name for name, text in texts.items() if text in output.true_values]
        if not ones and ref.none != "error":
            found[case] = None if ref.none == "skip" else ref.none
            continue
        if len(ones) != 1:
            which = "no class column" if not ones else "more than one class column"
            raise ConfigurationError(
                f"{where} has {which} at 1 for {who}; a one-hot reference needs exactly one "
                f"({', '.join(columns.values())})."
            )
        found[case] = ones[0]
    return found


def _one_hot_classes(output: OutputSpec, cells: list[list[str]]) -> np.ndarray | None:
    """Each row's class of a one-hot reference read whole (``cells``: each class column's cells), when every
    cell is spelled as true or false (none blank) and every row has exactly one true cell; else ``None``
    (read row by row, which words the problem or applies ``blank`` and ``reference_none``)."""
    true, false, blank = set(output.true_values), set(output.false_values), set(output.blank_values)
    characters = [column.characters() if isinstance(column, _Column) else None for column in cells]
    if all(found is not None for found in characters):  # (one byte a cell: no str made per cell)
        counts = sum(np.bincount(found, minlength=256) for found in characters)
        spelled = {chr(code) for code in np.flatnonzero(counts).tolist()}
        if not {text.lower() for text in spelled} <= (true | false) - blank:
            return None
        trues = np.zeros(256, bool)
        trues[[ord(text) for text in spelled if text.lower() in true]] = True
        return _only_ones(output, [trues[found] for found in characters])
    spelled = set().union(*map(set, cells))  # (each distinct cell lowered once)
    if not {text.lower() for text in spelled} <= (true | false) - blank:
        return None
    trues = {text for text in spelled if text.lower() in true}
    return _only_ones(output, [_cells_in(column, trues, "" not in spelled) for column in cells])


def _only_ones(output: OutputSpec, ones: list[np.ndarray]) -> np.ndarray | None:
    """Each row's class (an array of strings) of a one-hot reference from its true cells (a boolean array per class
    column), when every row has exactly one."""
    count, position = np.zeros(ones[0].size, np.intp), np.zeros(ones[0].size, np.intp)
    for k, column in enumerate(ones):
        count += column
        position[column] = k
    if not (count == 1).all():
        return None
    return np.array([name for name, _ in output.reference.columns], dtype=str)[position]


def _cells_in(column: list[str], texts: set[str], filled: bool) -> np.ndarray:
    """Whether each cell of ``column`` is one of ``texts``; a column of one character a cell (``filled``: no cell
    empty) compared as its characters at once."""
    joined = "".join(column)
    if filled and len(joined) == len(column):
        characters = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
        return np.isin(characters, [ord(text) for text in texts if len(text) == 1])
    return np.fromiter(map(texts.__contains__, column), bool, len(column))


def _whole_column(output: OutputSpec, texts: Mapping[str, str], cases: Sequence[str], binary: bool) -> ByCase | None:
    """A number or class output's reference cells of ``cases`` read whole, as ``reference_value`` reads each:
    ``None`` (read cell by cell, which words the problem or skips a blank) for another kind, a class reference
    of a number, a class spelled otherwise than declared, a blank cell or a cell that is not a finite number in
    ASCII (``binary``: 0 or 1) or not a declared class."""
    if not cases or dict(output.options).get(CLASS_REFERENCE):
        return None
    if _in_order(texts, cases):
        column = texts.cells if isinstance(texts, ByCase) else list(texts.values())
    else:
        column = list(map(texts.__getitem__, cases))
    if type(output.type) in (Choice, Probabilities) and not output.options:  # (a class name, as written)
        distinct = set(column)
        whole = distinct <= set(output.classes) and not {c.lower() for c in distinct} & set(output.blank_values)
        return ByCase(cases, list(column)) if whole else None
    if type(output.type) is not Number:
        return None
    if any(blank in column for blank in output.blank_values) or (
        any(blank != blank.lower() or blank != blank.upper() for blank in output.blank_values)
        and set(map(str.lower, column)) & set(output.blank_values)
    ):  # (a blank value without letters is matched as it is)
        return None
    numbers = column.numbers() if isinstance(column, _Column) else None  # (from the file's bytes)
    if numbers is None:  # (not in ASCII, e.g. full-width digits, or no number: the cell-by-cell words)
        numbers = float_cells(column)
    if numbers is None or not np.isfinite(numbers).all() or (binary and not np.isin(numbers, (0.0, 1.0)).all()):
        return None
    return ByCase(cases, None, numbers)


def _in_order(found: Mapping[str, Any], cases: Sequence[str]) -> bool:
    """Whether ``found`` lists exactly ``cases``, in their order (a CSV in case order: no look-up per case)."""
    if isinstance(found, ByCase):
        return found.of(cases)
    return len(found) == len(cases) and list(found) == list(cases)


def _class_column(output: OutputSpec, texts: Mapping[str, str], cases: Sequence[str]) -> Mapping[str, float] | None:
    """A number output's class reference (``true_values`` read as 1, ``false_values`` as 0) of ``cases`` read
    whole, as ``Number.reference_value`` reads each; ``None`` (read cell by cell, which words the problem) for
    another reference or a cell that is neither (a blank one included)."""
    if type(output.type) is not Number or not dict(output.options).get(CLASS_REFERENCE):
        return None
    spelled = {**dict.fromkeys(output.false_values, 0.0), **dict.fromkeys(output.true_values, 1.0)}
    in_order = _in_order(texts, cases)
    cells = (texts.cells if isinstance(texts, ByCase) else list(texts.values())) if in_order else \
        list(map(texts.__getitem__, cases))  # fmt: skip
    read = {text: spelled.get(text.lower()) for text in set(cells)}  # (each spelling looked up once)
    column = list(map(read.__getitem__, cells))
    if None in column:
        return None
    return ByCase(cases, column) if in_order else dict(zip(cases, column, strict=True))


def _binary(declaration: Declaration, output: OutputSpec) -> bool:
    return output.type.numeric and any(
        m.output == output.slug and m.metric in BINARY_REFERENCE_METRICS for m in declaration.metrics
    )


def load_declared_reference(ground_truth: Path, declaration: Declaration) -> DeclaredReference:
    """Every output's reference for the cases of the first output whose reference lists cases (a
    ``{case}`` pattern or a CSV column): the same cases everywhere; ``{stem}`` / ``.*`` patterns are
    looked up case by case. Every file is read below the ground-truth folder resolved once
    (``platform.ground_truth``: nothing outside it is opened)."""
    ground_truth = Path(os.path.realpath(ground_truth))
    files: dict[str, dict[str, Path]] = {}
    texts: dict[str, Mapping[str, str]] = {}
    classes: dict[str, dict[str, str | None]] = {}  # one-hot references: the class of each case (None: blank)
    documents: dict[str, dict[str, Any]] = {}  # boxes / points in one JSON document: each case's objects
    listing = [output for output in declaration.outputs if not output.reference.per_case]
    tables_read: Tables = {}
    tables: dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}  # points CSVs: a row per point
    stacks: dict[str, tuple[str, ...]] = {}
    records: dict[str, list[Any]] = {}  # listed stacks: the frames' fields, in frame order
    framed: list[str] = []  # ... and their frames (cases), stacks by name
    if declaration.cases.stacks:
        needed = [*(o.reference.column for o in listing if o.reference.frames_file), *declaration.cases.fields]
        stacks, records = _listed_stacks(ground_truth, declaration.cases, list(dict.fromkeys(needed)))
        framed = [case for listed in stacks.values() for case in listed]
    for output in listing:
        ref = output.reference
        if ref.frames_file:  # (in frame order: a column read whole looks up no frame)
            texts[output.slug] = ByCase(framed, [str(value).strip() for value in records[ref.column]])
        elif _point_rows(output):
            tables[output.slug] = _point_table(ground_truth, output, declaration)
        elif ref.lists_suffixes:
            files[output.slug] = _listed_cases(ground_truth, output, declaration.cases)
        elif ref.pattern is not None:
            files[output.slug] = _pattern_cases(ground_truth, ref.pattern)
        elif ref.one_hot:
            classes[output.slug] = _one_hot(ground_truth, output, declaration, tables_read)
        elif ref.document is not None:
            documents[output.slug] = _object_document(ground_truth, output)
        else:
            texts[output.slug] = _csv_column(
                ground_truth, ref.csv_file, ref.column, declaration, _binary(declaration, output), "", tables_read
            )
    first = listing[0]
    order = tuple(texts.get(first.slug) or classes.get(first.slug) or ())  # a CSV's cases in file order
    listed = files.get(first.slug) or texts.get(first.slug) or classes.get(first.slug) or tables.get(first.slug)
    # listed stacks: by name, frames in order; else sorted
    cases = order if stacks else tuple(sorted(listed or documents.get(first.slug) or {}))
    if not cases:
        raise ConfigurationError(f"The ground truth holds no case for {first.reference.text}.")
    for output in declaration.outputs:
        if output.reference.per_case:
            files[output.slug] = _per_case_files(ground_truth, output, cases)
    values: dict[str, dict[str, Any]] = {}
    listed_cases: set[str] | None = None  # (made when a reference lists other cases or another order)
    for output in declaration.outputs:
        found = files.get(output.slug) or texts.get(output.slug) or classes.get(output.slug) \
            or tables.get(output.slug) or documents.get(output.slug) or {}  # fmt: skip
        extra = []
        if not _in_order(found, cases):
            listed_cases = set(cases) if listed_cases is None else listed_cases
            extra = sorted(found.keys() - listed_cases)
        lacking = [c for c in cases if c not in found] if extra or len(found) != len(cases) else []
        if output.extra_cases == "ignore" and output is not first:  # the CSV may list other cases (a cohort)
            extra = []
        if extra or lacking:
            which = f"has no reference for case {lacking[0]}" if lacking else f"has case {extra[0]}"
            raise ConfigurationError(
                f"The ground truth of output '{output.slug}' ({output.reference.text}) {which}, unlike "
                f"{first.reference.text}: every output needs a reference for the same cases."
            )
        if output.slug in texts:
            binary = _binary(declaration, output)
            values[output.slug] = (
                _whole_column(output, texts[output.slug], cases, binary)
                or _class_column(output, texts[output.slug], cases)
                or {
                    c: output.type.reference_value(output, texts[output.slug][c], binary, c, output.reference.text)
                    for c in cases
                    if texts[output.slug][c].lower() not in output.blank_values or output.blank == "error"
                }
            )
        one_hot = classes.get(output.slug)
        if isinstance(one_hot, ByCase) and one_hot.of(cases):  # read whole (a class every row), in case order
            values[output.slug] = ByCase(cases, None, strings=one_hot.strings())
        elif one_hot is not None and _in_order(one_hot, cases) and None not in (whole := list(one_hot.values())):
            values[output.slug] = ByCase(cases, whole)
        elif one_hot is not None:
            values[output.slug] = {c: one_hot[c] for c in cases if one_hot[c] is not None}
    for output in declaration.outputs:  # a case scored for every output of together_with or for none
        if output.together_with:
            kept = [c for c in values[output.slug] if all(c in values[other] for other in output.together_with)]
            values[output.slug] = {c: values[output.slug][c] for c in kept}
    if all(o.slug in texts or o.slug in classes for o in declaration.outputs) and any(
        len(found) < len(cases) for found in values.values()
    ):  # a case blank (skipped) everywhere
        cases = tuple(c for c in cases if any(c in found for found in values.values()))
        if not cases:
            raise ConfigurationError(f"The ground truth holds no case for {first.reference.text}.")
    events = {o.slug: _events(ground_truth, declaration, o, values[o.slug], tables_read)
              for o in declaration.outputs if o.event}  # fmt: skip
    findings: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for output in declaration.outputs:
        if output.slug in tables:
            values[output.slug] = {c: tables[output.slug][c][0] for c in cases}
            findings[output.slug] = {c: found[1:] for c, found in tables[output.slug].items()}  # (listed order)
        elif output.slug in documents:
            values[output.slug] = {c: _objects(documents[output.slug][c], c, output, "") for c in cases}
        elif output.type.objects:
            values[output.slug] = {c: _reference_objects(ground_truth, files[output.slug][c], c, output)
                                   for c in cases}  # fmt: skip
        elif output.type.image:  # (read by a worker: checked here, where the ground truth is known)
            for case in cases:
                image_file(ground_truth, files[output.slug][case])
        if output.slug not in tables and {"reference_diameter", "reference_ignore"} & set(dict(output.options)):
            findings[output.slug] = {c: _reference_findings(ground_truth, files[output.slug][c], c, output)
                                     for c in cases}  # fmt: skip
    groups = {m.name: _groups(ground_truth, declaration, m.groups, cases, m.name, tables_read)
              for m in declaration.metrics if m.groups}  # fmt: skip
    fields = {name: ByCase(framed, list(map(str, records[name]))) for name in declaration.cases.fields}
    weights = _sample_weights(ground_truth, declaration, cases, tables_read)
    return DeclaredReference(
        cases, files, values, ground_truth, events, groups, order, findings, stacks, fields, weights
    )


def _groups(
    ground_truth: Path, declaration: Declaration, text: str, cases: Sequence[str], metric: str, tables: Tables
) -> dict[str, str]:
    """The group of every case from the ``groups`` column ("file.csv:column") of ``metric``; none may be
    blank, none written in non-ASCII digits (a '١' or '１' group would sit apart from the '1' it looks like)."""
    csv_file, _, column = text.partition(":")
    texts = _csv_column(
        ground_truth, csv_file, column, declaration, False, f", which metric '{metric}' reads as groups", tables
    )
    missing = next((case for case in cases if not texts.get(case)), None)
    if missing is not None:
        raise ConfigurationError(f"{text}: case {missing} has no group.")
    digits = next((case for case in cases if any(c.isdigit() and not c.isascii() for c in texts[case])), None)
    if digits is not None:
        raise ConfigurationError(f"{text}: the group of case {digits} ({texts[digits]!a}) holds non-ASCII "
                                 "digits; write ASCII digits or a word.")  # fmt: skip
    return {case: texts[case] for case in cases}


def _sample_weights(
    ground_truth: Path, declaration: Declaration, cases: Sequence[str], tables: Tables
) -> dict[str, dict[str, np.ndarray]]:
    """Each weighted metric's case weights (in ``cases``' order) by ``sample_weights`` column ("file.csv:column"),
    each column read once (``tables``: the files this load has read): a finite number >= 0 in ASCII per case, or
    the metric's ``absent_weight`` for every case when the file lacks the column; its ``zero_weight`` cases 0; not
    all 0."""
    headers: dict[str, list[str]] = {}
    columns: dict[str, np.ndarray] = {}
    listed: dict[str, Sequence[str]] = {}  # a column's cases in file order
    zeroed: dict[tuple[str, ...], np.ndarray] = {}  # zero_weight -> the cases it zeroes
    checked: dict[tuple[Any, ...], np.ndarray] = {}  # the weights of a column as metrics of equal rules take them
    noun = declaration.cases.noun
    found: dict[str, dict[str, np.ndarray]] = {}
    for metric in (m for m in declaration.metrics if m.sample_weights):
        found[metric.name] = {}
        for text in metric.sample_weights:
            csv_file, _, column = text.partition(":")
            if metric.absent_weight is not None and csv_file not in headers:
                read = tables.get(ground_truth / csv_file)
                headers[csv_file] = (
                    read[0] if read else _csv_file(ground_truth, csv_file, declaration, (column,), False)[0]
                )
            absent = metric.absent_weight is not None and column not in headers[csv_file]
            rules = (text, absent and metric.absent_weight, metric.zero_weight, metric.sorted_weights)
            if rules in checked:  # (ISIC's five metrics weighed alike: checked once)
                found[metric.name][text] = checked[rules].copy()
                continue
            if absent:
                weights = np.full(len(cases), metric.absent_weight)
            else:
                if text not in columns:
                    reader = f", which metric '{metric.name}' reads as case weights"
                    cells = _csv_column(ground_truth, csv_file, column, declaration, False, reader, tables)
                    in_order = _in_order(cells, cases)
                    column_cells = cells.cells if in_order else [cells.get(case, "") for case in cases]
                    columns[text] = _weight_cells(text, column_cells, cases, noun)
                    listed[text] = cells.cases
                weights = columns[text].copy()
            if metric.zero_weight not in zeroed:
                zeroed[metric.zero_weight] = np.isin(np.asarray(cases, dtype=object), metric.zero_weight)
            weights[zeroed[metric.zero_weight]] = 0.0
            if metric.sorted_weights and text in listed and _moved(listed[text], cases, weights):
                raise ConfigurationError(
                    f"{declaration.cases.ground_truth} {csv_file} is not sorted by {noun} and its weights vary; the "
                    f"official evaluation would pair those weights with other {noun}s: sort it by {noun}."
                )
            if not weights.any():
                raise ConfigurationError(f"{text}: every {noun} has the weight 0.")
            checked[rules] = weights
            found[metric.name][text] = weights.copy()
    return found


def _moved(listed: Sequence[str], cases: Sequence[str], weights: np.ndarray) -> bool:
    """Whether weights kept in file order (``listed``) and paired by position with the cases sorted would move:
    isic-challenge-scoring's pairing (load_csv.parse_truth_csv sorts the rows, not the weights)."""
    if list(listed) == sorted(listed):  # (a file in case order: none moves)
        return False
    by_case = dict(zip(cases, weights.tolist(), strict=True))
    in_file = [by_case[case] for case in listed if case in by_case]
    return in_file != [by_case[case] for case in sorted(c for c in listed if c in by_case)]


def _weight_cells(text: str, cells: list[str], cases: Sequence[str], noun: str) -> np.ndarray:
    """The cells of a weight column as numbers, read whole; the first that is not a finite number >= 0 in ASCII
    (no digit separator) is the organizer's error naming its case."""
    weights = float_cells(cells, separators=False)
    if weights is None:  # (some cell is not a number in ASCII: which one)
        weights = np.array([_weight(cell) for cell in cells])
    wrong = np.flatnonzero(~(np.isfinite(weights) & (weights >= 0)))
    if wrong.size:
        case = cases[int(wrong[0])]
        raise ConfigurationError(f"{text}: the weight of {noun} {case} ({cells[int(wrong[0])][:40]!a}) is not a "
                                 "number >= 0.")  # fmt: skip
    return weights


def _weight(cell: str) -> float:
    """One weight cell as a number (NaN: not a decimal number in ASCII)."""
    try:
        return float(cell) if cell.isascii() and "_" not in cell else math.nan
    except ValueError:
        return math.nan


def _reference_objects(root: Path, path: Path, case: str, output: OutputSpec) -> np.ndarray:
    """A case's reference boxes (n, 4) or points (n, 3) from its JSON file (the platform's JSON, or
    [[x1, y1, x2, y2], ...] / [[x, y(, z)], ...]); a malformed file is the organizer's, named without its content."""
    kind = output.kind
    try:
        data = read_bytes(inside(root, path), f"reference {kind}", case)
        document = parse_json_bytes(data, f"reference {kind}", case)
    except SubmissionError as error:
        raise ConfigurationError(f"The reference {kind} of case {case} ({path.name}): {error}") from None
    return _objects(document, case, output, f" ({path.name})")


def _objects(document: Any, case: str, output: OutputSpec, where: str) -> np.ndarray:
    """A case's parsed reference objects (``where``: its file, for messages)."""
    try:
        return output.type.parser(document, case, scored=False)[0]
    except SubmissionError as error:
        raise ConfigurationError(f"The reference {output.kind} of case {case}{where}: {error}") from None


def _object_document(ground_truth: Path, output: OutputSpec) -> dict[str, Any]:
    """Every case's objects from one JSON document ``{case: objects}`` (``reference = "boxes.json"``; an
    empty list: an image without objects), as written; each is parsed as a per-case file would be. Without
    the file, under ``reference_voc``, the PASCAL VOC XML files. ``reference_fault``: the words of the error
    when they cannot be read (``{problem}``: the error's kind, e.g. RecursionError)."""
    name, options = output.reference.document or "", dict(output.options)
    path, what = ground_truth / name, f"The reference {output.kind} {name}"
    fault = options.get("reference_fault")
    if not path.is_file() and options.get("reference_voc"):
        return _voc_boxes(ground_truth, name, fault)
    if not path.is_file():
        raise ConfigurationError(f"The ground truth has no {name} (the reference {output.kind} of every case).")
    try:
        data = read_bytes(inside(ground_truth, path), what, None, None)  # as large as the test set needs
        document = _faulted(fault, lambda: json.loads(data)) if fault else parse_json_bytes(data, what)
    except SubmissionError as error:
        raise ConfigurationError(str(error)) from None
    if not isinstance(document, dict):
        raise ConfigurationError(fault.format(problem="not an object") if fault else
                                 f"{what} is not a JSON object {{case: {output.kind}}}.")  # fmt: skip
    return document


def _faulted(fault: str, read: Callable[[], Any]) -> Any:
    """``read()``; a failure is the declared ``reference_fault`` naming its kind."""
    try:
        return read()
    except (ValueError, TypeError, AttributeError, RecursionError, SyntaxError) as error:  # (XML: a ParseError)
        raise ConfigurationError(fault.format(problem=type(error).__name__)) from None


def _voc_boxes(ground_truth: Path, name: str, fault: str | None) -> dict[str, Any]:
    """``{image: [[xmin, ymin, xmax, ymax], ...]}`` of every PASCAL VOC XML file under the ground truth (the
    image: its ``filename``, else the file's stem; every ``object/bndbox``), PASCAL VOC's devkit layout."""
    files = sorted(ground_truth.rglob("*.xml"))
    if not files:
        raise ConfigurationError(f"The ground truth has no {name} and no PASCAL VOC XML file.")
    found: dict[str, Any] = {}
    for file in files:
        what = f"The PASCAL VOC file {file.relative_to(ground_truth).as_posix()}"
        try:
            read = partial(_voc_file, inside(ground_truth, file), file.stem, what)
            image, boxes = _faulted(fault, read) if fault else read()
        except (ValueError, TypeError, SyntaxError) as error:  # (ElementTree's ParseError is a SyntaxError)
            raise ConfigurationError(f"{what} cannot be read ({type(error).__name__}).") from None
        except SubmissionError as error:  # (a FIFO, a device, ...)
            raise ConfigurationError(str(error)) from None
        if image in found:
            raise ConfigurationError(f"{what} names image {image} again.")
        found[image] = boxes
    return found


def _voc_file(file: Path, stem: str, what: str) -> tuple[str, list[list[float]]]:
    """One PASCAL VOC file's image name (``stem``: the name of the file the ground truth lists, when it names
    none) and boxes (``file``: that file with its links followed)."""
    import xml.etree.ElementTree as ElementTree  # (only for PASCAL VOC references: not imported by every start)

    root = ElementTree.fromstring(read_bytes(file, what, None, None))
    boxes = [[float(box.findtext(tag)) for tag in ("xmin", "ymin", "xmax", "ymax")] for box in root.iter("bndbox")]
    return root.findtext("filename") or stem, boxes


def _point_rows(output: OutputSpec) -> bool:
    """A points reference CSV with a row per point (``reference = "<file>.csv"``)."""
    return output.kind == "points" and output.reference.text.endswith(".csv") and output.reference.pattern is None


def _point_table(
    ground_truth: Path, output: OutputSpec, declaration: Declaration
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each case's reference points (n, 3), diameters (n,; -1: unknown) and ignored flags (n,) from a
    CSV with a row per point and its ``reference_excluded`` CSV (ignored findings, after the others),
    for the cases of ``reference_cases`` (each row's first cell; else the cases the CSV lists)."""
    options, id_column = dict(output.options), declaration.cases.id_column
    columns = (*options["reference_coordinates"], *filter(None, [options.get("reference_diameter")]))
    rows: dict[str, list[list[float]]] = {}
    for file, ignored in ((output.reference.text, 0.0), (options.get("reference_excluded"), 1.0)):
        for line, case, cells in _table_rows(ground_truth, file, (id_column, *columns)) if file else ():
            numbers = []
            for column, cell in zip(columns, cells, strict=True):
                try:
                    number = float(cell)
                except ValueError:
                    number = math.nan
                if not math.isfinite(number):
                    raise ConfigurationError(f"{file} line {line}: {column} of case {case} is not a finite number.")
                numbers.append(number)
            point = [*numbers[: len(options["reference_coordinates"])], 0.0][:3]
            rows.setdefault(case, []).append([*point, numbers[3] if len(numbers) > 3 else -1.0, ignored])
    listed = options.get("reference_cases")
    cases = [case for _, case, _ in _table_rows(ground_truth, listed, (), header=False)] if listed else sorted(rows)
    twice = next((case for n, case in enumerate(cases) if case in cases[:n]), None)
    if twice is not None:
        raise ConfigurationError(f"{listed} lists case {twice} twice.")
    stray = next((case for case in rows if case not in cases), None)
    if stray is not None:
        raise ConfigurationError(f"{output.reference.text} has case {stray}, which {listed} does not list.")
    found = {}
    for case in cases:
        table = np.array(sorted(rows.get(case, []), key=lambda row: row[4]), dtype=float).reshape(-1, 5)
        found[case] = (table[:, :3], table[:, 3], table[:, 4] > 0)
    return found


def _table_rows(
    ground_truth: Path, file: str, columns: tuple[str, ...], header: bool = True
) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, case, the cells of ``columns`` after the case's) of each row of a reference CSV (stripped);
    ``header=False``: a CSV without a header whose first cell is the case."""
    path = ground_truth / file
    if not path.is_file():
        raise ConfigurationError(f"The ground truth has no {file}.")
    data = read_file(ground_truth, path)
    try:
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="") as handle:
            lines = [(n + 1, row) for n, row in enumerate(csv.reader(handle, strict=True)) if row]
    except (UnicodeDecodeError, csv.Error) as error:
        raise ConfigurationError(f"{file} cannot be parsed as UTF-8 CSV ({type(error).__name__}).") from None
    if not header:
        return [(line, row[0].strip(), ()) for line, row in lines if row[0].strip()]
    names = lines[0][1] if lines else []
    absent = [column for column in columns if column not in names]
    if absent:
        raise ConfigurationError(f"{file} lacks the column(s) {', '.join(absent)}.")
    places = [names.index(column) for column in columns]
    short = next((line for line, row in lines[1:] if len(row) != len(names)), None)
    if short is not None:
        raise ConfigurationError(f"{file} line {short} has {len(names)} cells in its header but not in this row.")
    return [(line, row[places[0]].strip(), tuple(row[p].strip() for p in places[1:])) for line, row in lines[1:]]


def _reference_findings(root: Path, path: Path, case: str, output: OutputSpec) -> tuple[np.ndarray, np.ndarray]:
    """A case's reference points' diameters (under ``reference_diameter``; -1, an unknown size, where
    a point has none or none is declared) and ignored flags (named ``reference_ignore``)."""
    options = dict(output.options)
    try:
        data = read_bytes(inside(root, path), "reference points", case)
        document = parse_json_bytes(data, "reference points", case)
        count = len(output.type.parser(document, case, scored=False)[0])
        key = options.get("reference_diameter")
        diameters = point_numbers(document, key, case) if key else np.full(count, np.nan)
        ignored = np.array([name == options.get("reference_ignore", object()) for name in point_names(document, case)])
    except SubmissionError as error:
        raise ConfigurationError(f"The reference points of case {case} ({path.name}): {error}") from None
    return np.where(np.isnan(diameters), -1.0, diameters), ignored.astype(bool).reshape(count)


def _events(
    ground_truth: Path, declaration: Declaration, output: OutputSpec, times: Mapping[str, Any], tables: Tables
) -> dict:
    """The event indicator of every case with a time (c_index's censoring), spelled as a boolean reference."""
    event = output.event
    texts = _csv_column(ground_truth, event.csv_file, event.column, declaration, True, "", tables)
    found = {}
    for case in times:
        if case not in texts:  # the event in another CSV than the times, without the case's row
            raise ConfigurationError(f"{event.text}: there is no row for case {case}.")
        lowered = texts[case].lower()
        if lowered not in output.true_values + output.false_values:
            spellings = "/".join(output.true_values + output.false_values)
            raise ConfigurationError(f"{event.text}: the event of case {case} is not a boolean ({spellings}).")
        found[case] = lowered in output.true_values
    return found
