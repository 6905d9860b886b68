"""A prediction-file phase read as columns: the participant's CSV checked and scored column by column.

``scored_columns`` handles the common submission whole: number outputs, each in one column, a row for every
reference case and none for another, every cell a finite decimal number within its range (no blank, no
unknown or missing case, no per-case python metric). It reads each output's column once
(``PredictionTable.column``), parses it with ``float`` over the whole list and checks it with numpy, and
returns each case's result as ``score_case`` would give it: nothing is left for a per-case task. Any
other submission (or any problem) returns ``None`` and the engine reads it row by row, which words every
problem with its line, case and column; so the messages are the row reader's, one place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evaluation.declarative.output_kinds import Number
from evaluation.declarative.python_metric import PYTHON
from evaluation.declarative.reference import DeclaredReference
from evaluation.declarative.schema import Declaration
from evaluation.declarative.segmentation import CaseResult
from evaluation.platform.prediction_file import PredictionTable


def _predicted_time(declaration: Declaration, slug: str) -> bool:
    """Whether a c_index metric reads output ``slug`` as a predicted time (never negative)."""
    return any(m.output == slug and m.metric == "c_index" and m.param("sign") == "time" for m in declaration.metrics)


def _numbers(cells: list[str], low: float, high: float, nonnegative: bool) -> np.ndarray | None:
    """A column's cells as floats, or ``None`` when one is blank, not a decimal number ("_": Python's
    digit separators), not finite, outside ``[low, high]`` or (``nonnegative``) below 0."""
    if "" in cells or "_" in "".join(cells):
        return None
    try:
        numbers = np.fromiter(map(float, cells), np.float64, len(cells))
    except ValueError:
        return None
    if not np.isfinite(numbers).all() or not ((numbers >= low) & (numbers <= high)).all():
        return None
    return None if nonnegative and (numbers < 0).any() else numbers


def scored_columns(
    table: PredictionTable, reference: DeclaredReference, declaration: Declaration
) -> dict[str, CaseResult] | None:
    """Each reference case's result (reference order), or ``None``: a submission to read row by row."""
    outputs = declaration.outputs
    cases = reference.cases
    if (
        any(type(o.type) is not Number or o.columns for o in outputs)
        or any(m.metric == PYTHON for m in declaration.metrics)
        or any(len(reference.values[o.slug]) != len(cases) for o in outputs)  # (a blank reference skipped)
        or len(table.rows) != len(cases)
        or set(table.rows) != set(cases)
    ):
        return None
    order = np.fromiter(map({case: k for k, case in enumerate(table.rows)}.__getitem__, cases), np.intp, len(cases))
    columns: list[list[Any]] = []
    for output in outputs:
        low, high = output.range or (-np.inf, np.inf)
        numbers = _numbers(table.column(output.column), low, high, _predicted_time(declaration, output.slug))
        if numbers is None:
            return None
        columns.append(numbers[order].tolist())
    slugs = [o.slug for o in outputs]
    submitted = dict.fromkeys(slugs, True)
    return {
        case: CaseResult({}, dict(zip(slugs, values, strict=True)), dict(submitted), {})
        for case, *values in zip(cases, *columns, strict=True)
    }
