"""The long assessment table and its checks (challengeR's ``as.challenge`` sanity check).

One row per (algorithm, case): ``algorithm, case, value`` and optionally ``task`` and ``annotator``.
As challengeR 1.0.5 (github wiesenfa/challengeR, ``R/challengeR.R``): values must be numeric, a
missing (algorithm, case) pair is completed as an explicit NA and reported, a duplicate pair is an
error. Stricter than challengeR: one algorithm, one case, a task whose values are all equal and an
infinite value are errors too, each with one clear sentence.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluation.errors import ConfigurationError

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


def parse_values(column: pd.Series) -> np.ndarray:
    """Numbers from a CSV column read as text; NA tokens become NaN, anything else is an error."""
    text = column.astype(str).str.strip()
    is_na = text.isin(NA_TOKENS) | column.isna()
    numbers = pd.to_numeric(text.where(~is_na, "nan"), errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(np.isnan(numbers) & ~is_na.to_numpy())
    if bad.size:
        row = int(bad[0])
        raise ConfigurationError(
            f"Row {row + 2} of the data has the non-numeric value {text.iloc[row]!r} in column 'value'; "
            "performance values must be numbers (empty or NA for a missing value)."
        )
    infinite = np.flatnonzero(np.isinf(numbers))
    if infinite.size:
        raise ConfigurationError(
            f"Row {int(infinite[0]) + 2} of the data has an infinite value; use a finite number or NA."
        )
    return numbers


def tasks_from_frame(frame: pd.DataFrame) -> dict[str, Task]:
    """Check a long table and turn it into complete per-task grids (sorted algorithms and cases)."""
    absent = [name for name in REQUIRED if name not in frame.columns]
    if absent:
        raise ConfigurationError(
            f"The data lacks the column(s) {', '.join(absent)}; it needs algorithm, case, value "
            "(and optionally task, annotator)."
        )
    frame = frame.copy()
    frame["value"] = parse_values(frame["value"])
    for column in ("algorithm", "case", "task", "annotator"):
        if column in frame.columns:
            frame[column] = frame[column].astype(str).str.strip()
    for column in ("algorithm", "case", "task", "annotator"):
        if column in frame.columns:
            empty = np.flatnonzero(frame[column].isin(("", "nan")).to_numpy())
            if empty.size:
                raise ConfigurationError(f"Row {int(empty[0]) + 2} of the data has an empty {column}.")
    if "task" not in frame.columns:
        frame["task"] = DEFAULT_TASK
    has_annotator = "annotator" in frame.columns
    keys = ["task", "algorithm", "case", *(["annotator"] if has_annotator else [])]
    duplicated = frame.duplicated(keys, keep=False)
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ConfigurationError(
            f"Algorithm {row['algorithm']!r} has more than one value for case {row['case']!r} in task "
            f"{row['task']!r}; each (algorithm, case) pair must appear once."
        )
    tasks: dict[str, Task] = {}
    for name, piece in frame.groupby("task", sort=True):
        algorithms = tuple(sorted(piece["algorithm"].unique()))
        column_keys = piece[["case", "annotator"]] if has_annotator else piece[["case"]]
        if has_annotator:  # the full case x annotator grid, an absent pair being a missing value
            columns = [(c, a) for c in sorted(piece["case"].unique()) for a in sorted(piece["annotator"].unique())]
        else:
            columns = sorted({tuple(row) for row in column_keys.itertuples(index=False)})
        if len(algorithms) < 2:
            raise ConfigurationError(
                f"Task {name!r} has only one algorithm ({algorithms[0]!r}); a ranking needs at least two."
            )
        if len(set(c[0] for c in columns)) < 2:
            raise ConfigurationError(f"Task {name!r} has only one case; a ranking needs at least two cases.")
        values = np.full((len(algorithms), len(columns)), np.nan)
        a_index = {a: i for i, a in enumerate(algorithms)}
        c_index = {c: j for j, c in enumerate(columns)}
        rows = [a_index[a] for a in piece["algorithm"]]
        cols = [c_index[tuple(row)] for row in column_keys.itertuples(index=False)]
        values[rows, cols] = piece["value"].to_numpy()
        finite = values[np.isfinite(values)]
        if finite.size and np.all(finite == finite[0]):
            raise ConfigurationError(
                f"All values of task {name!r} are equal; every ranking scheme gives a complete tie, "
                "so there is nothing to rank."
            )
        labels = tuple(_case_label(c[0], c[1] if has_annotator else None) for c in columns)
        missing = tuple((algorithms[i], labels[j]) for i, j in zip(*np.nonzero(np.isnan(values)), strict=True))
        tasks[str(name)] = Task(
            name=str(name),
            algorithms=algorithms,
            cases=labels,
            values=values,
            annotators=tuple(c[1] for c in columns) if has_annotator else None,
            missing=missing,
        )
    if not tasks:
        raise ConfigurationError("The data has no rows.")
    return tasks


def read_long_csv(path: Path) -> dict[str, Task]:
    """Read and check a long CSV (every column read as text so that nothing is coerced silently)."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise ConfigurationError(f"The data file {path} does not exist.") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigurationError(f"The data file {path} is not a readable CSV ({first}).") from None
    return tasks_from_frame(frame)


def submission_documents(metrics_dir: Path) -> dict[str, Any]:
    """One parsed metrics.json per submission: ``DIR/<submission>/metrics.json`` or ``DIR/<submission>.json``."""
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
        try:
            documents[name] = json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
        except (ValueError, UnicodeDecodeError) as error:
            raise ConfigurationError(f"The metrics file {path} is not valid JSON ({error}).") from None
    return documents


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
    rows = []
    for submission, document in submission_documents(metrics_dir).items():
        cases = document.get("case") if isinstance(document, Mapping) else None
        if not isinstance(cases, Mapping) or not cases:
            raise ConfigurationError(f"The metrics of submission {submission!r} have no 'case' section to collect.")
        for case, metrics in cases.items():
            for metric, value in _flatten(metrics, "").items():
                rows.append({"algorithm": submission, "case": str(case), "task": metric or "value", "value": value})
    return pd.DataFrame(rows, columns=["algorithm", "case", "task", "value"])
