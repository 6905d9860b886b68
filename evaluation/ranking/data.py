"""The long assessment table and its checks (challengeR's ``as.challenge`` sanity check).

One row per (algorithm, case): ``algorithm, case, value`` and optionally ``task`` and ``annotator``.
As challengeR 1.0.5 (github wiesenfa/challengeR, ``R/challengeR.R``): values must be numeric, a
missing (algorithm, case) pair is completed as an explicit NA and reported, a duplicate pair is an
error. Stricter than challengeR: one algorithm, one case, a task whose values are all equal and an
infinite value are errors too, each with one clear sentence.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from evaluation.errors import ConfigurationError
from evaluation.platform.files import read_named
from evaluation.platform.metrics_json import CASE_RESULTS_FILE

REQUIRED = ("algorithm", "case", "value")
DEFAULT_TASK = "task"
NA_TOKENS = ("", "NA", "NaN", "nan", "null", "None")


@dataclass(frozen=True)
class Task:
    """One task's complete grid: ``values[i, j]`` = algorithm ``i`` on case ``j`` (NaN = missing).

    With an annotator column a column is the pair (case, annotator), as challengeR's rank-then-aggregate
    ranks per annotator and case (``R/Rank.R``); ``annotators[j]`` names the annotator of column ``j``.
    Columns are case-major (every case has one column per annotator), so resampling and leaving out act
    on whole cases: :meth:`columns` turns case indices into column indices.
    """

    name: str
    algorithms: tuple[str, ...]
    cases: tuple[str, ...]
    values: np.ndarray
    annotators: tuple[str, ...] | None = None
    missing: tuple[tuple[str, str], ...] = field(default=())

    @property
    def width(self) -> int:
        """Columns per case (the number of annotators, 1 without an annotator column)."""
        return len(set(self.annotators)) if self.annotators else 1

    @property
    def n_units(self) -> int:
        """The number of cases that resampling draws from (cases, not (case, annotator) columns)."""
        return len(self.cases) // self.width

    @property
    def unit_names(self) -> tuple[str, ...]:
        """The case names that resampling draws from, in column order."""
        if not self.annotators:
            return self.cases
        return tuple(label.rsplit(" @ ", 1)[0] for label in self.cases[:: self.width])

    def columns(self, case_indices: np.ndarray) -> np.ndarray:
        """Column indices of every annotator of the given case indices (rows stay rows)."""
        width = self.width
        expanded = case_indices[..., None] * width + np.arange(width)
        return expanded.reshape(*case_indices.shape[:-1], case_indices.shape[-1] * width)

    def for_annotator(self, annotator: str) -> Task:
        """The sub-table of one annotator (its cases only)."""
        keep = np.array([a == annotator for a in self.annotators or ()], dtype=bool)
        return Task(
            name=f"{self.name} [{annotator}]",
            algorithms=self.algorithms,
            cases=tuple(c for c, k in zip(self.cases, keep, strict=True) if k),
            values=self.values[:, keep],
        )


def _case_label(case: str, annotator: str | None) -> str:
    return case if annotator is None else f"{case} @ {annotator}"


def parse_values(column: list[str]) -> np.ndarray:
    """Numbers from a CSV column read as text; NA tokens become NaN, anything else is an error."""
    numbers = np.empty(len(column))
    for row, raw in enumerate(column):
        text = raw.strip()
        if text in NA_TOKENS:
            numbers[row] = np.nan
            continue
        try:
            numbers[row] = float(text) if "_" not in text else math.nan
        except ValueError:
            numbers[row] = math.nan
        if math.isnan(numbers[row]):
            raise ConfigurationError(
                f"Row {row + 2} of the data has the non-numeric value {text!r} in column 'value'; "
                "performance values must be numbers (empty or NA for a missing value)."
            )
        if math.isinf(numbers[row]):
            raise ConfigurationError(f"Row {row + 2} of the data has an infinite value; use a finite number or NA.")
    return numbers


def tasks_from_columns(table: Mapping[str, list[str]]) -> dict[str, Task]:
    """Check a long table (column name -> text cells) and turn it into complete per-task grids (sorted
    algorithms and cases)."""
    absent = [name for name in REQUIRED if name not in table]
    if absent:
        raise ConfigurationError(
            f"The data lacks the column(s) {', '.join(absent)}; it needs algorithm, case, value "
            "(and optionally task, annotator)."
        )
    values = parse_values(table["value"])
    columns = {name: [cell.strip() for cell in table[name]] for name in ("algorithm", "case", "task", "annotator")
               if name in table}  # fmt: skip
    for name, cells in columns.items():
        empty = next((row for row, cell in enumerate(cells) if cell in ("", "nan")), None)
        if empty is not None:
            raise ConfigurationError(f"Row {empty + 2} of the data has an empty {name}.")
    columns.setdefault("task", [DEFAULT_TASK] * len(values))
    has_annotator = "annotator" in columns
    keys = list(zip(*(columns[k] for k in ("task", "algorithm", "case", *(["annotator"] if has_annotator else []))),
                    strict=True))  # fmt: skip
    seen = Counter(keys)
    duplicated = next((row for row, key in enumerate(keys) if seen[key] > 1), None)
    if duplicated is not None:
        task, algorithm, case = keys[duplicated][:3]
        raise ConfigurationError(
            f"Algorithm {algorithm!r} has more than one value for case {case!r} in task "
            f"{task!r}; each (algorithm, case) pair must appear once."
        )
    by_task: dict[str, list[int]] = {}
    for row, task in enumerate(columns["task"]):
        by_task.setdefault(task, []).append(row)
    tasks: dict[str, Task] = {}
    for name in sorted(by_task):
        rows = by_task[name]
        algorithms = tuple(sorted({columns["algorithm"][r] for r in rows}))
        column_keys = [
            (columns["case"][r], columns["annotator"][r]) if has_annotator else (columns["case"][r],) for r in rows
        ]
        if has_annotator:  # the full case x annotator grid, an absent pair being a missing value
            cases, annotators = sorted({k[0] for k in column_keys}), sorted({k[1] for k in column_keys})
            grid = [(c, a) for c in cases for a in annotators]
        else:
            grid = sorted(set(column_keys))
        if len(algorithms) < 2:
            raise ConfigurationError(
                f"Task {name!r} has only one algorithm ({algorithms[0]!r}); a ranking needs at least two."
            )
        if len(set(c[0] for c in grid)) < 2:
            raise ConfigurationError(f"Task {name!r} has only one case; a ranking needs at least two cases.")
        matrix = np.full((len(algorithms), len(grid)), np.nan)
        a_index = {a: i for i, a in enumerate(algorithms)}
        c_index = {c: j for j, c in enumerate(grid)}
        matrix[[a_index[columns["algorithm"][r]] for r in rows], [c_index[k] for k in column_keys]] = values[rows]
        finite = matrix[np.isfinite(matrix)]
        if finite.size and np.all(finite == finite[0]):
            raise ConfigurationError(
                f"All values of task {name!r} are equal; every ranking scheme gives a complete tie, "
                "so there is nothing to rank."
            )
        labels = tuple(_case_label(c[0], c[1] if has_annotator else None) for c in grid)
        missing = tuple((algorithms[i], labels[j]) for i, j in zip(*np.nonzero(np.isnan(matrix)), strict=True))
        tasks[name] = Task(
            name=name,
            algorithms=algorithms,
            cases=labels,
            values=matrix,
            annotators=tuple(c[1] for c in grid) if has_annotator else None,
            missing=missing,
        )
    if not tasks:
        raise ConfigurationError("The data has no rows.")
    return tasks


def read_long_csv(path: Path) -> dict[str, Task]:
    """Read and check a long CSV with the standard library (every cell as text, so that nothing is
    coerced silently; blank lines skipped; a UTF-8 byte order mark accepted)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as stream:
            rows = [row for row in csv.reader(stream) if row]
    except FileNotFoundError:
        raise ConfigurationError(f"The data file {path} does not exist.") from None
    except (OSError, csv.Error, UnicodeDecodeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigurationError(f"The data file {path} is not a readable CSV ({first}).") from None
    if not rows:
        raise ConfigurationError(f"The data file {path} is not a readable CSV (it has no header row).")
    header, body = rows[0], rows[1:]
    for line, row in enumerate(body, start=2):
        if len(row) > len(header):
            raise ConfigurationError(
                f"The data file {path} is not a readable CSV (row {line} has {len(row)} fields, the header "
                f"{len(header)})."
            )
    padded = [row + [""] * (len(header) - len(row)) for row in body]
    return tasks_from_columns({name: [row[k] for row in padded] for k, name in enumerate(header)})


def submission_documents(metrics_dir: Path) -> dict[str, Any]:
    """One parsed metrics.json per submission: ``DIR/<submission>/metrics.json`` or ``DIR/<submission>.json``.

    A run with ``--case-results private`` keeps its per-case values in ``case-results.json`` beside
    metrics.json: its ``case`` section is read back into the document, so either form collects alike.
    """
    if not metrics_dir.is_dir():
        raise ConfigurationError(f"The metrics folder {metrics_dir} does not exist.")
    files = {p.parent.name: p for p in sorted(metrics_dir.glob("*/metrics.json"))}
    for path in sorted(metrics_dir.glob("*.json")):
        if path.stem in files:
            raise ConfigurationError(f"Submission {path.stem!r} has both {path.name} and a metrics.json folder.")
        files[path.stem] = path
    if not files:
        raise ConfigurationError(
            f"No metrics.json found in {metrics_dir} (expected DIR/<submission>/metrics.json or DIR/<submission>.json)."
        )
    documents = {}
    for name, path in sorted(files.items()):
        documents[name] = read_json(path)
        private = path.with_name(CASE_RESULTS_FILE)
        if path.name == "metrics.json" and private.is_file() and isinstance(documents[name], dict):
            organizer = read_json(private)
            if isinstance(organizer, dict) and "case" in organizer:
                documents[name].setdefault("case", organizer["case"])
    return documents


def read_json(path: Path, what: str = "metrics file") -> Any:
    """A JSON file (read by ``files.read_named``: bounded, no FIFO), or one sentence naming it: invalid
    JSON (with line and column), NaN/Infinity, nesting too deep for the parser, or an integer beyond a
    float's range (a value the ranking cannot use)."""
    try:
        return json.loads(read_named(path).decode("utf-8"), parse_constant=_refuse_constant, parse_int=_int)
    except RecursionError:
        raise ConfigurationError(f"The {what} {path} nests objects or arrays too deeply to read.") from None
    except _TooLarge as error:
        raise ConfigurationError(f"The {what} {path} holds {error}.") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"The {what} {path} is not valid JSON ({error}).") from None


