"""The participant's answers to a declared challenge, checked, and the missing policies.

A job's value output (``platform.sockets``; boxes and points: ``platform.detections``; class probabilities:
``_probabilities``) or, in a prediction-file phase (``[submission] kind = "csv"``, ``platform.prediction_file``),
the cell of the case's row (a probabilities output: one column per class), checked as a job's value would be;
an absent answer (no job, no row, a blank cell, a row of blank class cells) gets its output's missing policy.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluation.declarative.output_kinds import MISCLASSIFIED as MISCLASSIFIED  # (its former home)
from evaluation.declarative.output_kinds import OutputSpec, cell_number, class_items, probabilities
from evaluation.declarative.reference import DeclaredReference
from evaluation.declarative.schema import Declaration
from evaluation.errors import SubmissionError
from evaluation.platform.prediction_file import PredictionTable, find_prediction_file, read_prediction_table, shown


def checked_value(output: OutputSpec, raw: Any, case: str, named: str, declaration: Declaration) -> Any:
    """A submitted value (``raw``: as JSON) parsed as its output's kind and checked; ``named`` names the case."""
    what = f"The {output.noun or f'output {output.slug!r}'} of {named}"
    return output.type.answer(output, raw, case, what, _predicted_time(declaration, output))


def add_value(
    declaration: Declaration,
    output: OutputSpec,
    case: str,
    named: str,
    raw: Any,
    absent: Callable[[], SubmissionError],
    reference: DeclaredReference,
    values: dict[str, Any],
    submitted: dict[str, bool],
) -> None:
    """One value output of one case (``raw``: as submitted, ``None`` when missing) checked even when
    unscored, then into ``values`` under its missing policy (``absent``: the error of policy "error")."""
    value = None if raw is None else checked_value(output, raw, case, named, declaration)
    if case not in reference.values[output.slug]:
        return  # a blank reference cell under blank = "skip": not scored, not missing
    if raw is None and output.missing == "error":
        raise absent()
    if raw is not None:
        values[output.slug] = value
    elif output.missing != "exclude":
        values[output.slug] = output.type.missing_value(output, reference.values[output.slug][case], case)
    submitted[output.slug] = raw is not None


def read_table(input_dir: Path, declaration: Declaration) -> PredictionTable:
    """The participant's CSV read and checked for every output's column (extra columns are ignored)."""
    submission = declaration.submission
    path = find_prediction_file(input_dir, submission.file)
    word = declaration.cases.noun
    table = read_prediction_table(path, submission.id_column, submission.max_mb, word, submission.strip_suffixes)
    for output in declaration.outputs:
        for name, column in output.columns or (("", output.column),):
            if column not in table.columns:
                listed = ", ".join(shown(c) for c in table.columns[:10])
                which = f", class '{name}'" if name else ""
                raise SubmissionError(
                    f"The prediction file {table.file} has no column '{column}' (output '{output.slug}'{which}); "
                    f"its columns: {listed}."
                )
    return table


def read_cell(declaration: Declaration, output: OutputSpec, table: PredictionTable, case: str) -> tuple[Any, str]:
    """The output's cell of the case's row as the JSON value a job would hold (``None``: blank; a
    probabilities output: its class cells, checked, as {class: probability}), and how messages
    name the case there ("c2 (line 3 of predictions.csv, column 'p')")."""
    row = table.rows[case]
    place = f"{declaration.cases.named(case)} (line {row.line} of {table.file}"
    named = f"{place}, {_columns_named(output)})"
    if output.columns:
        return _row_probabilities(output, table, case, place, declaration.cases.noun), named
    text = row.cells[output.column]
    if not text:
        return None, named
    what = f"The {output.noun or f'output {output.slug!r}'} of {named}"
    return output.type.cell(output, text, what, case), named


def cell_text(output: OutputSpec, value: Any) -> str:
    """A JSON value as a prediction CSV's cell: blank for none, a boolean in the output's first spellings."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return output.true_values[0] if value else output.false_values[0]
    return value if isinstance(value, str) else json.dumps(value)


def class_cell_texts(output: OutputSpec, value: Any, case: str) -> list[str]:
    """A job-style probabilities answer (object or list; ``None``: absent) as the cells of its class
    columns, written as given (the evaluation checks them); a shape without those cells is refused."""
    if value is None:
        return [""] * len(output.classes)
    items = class_items(output, value, case, f"{output.slug}.json")
    return ["" if v is None else json.dumps(v) for _, v in items]


def _columns_named(output: OutputSpec) -> str:
    """The output's CSV columns as messages name them: "column 'p'", "columns 'MEL', 'NV', 'BCC'"."""
    columns = ", ".join(f"'{column}'" for column in output.csv_columns)
    return f"column{'s' if len(output.csv_columns) > 1 else ''} {columns}"


def no_cell(table: PredictionTable, output: OutputSpec, case: str, word: str) -> SubmissionError:
    """The error of a blank cell (or row of blank class cells) under the missing policy "error"."""
    return SubmissionError(
        f"Line {table.rows[case].line} of the prediction file {table.file} has no value for {word} {case} in "
        f"{_columns_named(output)}.",
        case,
    )


def _row_probabilities(
    output: OutputSpec, table: PredictionTable, case: str, place: str, word: str
) -> dict[str, float] | None:
    """A probabilities output's class cells of the case's row, checked as a job's answer would be
    (``_probabilities``), each problem naming its line and column; ``None``: all blank (missing).
    ``place``: the case and its line, as ``read_cell`` names them; ``word`` names a case."""
    row, noun, columns = table.rows[case], output.noun or f"output {output.slug!r}", dict(output.columns)
    cells = row.cells
    texts = {name: cells[column] for name, column in output.columns}
    if not any(texts.values()):
        return None
    blank = next((name for name in output.classes if not texts[name]), None)
    if blank is not None:
        raise SubmissionError(
            f"Line {row.line} of the prediction file {table.file} has no value for {word} {case} in column "
            f"'{columns[blank]}'; the {noun} needs a probability in each of its columns, or none.",
            case,
        )

    def subject(name: str) -> str:
        return f"The {noun} of {place}, column '{columns[name]}')"

    numbers = {name: cell_number(text, subject(name), case) for name, text in texts.items()}
    return probabilities(output, numbers, case, f"The {noun} of {place}, {_columns_named(output)})", subject)


def no_output(output: OutputSpec, case: str) -> SubmissionError:
    """The error of a missing output under the policy "error"."""
    where = "" if output.type.image else f" ({output.relative_path})"
    return SubmissionError(f"Case {case} has no output '{output.slug}'{where}.", case)


def _predicted_time(declaration: Declaration, output: OutputSpec) -> bool:
    """Whether a c_index metric reads ``output`` as a predicted time (``sign = "time"``): never negative."""
    return any(m.output == output.slug and m.metric == "c_index" and m.param("sign") == "time"
               for m in declaration.metrics)  # fmt: skip
