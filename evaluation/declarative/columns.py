"""A prediction-file phase read as columns: the participant's CSV checked and scored column by column.

``scored_columns`` handles the common submission whole: number outputs, each in one column, and probabilities
outputs, a column per class; a row for every reference case and none for another, every cell a finite decimal
number within its range (a probability in [0, 1], a row's probabilities summing to 1 under ``sum = "one"``; no
blank, no unknown or missing case, no python metric). Each column is read once: plain decimals from the
file's bytes at once (``PredictionTable.numbers``, exact), any other number by ``float`` over the column's
cells; checked with numpy. It returns each case's result as ``score_case`` would give it (``ColumnResults``,
which the aggregation and the per-case section of metrics.json read whole): nothing is left for a per-case
task. Any other submission (or any problem) returns ``None`` and the engine reads it row by row, which words
every problem with its line, case and column; so the messages are the row reader's, one place.
``read_columns`` does the same for the columns a declaration's own reader returned (``[submission] reader``:
ISIC's), where python metrics over the set are scored from the columns too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from evaluation.declarative.answers import _predicted_time  # (the row reader's own rule)
from evaluation.declarative.output_kinds import Number, OutputSpec, Probabilities
from evaluation.declarative.python_metric import PYTHON, ReadColumns
from evaluation.declarative.reference import DeclaredReference
from evaluation.declarative.schema import Declaration
from evaluation.declarative.segmentation import CaseResult
from evaluation.platform.prediction_file import PredictionTable, float_cells, printable_texts


def _numbers(table: PredictionTable, column: str, low: float, high: float, nonnegative: bool) -> np.ndarray | None:
    """Column ``column``'s cells as floats (file order), or ``None`` when one is blank, not a decimal number
    ("_": Python's digit separators), not in ASCII (float() reads full-width digits), not finite, outside
    ``[low, high]`` or (``nonnegative``) below 0. Plain decimals are read from the file's bytes at once
    (``PredictionTable.numbers``), any other number cell by cell by ``float``."""
    numbers = table.numbers(column)
    if numbers is None:
        numbers = float_cells(table.column(column), separators=False)
    return numbers if numbers is not None and _within(numbers, low, high, nonnegative) else None


def _within(numbers: np.ndarray, low: float, high: float, nonnegative: bool) -> bool:
    """Whether every number is finite, in ``[low, high]`` and (``nonnegative``) not below 0."""
    if not np.isfinite(numbers).all() or not ((numbers >= low) & (numbers <= high)).all():
        return False
    return not (nonnegative and (numbers < 0).any())


def _probabilities(table: PredictionTable, output: OutputSpec) -> np.ndarray | None:
    """A probabilities output's class columns as a matrix (a row per row of the file, a column per class in
    the declared order), or ``None`` when a cell is not a number in [0, 1] (``_numbers``) or a row's sum is
    not 1 within the tolerance (``_summing``)."""
    found = [_numbers(table, column, 0.0, 1.0, False) for _, column in output.columns]
    if any(column is None for column in found):
        return None
    return _summing(np.stack(found, axis=1), output)


def _summing(matrix: np.ndarray, output: OutputSpec) -> np.ndarray | None:
    """``matrix`` (probabilities in [0, 1], a row per case), or ``None`` when a row's sum is not 1 within the
    tolerance (``sum = "one"``). The row reader sums with ``math.fsum``; a row whose float sum lies within
    1e-9 of the tolerance's edge is summed so too."""
    if output.sum_rule == "one":
        off = np.abs(matrix.sum(axis=1) - 1.0)
        near = np.flatnonzero(np.abs(off - output.sum_tolerance) <= 1e-9)
        off[near] = [abs(math.fsum(row) - 1.0) for row in matrix[near].tolist()]
        if (off > output.sum_tolerance).any():
            return None
    return matrix