class _TooLarge(ValueError):
    """An integer beyond a float's range: valid JSON, but no value a ranking can use."""


def _int(text: str) -> int:
    value = int(text)
    try:
        float(value)
    except OverflowError:
        raise _TooLarge(f"an integer of {len(text)} digits ({text[:12]}...), too large for a number") from None
    return value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _flatten(node: Any, prefix: str) -> dict[str, float]:
    """Numeric leaves under ``node`` keyed by dotted path; ``null`` is NA; strings and booleans skipped."""
    if isinstance(node, Mapping):
        flat: dict[str, float] = {}
        for key, child in node.items():
            flat.update(_flatten(child, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if node is None:
        return {prefix: math.nan}
    if isinstance(node, (int, float)) and not isinstance(node, bool):
        return {prefix: float(node)}
    return {}


def collect(metrics_dir: Path) -> pd.DataFrame:
    """The long table from a folder of metrics.json files: ``case.<case>.<metric>`` -> one row per metric.

    The submission is the algorithm, the metric's dotted path the task.
    """
    import pandas as pd  # only here: ranking a long CSV does not pay for pandas

    rows = []
    for submission, document in submission_documents(metrics_dir).items():
        cases = document.get("case") if isinstance(document, Mapping) else None
        if not isinstance(cases, Mapping) or not cases:
            raise ConfigurationError(f"The metrics of submission {submission!r} have no 'case' section to collect.")
        for case, metrics in cases.items():
            for metric, value in _flatten(metrics, "").items():
                rows.append({"algorithm": submission, "case": str(case), "task": metric or "value", "value": value})
    return pd.DataFrame(rows, columns=["algorithm", "case", "task", "value"])