class ColumnResults(Mapping[str, CaseResult]):
    """Each case's result, made when asked for (as ``score_case`` gives it: every output submitted), and
    each output's values whole (``column``), which the aggregation reads instead of case by case: a number
    output's floats, a probabilities output's matrix (a row per case, a column per class of ``classes``);
    ``texts``: of an output whose every cell was read from the file's bytes, its values' ``repr`` as NUL-padded
    bytes (``PredictionTable.texts``; a number output's column, a probabilities output's one per class), for the
    per-case section; ``ids``: the cases' ``printable_texts`` when made."""

    def __init__(
        self,
        cases: Sequence[str],
        columns: dict[str, np.ndarray],
        classes: dict[str, tuple[str, ...]],
        texts: dict[str, list[np.ndarray]] | None = None,
        ids: np.ndarray | None = None,
    ) -> None:
        self.cases, self.columns, self.classes, self.texts = tuple(cases), columns, classes, texts or {}
        self.ids = ids
        self._index: dict[str, int] | None = None

    def column(self, slug: str, cases: Sequence[str]) -> np.ndarray:
        """The values of output ``slug`` of ``cases`` (floats; a probabilities output: a row each)."""
        if len(cases) == len(self.cases) and tuple(cases) == self.cases:
            return self.columns[slug]
        if self._index is None:
            self._index = {case: k for k, case in enumerate(self.cases)}
        return self.columns[slug][np.fromiter(map(self._index.__getitem__, cases), np.intp, len(cases))]

    def __getitem__(self, case: str) -> CaseResult:
        if self._index is None:
            self._index = {case: k for k, case in enumerate(self.cases)}
        row = self._index[case]
        values = {
            slug: dict(zip(self.classes[slug], column[row].tolist(), strict=True)) if slug in self.classes
            else float(column[row])
            for slug, column in self.columns.items()
        }  # fmt: skip
        return CaseResult({}, values, dict.fromkeys(self.columns, True), {})

    def __iter__(self) -> Iterator[str]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)


def _columnar(declaration: Declaration, reference: DeclaredReference) -> bool:
    """Whether every output is a number or a probabilities output read from class columns, with a reference for
    every case (a blank reference is skipped case by case)."""
    return all(
        (type(o.type) is Number or (type(o.type) is Probabilities and o.columns))
        and len(reference.values[o.slug]) == len(reference.cases)
        for o in declaration.outputs
    )


def scored_columns(
    table: PredictionTable, reference: DeclaredReference, declaration: Declaration
) -> ColumnResults | None:
    """Each reference case's result (reference order), or ``None``: a submission to read row by row."""
    outputs = declaration.outputs
    cases = reference.cases
    if (
        not _columnar(declaration, reference)
        or any(m.metric == PYTHON for m in declaration.metrics)
        or len(table.rows) != len(cases)
    ):
        return None
    ids = printable_texts(cases)
    order = table.positions(cases, ids)  # each case's row in the file (as many rows as cases: one each)
    if order is None:
        return None
    columns: dict[str, np.ndarray] = {}
    texts: dict[str, list[np.ndarray]] = {}
    for output in outputs:
        if output.columns:
            numbers = _probabilities(table, output)
        else:
            low, high = output.range or (-np.inf, np.inf)
            numbers = _numbers(table, output.column, low, high, _predicted_time(declaration, output))
        if numbers is None:
            return None
        columns[output.slug] = numbers[order]
        found = [table.texts(column, order) for column in output.csv_columns]
        if all(text is not None for text in found):
            texts[output.slug] = found
    return ColumnResults(cases, columns, {o.slug: o.classes for o in outputs if o.columns}, texts, ids)


def read_columns(read: ReadColumns, reference: DeclaredReference, declaration: Declaration) -> ColumnResults | None:
    """Each reference case's result (reference order) from the columns a ``[submission] reader`` returned, or
    ``None``: rows to check one by one (``ReadColumns.rows``), whose messages name the case. Taken whole when
    every output is a number or a probabilities output, no metric is a per-case python metric, each reference
    case has one row and there is no other, and every value passes the row reader's checks (``_within``,
    ``_summing``)."""
    outputs, cases = declaration.outputs, reference.cases
    if (
        not _columnar(declaration, reference)
        or any(m.metric == PYTHON and m.param("over") == "case" for m in declaration.metrics)
        or len(read.cases) != len(cases)
    ):
        return None
    row = {case: k for k, case in enumerate(read.cases)}
    try:
        order = np.fromiter(map(row.__getitem__, cases), np.intp, len(cases))
    except KeyError:  # a case without a row
        return None
    if len(row) != len(cases):  # a case given twice
        return None
    place = {column: k for k, column in enumerate(read.columns)}
    columns: dict[str, np.ndarray] = {}
    for output in outputs:
        if output.columns:
            matrix = read.values[np.ix_(order, [place[column] for _, column in output.columns])]
            numbers = _summing(matrix, output) if _within(matrix, 0.0, 1.0, False) else None
        else:
            low, high = output.range or (-np.inf, np.inf)
            numbers = read.values[order, place[output.column]]
            numbers = numbers if _within(numbers, low, high, _predicted_time(declaration, output)) else None
        if numbers is None:
            return None
        columns[output.slug] = numbers
    return ColumnResults(cases, columns, {o.slug: o.classes for o in outputs if o.columns})
