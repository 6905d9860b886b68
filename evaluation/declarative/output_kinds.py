"""The ``[[outputs]]`` of a declaration: one class per output kind, each owning what is its own --
its keys (parsed from the TOML and, as JSON Schema, for editors), its missing policies and the value
an absent answer gets, how a prediction CSV and a reference CSV spell it, and how a participant's answer
is checked. A new kind is one more class here, registered in ``KINDS``; the engine asks the classes
(``OutputSpec.type``), never tests a kind's name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from evaluation.declarative.tables import KEY, SLUG, Table, type_of
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.options import CASE_SCORES, DYNAMIC, MIN_OVERLAP, OVERLAPS
from evaluation.platform.detections import parse_detections, parse_points, point_names
from evaluation.platform.images import GEOMETRY_POLICIES, GEOMETRY_TOLERANCE
from evaluation.platform.matching import IMAGE_NAME_SUFFIXES
from evaluation.platform.prediction_file import shown
from evaluation.platform.sockets import finite_number

RESERVED_KINDS = ("list",)  # in the format, not yet in the engine
LIST_HINT = ("; a list of class probabilities per case is kind = 'probabilities'; a list with one value per frame of a "
             "stacked input: [cases] stack_size")  # fmt: skip
CSV_COLUMN = "csv-column"  # the issue's name for a prediction CSV's column: a [submission] kind = "csv" phase
NO_CLASS_POLICIES = ("error", "skip")  # a one-hot row without a class at 1 (``reference_none``), or a class name
MISSING_POLICIES = ("error", "empty-mask", "worst-value", "misclassification", "exclude", "empty", "non-concordant",
                    "tie")  # fmt: skip
MISSING_MEANINGS = {  # what a case without an output gets under each policy a kind allows (its ``missing``)
    "error": "the run fails naming the case",
    "empty-mask": "an empty mask (heat map: an all-zero map, no candidate)",
    "worst-value": "number: the end of `range` farthest from the reference; probabilities: all mass on the first "
    "declared class that is not the case's",
    "misclassification": "a wrong answer",
    "uniform": "1/K for each of the K classes",
    "exclude": "the case leaves this output's metrics",
    "empty": "an image without detections (its reference objects are false negatives)",
    "non-concordant": "c_index only: each pair of the case counts 0",
    "tie": "c_index only: each pair of the case counts 1/2",
}
SURVIVAL_MISSING = ("non-concordant", "tie")  # c_index's policies for a missing risk (survival.MISSING_POLICIES)
NONZERO = "nonzero"  # a label value: any non-zero pixel of a 2D mask (PNG, RGB) is this label
SUM_RULES = ("one", "any")  # a probabilities answer: its values sum to 1 (within sum_tolerance), or any sum
MISCLASSIFIED = "<missing>"  # a class no reference holds: a missing answer is always wrong
EXTRA_CASES = ("error", "ignore")  # a CSV reference's row of a case that the cases' listing lacks
CsvCase = tuple[str, str]  # a prediction CSV's case column, and how messages name it

# the kinds' keys as JSON Schema, each with its meaning (the documentation's reference is generated from them)
_STRINGS = {"type": "array", "items": {"type": "string"}}
_SPELLINGS = {
    "true_values": {**_STRINGS, "description": "The reference's spellings of true (1), case-insensitive; a number "
                    "output with both spellings given reads a reference column of classes as 1 / 0; a one-hot "
                    "reference's cells. None shared with `false_values` or `blank_values`."},
    "false_values": {**_STRINGS, "description": "The reference's spellings of false (0), as `true_values`."},
}  # fmt: skip
_CLASSES = {**_STRINGS, "minItems": 2, "uniqueItems": True, "description": "The classes, in the order of a list "
            "answer, of weighted kappa and of the argmax tie rule; probabilities: letters, digits, `_`, `-` (they "
            "become metrics.json keys)."}  # fmt: skip
_ONE_HOT = {
    "reference_columns": {"type": "object", "additionalProperties": {"type": "string"}, "description": "A one-hot "
                          "reference (`reference = 'file.csv'`, a 0/1 column per class, each case's class the one at "
                          "1): class -> its column where the CSV names it otherwise (`{ MEL = 'melanoma' }`)."},
    "reference_none": {"type": "string", "description": "A one-hot row without a class at 1: `error`, `skip` (the "
                       "case leaves this output) or a declared class read from no column (ISIC 2019's `UNK`). "
                       "Several at 1 is always refused."},
    **_SPELLINGS,
}  # fmt: skip
_COLUMN = {"column": {"type": "string", "minLength": 1, "description": "A prediction-file phase: the participant's "
                      "CSV column holding this output (not the case column, no two outputs alike); default: the "
                      "slug."}}  # fmt: skip


@dataclass(frozen=True)
class Reference:
    """Where an output's reference lives: a path pattern with ``{case}`` (or ``{stem}``: the case
    without its image suffix; a trailing ``.*``: any of ``suffixes``; ``<folder>/{case}.*`` lists the
    cases: every file of the folder with one of ``suffixes``), a CSV column, or (a choice or
    probabilities output, ``reference = "truth.csv"``) a one-hot CSV: ``columns`` (class, column), each
    row's one class whose column is 1 (ISIC's ``image,MEL,NV,...``); a row with none is ``none``: an
    error, "skip" (the case leaves the output) or the class of that name, which has no column."""

    text: str
    pattern: str | None = None
    csv_file: str | None = None
    column: str | None = None
    suffixes: tuple[str, ...] = ()
    columns: tuple[tuple[str, str], ...] = ()
    none: str = "error"
    document: str | None = None  # a boxes / points output: one JSON file {case: objects} for every case
    frames_file: str | None = None  # "file.json:field": a field of the frame records of ``[cases] stacks``

    @property
    def one_hot(self) -> bool:
        return self.csv_file is not None and self.column is None

    @property
    def read_columns(self) -> tuple[str, ...]:
        """The CSV columns this reference reads (none for a path pattern)."""
        return (self.column,) if self.column else tuple(column for _, column in self.columns)

    @property
    def per_case(self) -> bool:
        """A pattern looked up case by case (it cannot list the cases)."""
        return self.pattern is not None and (
            "{stem}" in self.pattern or (self.pattern.endswith(".*") and not self.lists_suffixes)
        )

    @property
    def lists_suffixes(self) -> bool:
        """``<folder>/{case}.*``: the cases are the folder's files with one of ``suffixes``."""
        return self.pattern is not None and self.pattern.endswith("{case}.*")


@dataclass(frozen=True)
class OutputSpec:
    slug: str
    kind: str
    relative_path: str
    platform_kind: str
    reference: Reference
    missing: str
    labels: tuple[tuple[str, int | str | tuple[int, ...]], ...] = ()  # "nonzero": any non-zero pixel; a tuple: a region
    geometry: str = "error"
    tolerance: float = GEOMETRY_TOLERANCE
    grid: str = "reference grid"  # how messages name the grid a prediction must share ("CT grid")
    dimension: int = 3
    range: tuple[float, float] | None = None
    classes: tuple[str, ...] = ()
    true_values: tuple[str, ...] = ("1", "1.0", "true", "yes")  # boolean, one-hot: the reference's spellings
    false_values: tuple[str, ...] = ("0", "0.0", "false", "no")  # (case-insensitive)
    blank: str = "error"  # a blank CSV reference cell: "error", or "skip" (the case leaves this output)
    blank_values: tuple[str, ...] = ("",)  # the spellings of a blank cell (case-insensitive)
    together_with: tuple[str, ...] = ()  # outputs whose blank (skipped) reference leaves a case out of this one too
    extra_cases: str = "error"  # a CSV reference's row of a case the listing output lacks: "error" or "ignore"
    noun: str = ""  # how messages name the output ("malignancy likelihood"); "" = "output '<slug>'"
    list_noun: str = ""  # how messages name a stacked input's list of its values ("likelihoods"); "" = the output
    unit: str = ""  # how messages follow a value of the output ("days")
    event: Reference | None = None  # a number output scored by c_index: the event column (reference = time)
    sum_rule: str = "one"  # probabilities: "one" (the values sum to 1 within sum_tolerance) or "any"
    sum_tolerance: float = 1e-3
    column: str = ""  # a prediction-file phase: the column of the participant's CSV holding this output
    columns: tuple[tuple[str, str], ...] = ()  # ... or, for probabilities, (class, column) in the declared order
    options: tuple[tuple[str, Any], ...] = ()  # a kind's own declared keys that no other field holds
    file_socket: bool = False  # a value output's socket is a JSON file (super_kind "File", as RARE25's), not a value

    @property
    def csv_columns(self) -> tuple[str, ...]:
        """The participant's CSV columns this output reads (none outside a prediction-file phase)."""
        return tuple(column for _, column in self.columns) or ((self.column,) if self.column else ())

    @property
    def type(self) -> OutputKind:
        """The output's kind: what it parses, checks and reads."""
        return KINDS[self.kind]

    @property
    def super_kind(self) -> str:
        return "Image" if self.type.image else "File" if self.file_socket else "Value"

    @property
    def nonzero(self) -> bool:
        """A 2D mask where any non-zero pixel is its one label (``labels = { lesion = "nonzero" }``)."""
        return any(value == NONZERO for _, value in self.labels)

    @property
    def voxel_values(self) -> tuple[int, ...]:
        """The voxel values its label images may hold besides 0: every value of every label or region."""
        return tuple(sorted({v for _, value in self.labels for v in region_of(value)}))


@dataclass(frozen=True)
class Entry:
    """An ``[[outputs]]`` entry being parsed: its ``table``, its ``reference`` and ``missing`` policy
    as read, the ``OutputSpec`` fields gathered (``extra``, filled in by its kind), the prediction
    CSV's case column (``csv_case``; None: algorithm jobs) and the reference CSVs' (``id_column``)."""

    table: Table
    reference: Reference
    missing: str
    extra: dict[str, Any]
    csv_case: CsvCase | None
    id_column: str


class OutputKind:
    """An output kind. ``platform_kind``: the socket's kind on grand-challenge.org; ``missing``: the
    policies an absent answer may get; ``image``: a label image, scored in a worker; ``objects``: a
    JSON file of objects per image; ``value``: one value per case (a JSON value, or a CSV cell of a
    reference or a prediction file); ``csv``: how a prediction CSV holds it ("column", "columns": one
    per class, "": it cannot); ``one_hot``: its reference may be a one-hot CSV; ``numeric``: a number
    (a range, a 0 / 1 reference for binary metrics); ``per_class``: a metric may score it class by
    class; ``spelled``: settings echo its true / false spellings; ``scoring``: which of the engine's
    aggregations scores it; ``keys``: its own ``[[outputs]]`` keys as JSON Schema (``required``: those
    without a default); ``list_of``: what a JSON list of its answers holds, in messages ("numbers"). An
    image kind scored otherwise than a segmentation brings its own
    ``worker_task`` (declaration, output, case, reference, shown, prediction -> a task with ``slug``,
    ``noun`` and ``score(case)``, run in a worker), ``check_file`` (``check_job``'s check of a
    submitted file) and ``aggregation`` (metric, catalogue entry, output, cases, results, settings ->
    values and resamples, over the cases its worker scored)."""

    name: ClassVar[str]
    platform_kind: ClassVar[str]
    missing: ClassVar[tuple[str, ...]]
    image: ClassVar[bool] = False
    objects: ClassVar[bool] = False
    value: ClassVar[bool] = True
    csv: ClassVar[str] = "column"
    one_hot: ClassVar[bool] = False
    numeric: ClassVar[bool] = False
    per_class: ClassVar[bool] = False
    spelled: ClassVar[bool] = False
    scoring: ClassVar[str] = "values"
    list_of: ClassVar[str] = "values"
    keys: ClassVar[dict[str, Any]] = {}
    required: ClassVar[tuple[str, ...]] = ()
    worker_task: ClassVar[Callable[..., Any] | None] = None
    check_file: ClassVar[Callable[..., Any] | None] = None
    aggregation: ClassVar[Callable[..., Any] | None] = None

    def default_path(self, slug: str) -> str:
        """A job's file of this output (``relative_path``) unless declared."""
        return f"{slug}.json"

    def parse(self, entry: Entry) -> Reference:
        """Its own keys into ``entry.extra`` (the ``OutputSpec`` fields); the reference completed where
        they complete it (a one-hot reference's columns)."""
        return entry.reference

    def parse_after_reference(self, entry: Entry) -> None:
        """Its keys read after the one-hot reference's (their messages come in that order)."""

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> Any:
        """A submitted answer (as JSON) checked and parsed; ``what`` names it in messages."""
        raise NotImplementedError(self.name)

    def answers(self, output: OutputSpec, raw: list[Any], predicted_time: bool) -> Any:
        """A list of answers (a stacked input's, as JSON) checked and parsed whole, as ``answer`` would each;
        ``None`` when this kind has no such check or one fails (``answer`` then words the problem)."""
        return None

    def missing_value(self, output: OutputSpec, truth: Any, case: str) -> Any:
        """The value an absent answer gets under the output's missing policy (not error, not exclude)."""
        raise NotImplementedError(self.name)

    def cell(self, output: OutputSpec, text: str, what: str, case: str) -> Any:
        """A prediction CSV's (non-blank) cell as the JSON value a job would hold."""
        return cell_number(text, what, case)

    def reference_value(self, output: OutputSpec, text: str, binary: bool, case: str, where: str) -> Any:
        """A reference CSV's cell as this kind's value; problems are the organizer's (never echo the value)."""
        raise NotImplementedError(self.name)

    def settings(self, output: OutputSpec) -> dict[str, Any]:
        """Its own keys as metrics.json's settings echo them."""
        return {}

    def class_order(self, output: OutputSpec) -> tuple[str, ...]:
        """Its classes in their declared order (weighted kappa orders them so)."""
        return output.classes


GEOMETRY_KEYS: dict[str, Any] = {
    "geometry": {"enum": list(GEOMETRY_POLICIES), "description": "`error`: a prediction must have the reference's "
                 "size, and its spacing, origin and direction within `tolerance`; `nearest`: resampled onto the "
                 "reference grid (nearest neighbour)."},
    "tolerance": {"type": "number", "minimum": 0, "exclusiveMaximum": 1, "description": "The relative and absolute "
                  "tolerance of the grid's spacing, origin and direction."},
    "grid": {"type": "string", "description": "How messages name the grid a prediction must share, e.g. `'CT grid'`: "
             "'The segmentation of P1 has size (5, 1, 1) but the CT grid is (10, 1, 1)'."},
}  # fmt: skip


class Segmentation(OutputKind):
    """A label image per case (`images/<slug>`), its labels declared by name, scored in a worker process against
    the reference label image (integer voxels, the declared labels only, on the reference grid)."""

    name, platform_kind = "segmentation", "Segmentation"
    missing = ("error", "empty-mask", "exclude")
    image, value, csv, scoring = True, False, "", "segmentation"
    required = ("labels",)
    keys: ClassVar[dict[str, Any]] = {
        "labels": {"type": "object", "minProperties": 1, "description": "Label name -> its voxel value; a list of "
                   "values: a region scored as one mask, their union (`{ kidney = [1, 2, 3], tumor = 2 }`: KiTS23's "
                   "hierarchical classes); `'nonzero'`: a 2D mask (`dimension = 2`) whose every non-zero pixel of any "
                   "channel is the one label (`dice` and `iou` only).",
                   "additionalProperties": {"anyOf": [
                       {"type": "integer", "minimum": 1}, {"const": NONZERO},
                       {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1,
                        "uniqueItems": True}]}},
        **GEOMETRY_KEYS,
        "dimension": {"enum": [2, 3], "description": "The images' dimension (2: no surface metrics)."},
    }  # fmt: skip

    def default_path(self, slug: str) -> str:
        return f"images/{slug}"

    def parse(self, entry: Entry) -> Reference:
        table, reference, extra = entry.table, entry.reference, entry.extra
        labels = dict(table.get("labels", dict))
        for label, value in labels.items():
            if not KEY.fullmatch(label):
                table.fail(f"labels.{label}", "a label name may hold letters, digits, '_' and '-' only")
            if value == NONZERO and len(labels) > 1:
                table.fail(f"labels.{label}", f"a {NONZERO!r} label must be the output's only label")
            if isinstance(value, list):
                labels[label] = _region(table, label, value)
            elif value != NONZERO and not _voxel_value(value):
                table.fail(
                    f"labels.{label}",
                    f"must be a positive integer voxel value or {NONZERO!r}, not {value!r} (or a region: a list of "
                    "voxel values)",
                )
        if not labels:
            table.fail("labels", "needs at least one label")
        if len({frozenset(region_of(value)) for value in labels.values()}) != len(labels):
            table.fail("labels", "two labels share a voxel value (or, as regions, the same voxel values)")
        extra["labels"] = tuple(labels.items())
        _geometry(table, extra)
        extra["dimension"] = table.get("dimension", int, 3, (2, 3))
        if NONZERO in labels.values() and extra["dimension"] != 2:
            table.fail("dimension", f"a {NONZERO!r} mask is a 2D image: declare dimension = 2")
        if NONZERO in labels.values() and extra["geometry"] != "error":
            table.fail("geometry", f"a {NONZERO!r} mask has no physical grid to resample on: only 'error'")
        return reference

    def settings(self, output: OutputSpec) -> dict[str, Any]:
        return {"geometry": output.geometry, "tolerance": output.tolerance, "labels": dict(output.labels)}


def _geometry(table: Table, extra: dict[str, Any]) -> None:
    """An image output's grid policy (segmentation, heat map): ``geometry`` "error" (the reference's size,
    and its spacing, origin, direction within ``tolerance``) or "nearest" (resampled onto it); ``grid``
    names that grid in messages."""
    extra["geometry"] = table.get("geometry", str, "error", GEOMETRY_POLICIES)
    extra["tolerance"] = table.get("tolerance", float, GEOMETRY_TOLERANCE)
    extra["grid"] = table.get("grid", str, OutputSpec.grid)
    if not 0 <= extra["tolerance"] < 1:
        table.fail("tolerance", "must be in [0, 1) (relative and absolute)")


def _voxel_value(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _region(table: Table, label: str, values: list[Any]) -> tuple[int, ...]:
    """A label declared as a list of voxel values: a region scored as one mask (their union)."""
    if not values:
        table.fail(f"labels.{label}", "a region needs at least one voxel value")
    bad = next((v for v in values if not _voxel_value(v)), None)
    if bad is not None:
        table.fail(f"labels.{label}", f"a region's voxel values must be positive integers, not {bad!r}")
    seen: set[int] = set()
    twice = next((v for v in values if v in seen or seen.add(v)), None)  # the first value listed again
    if twice is not None:
        table.fail(f"labels.{label}", f"a region lists the voxel value {twice} twice")
    return tuple(values)


def region_of(value: int | str | tuple[int, ...]) -> tuple[int, ...]:
    """The voxel values a declared label stands for (a "nonzero" mask's label: 1)."""
    return value if isinstance(value, tuple) else (1 if value == NONZERO else int(value),)


class Number(OutputKind):
    """A number per case (a finite JSON number, or a CSV cell), against a CSV column of numbers (or of classes read
    as 1 / 0 through `true_values` / `false_values`), or a survival time with its `event` column."""

    name, platform_kind = "number", "Float"
    missing = ("error", "worst-value", "exclude", *SURVIVAL_MISSING)  # the last two: c_index's
    numeric = True
    list_of = "numbers"
    keys: ClassVar[dict[str, Any]] = {
        "range": {
            "type": "array",
            "items": {"type": "number"},
            "minItems": 2,
            "maxItems": 2,
            "description": "`[low, high]`: an answer outside is refused (`[0, 1]` is required by `brier`, `ece`).",
        },
        "event": {
            "type": "string",
            "pattern": r"^.+\.csv:.+$",
            "description": "`'file.csv:column'`: the event "
            "indicator (1 = event, spelled as a boolean reference) of a survival output scored by `c_index`; "
            "`reference` is then the time column.",
        },
        **_COLUMN,
        **_SPELLINGS,
    }

    def parse(self, entry: Entry) -> Reference:
        table, reference, extra = entry.table, entry.reference, entry.extra
        _class_reference(entry)
        if reference.csv_file is not None and "event" in table.data:
            event = table.get("event", str)
            csv_file, _, column = event.partition(":")
            if not csv_file.endswith(".csv") or not column:
                table.fail("event", f"{event!r} is not 'file.csv:column' (the event indicator of each case, 1 = event)")
            extra["event"] = Reference(event, csv_file=csv_file, column=column)
        bounds = table.get("range", list, None)
        if bounds is not None:
            if len(bounds) != 2 or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds):
                table.fail("range", "must be [low, high], two numbers")
            if not bounds[0] < bounds[1]:
                table.fail("range", "low must be smaller than high")
            extra["range"] = (float(bounds[0]), float(bounds[1]))
        if entry.missing == "worst-value" and bounds is None:
            table.fail("missing", "'worst-value' needs a range = [low, high] (the worst value is its end farthest "
                       "from the reference)")  # fmt: skip
        return reference

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> float:
        number = finite_number(raw, what, case)
        if number < 0 and predicted_time:
            unit = f" {output.unit}" if output.unit else ""
            raise SubmissionError(f"{what} is {number:g}{unit}; a predicted time cannot be negative.", case)
        if output.range is not None and not output.range[0] <= number <= output.range[1]:
            low, high = output.range
            raise SubmissionError(f"{what} is {number:g}, outside [{low:g}, {high:g}].", case)
        return number

    def answers(self, output: OutputSpec, raw: list[Any], predicted_time: bool) -> np.ndarray | None:
        """Every answer a JSON number (no boolean) that is finite, inside ``range`` and (a predicted time) not
        negative: an array of floats, as ``answer`` gives each."""
        if not set(map(type, raw)) <= {int, float}:
            return None
        try:
            numbers = np.array(raw, dtype=np.float64)
        except OverflowError:  # an integer beyond a float's range
            return None
        low, high = output.range or (-np.inf, np.inf)
        if predicted_time:
            low = max(low, 0.0)
        if not (np.isfinite(numbers).all() and (numbers >= low).all() and (numbers <= high).all()):
            return None
        return numbers

    def missing_value(self, output: OutputSpec, truth: Any, case: str) -> float:
        if output.missing in SURVIVAL_MISSING:  # c_index's missing risk: a pair non-concordant or tied
            return math.nan
        low, high = output.range  # worst-value: the end of the range farthest from the reference
        return low if abs(low - truth) >= abs(high - truth) else high

    def reference_value(self, output: OutputSpec, text: str, binary: bool, case: str, where: str) -> float:
        if dict(output.options).get(CLASS_REFERENCE):
            return _class_target(output, text, case, where)
        if not text.isascii():  # float() reads Arabic-Indic and full-width digits as numbers: say so instead
            raise ConfigurationError(f"{where}: the value of case {case} holds non-ASCII characters (e.g. "
                                     "Arabic-Indic or full-width digits); write it in ASCII digits.")  # fmt: skip
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or (binary and number not in (0.0, 1.0)):
            wanted = "0 or 1 (the metrics of this output need a binary reference)" if binary else "a finite number"
            raise ConfigurationError(f"{where}: the value of case {case} is not {wanted}.")
        return number

    def settings(self, output: OutputSpec) -> dict[str, Any]:
        spelled = dict(output.options).get(CLASS_REFERENCE)
        return {**({"range": list(output.range)} if output.range else {}),
                **({"true_values": list(output.true_values), "false_values": list(output.false_values)}
                   if spelled else {})}  # fmt: skip


CLASS_REFERENCE = "class_reference"  # a number output's option: its reference is a class column, read as 0 / 1


def _class_reference(entry: Entry) -> None:
    """A number output whose reference is a class column (AIROGS's ``class``: NRG / RG / U): the
    classes in ``true_values`` are read as 1, those in ``false_values`` as 0 (letter case ignored),
    and a class in ``blank_values`` with ``blank = "skip"`` leaves the case out of this output; any
    other cell is the organizer's error. The organizer's CSV is read as it is."""
    table, keys = entry.table, ("true_values", "false_values")
    declared = [key for key in keys if key in table.data]
    if not declared:
        return
    if len(declared) == 1:
        absent = next(key for key in keys if key not in declared)
        table.fail(absent, "is required beside the other: the classes read as 1 (true_values) and as 0 (false_values)")
    if "event" in table.data:
        table.fail("true_values", "an output with an event column reads its reference as times, not as classes")
    _spellings(table, entry.extra)
    entry.extra["options"] = ((CLASS_REFERENCE, True),)


def _class_target(output: OutputSpec, text: str, case: str, where: str) -> float:
    """A class cell of a number output's class reference as its 0 / 1 target (never echoing the cell)."""
    lowered = text.lower()
    if lowered not in output.true_values + output.false_values:
        raise ConfigurationError(
            f"{where}: the class of case {case} is none of true_values ({', '.join(output.true_values)}) and "
            f"false_values ({', '.join(output.false_values)}); a class to leave out belongs in blank_values, "
            "with blank = 'skip'."
        )
    return float(lowered in output.true_values)


class Boolean(OutputKind):
    """True or false per case (a JSON boolean, or a CSV cell spelled as the reference's), against a CSV column of
    `true_values` / `false_values` spellings."""

    name, platform_kind = "boolean", "Bool"
    missing = ("error", "misclassification", "exclude")
    spelled = True
    list_of = "booleans"
    keys: ClassVar[dict[str, Any]] = {**_SPELLINGS, **_COLUMN}

    def parse(self, entry: Entry) -> Reference:
        _spellings(entry.table, entry.extra)
        return entry.reference

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> bool:
        if not isinstance(raw, bool):
            raise SubmissionError(f"{what} is not a JSON boolean (true or false).", case)
        return raw

    def missing_value(self, output: OutputSpec, truth: Any, case: str) -> str:
        return MISCLASSIFIED

    def cell(self, output: OutputSpec, text: str, what: str, case: str) -> bool:
        if text.lower() not in output.true_values + output.false_values:
            spellings = f"{', '.join(output.true_values)} / {', '.join(output.false_values)}"
            raise SubmissionError(f"{what} is {shown(text)}, not a boolean ({spellings}).", case)
        return text.lower() in output.true_values

    def reference_value(self, output: OutputSpec, text: str, binary: bool, case: str, where: str) -> bool:
        if text.lower() not in output.true_values + output.false_values:
            spellings = "/".join(output.true_values + output.false_values)
            raise ConfigurationError(f"{where}: the value of case {case} is not a boolean ({spellings}).")
        return text.lower() in output.true_values

    def class_order(self, output: OutputSpec) -> tuple[str, ...]:
        return ("False", "True")


UNKNOWN_ANSWERS = ("error", "misclassification")  # a choice's answer that is no class (``unknown``)
_SPELLED_CLASSES = {
    "ignore_case": {"type": "boolean", "description": "Spaces around an answer and its letter case are ignored (the "
                    "reference is read with the same spellings)."},
    "subcategories": {**_STRINGS, "description": "Suffixes that fold into their class (`['A', 'B', 'C']`: `N2b` is "
                      "`N2`)."},
    "wrong_answers": {**_STRINGS, "description": "Answers recognised but never right: a misclassification "
                      "(`['TX', 'T0', 'TIS']`)."},
    "unknown": {"enum": list(UNKNOWN_ANSWERS), "description": "Any other answer: refused (`error`) or a "
                "misclassification."},
    "expected": {"type": "string", "minLength": 1, "description": "The refusal's wording of the answers expected, "
                 "e.g. `'a string T1..T4'`: 'The T stage of P2 is 'T5'; expected a string T1..T4.'"},
}  # fmt: skip


class Choice(OutputKind):
    """One of the declared `classes` per case (a JSON string), against a class-name column (`'file.csv:column'`) or a
    one-hot `'file.csv'`; how an answer may spell a class (`ignore_case`, `subcategories`, `wrong_answers`,
    `unknown`, `expected`) after HECKTOR 2026's stages (BioMedIA-MBZUAI/HECKTOR2026 README)."""

    name, platform_kind = "choice", "String"
    missing = ("error", "misclassification", "exclude")
    one_hot = True
    required = ("classes",)
    keys: ClassVar[dict[str, Any]] = {"classes": _CLASSES, **_ONE_HOT, **_COLUMN, **_SPELLED_CLASSES}

    def parse(self, entry: Entry) -> Reference:
        table, reference, extra = entry.table, entry.reference, entry.extra
        classes = table.strings("classes")
        if len(classes) < 2 or len(set(classes)) != len(classes):
            table.fail("classes", "needs at least two distinct classes")
        self.checked_classes(table, classes)
        extra["classes"] = classes
        spelled = self._spelled(table)
        if spelled:
            extra["options"] = spelled
        return _one_hot(table, reference, classes, entry.id_column, extra) if reference.one_hot else reference

    def _spelled(self, table: Table) -> tuple[tuple[str, Any], ...]:
        """The declared keys of ``_SPELLED_CLASSES`` (a probabilities output has none)."""
        if self.per_class:
            return ()
        found: list[tuple[str, Any]] = []
        if "ignore_case" in table.data:
            found.append(("ignore_case", table.get("ignore_case", bool)))
        for key in ("subcategories", "wrong_answers"):
            if key in table.data:
                found.append((key, table.strings(key)))
        if "unknown" in table.data:
            found.append(("unknown", table.get("unknown", str, "error", UNKNOWN_ANSWERS)))
        if "expected" in table.data:
            found.append(("expected", table.get("expected", str)))
        return tuple(found)

    def checked_classes(self, table: Table, classes: tuple[str, ...]) -> None:
        """Further checks of the declared classes (a probabilities output's become metrics.json keys)."""

    def spelled_class(self, output: OutputSpec, raw: Any) -> str | None:
        """The class ``raw`` names under the output's spelling keys, ``MISCLASSIFIED`` for a wrong answer,
        None for no class."""
        spelled = dict(output.options)
        if not isinstance(raw, str):
            return None
        text = raw.strip().upper() if spelled.get("ignore_case") else raw
        classes = {(c.upper() if spelled.get("ignore_case") else c): c for c in output.classes}
        if text in classes:
            return classes[text]
        for suffix in spelled.get("subcategories", ()):
            folded = suffix.upper() if spelled.get("ignore_case") else suffix
            if text.endswith(folded) and text[: -len(folded)] in classes:
                return classes[text[: -len(folded)]]
        wrong = [w.upper() if spelled.get("ignore_case") else w for w in spelled.get("wrong_answers", ())]
        return MISCLASSIFIED if text in wrong else None

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> str:
        found = self.spelled_class(output, raw)
        if found is not None:
            return found
        spelled = dict(output.options)
        if spelled.get("unknown") == "misclassification":
            return MISCLASSIFIED
        if "expected" in spelled:
            raise SubmissionError(f"{what} is {repr(raw)[:40]}; expected {spelled['expected']}.", case)
        raise SubmissionError(f"{what} is not one of the strings {', '.join(output.classes)}.", case)

    def missing_value(self, output: OutputSpec, truth: Any, case: str) -> str:
        return MISCLASSIFIED

    def cell(self, output: OutputSpec, text: str, what: str, case: str) -> str:
        return text  # checked against the classes by answer

    def reference_value(self, output: OutputSpec, text: str, binary: bool, case: str, where: str) -> str:
        found = self.spelled_class(output, text) if output.options else (text if text in output.classes else None)
        if found is None or found == MISCLASSIFIED:
            raise ConfigurationError(f"{where}: the value of case {case} is not one of the declared classes.")
        return found


class Probabilities(Choice):
    """A probability per declared class per case: a JSON object `{class: p}` with exactly the declared classes, or a
    JSON list in their order, each a finite number in [0, 1], their sum as `sum` says (each problem refused naming
    the case); metrics.json shows an answer as an object. Its reference as a choice output's."""

    name, platform_kind = "probabilities", "Anything"
    missing = ("error", "worst-value", "uniform", "exclude")
    csv, per_class, scoring = "columns", True, "probabilities"
    keys: ClassVar[dict[str, Any]] = {
        "classes": _CLASSES, **_ONE_HOT,
        "sum": {"enum": list(SUM_RULES), "default": SUM_RULES[0], "description": "`one`: the values must sum to 1 "
                "within `sum_tolerance` (used as given, not renormalised); `any`: independent scores (multi-label)."},
        "sum_tolerance": {"type": "number", "minimum": 0, "exclusiveMaximum": 1, "description": "The absolute "
                          "tolerance of `sum = 'one'`."},
        "columns": {"type": "object", "additionalProperties": {"type": "string"}, "description": "A prediction-file "
                    "phase: class -> the CSV column of its probability (classes not listed keep their name); all "
                    "class cells of a row blank: the output is missing."},
    }  # fmt: skip

    def checked_classes(self, table: Table, classes: tuple[str, ...]) -> None:
        if not all(KEY.fullmatch(c) for c in classes):
            bad = next(c for c in classes if not KEY.fullmatch(c))
            table.fail("classes", f"{bad!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")

    def parse_after_reference(self, entry: Entry) -> None:
        """``sum``, ``sum_tolerance`` and (a prediction CSV) ``columns``."""
        table, extra = entry.table, entry.extra
        extra["sum_rule"] = table.get("sum", str, "one", SUM_RULES)
        extra["sum_tolerance"] = table.get("sum_tolerance", float, 1e-3)
        if not 0 <= extra["sum_tolerance"] < 1:
            table.fail("sum_tolerance", "must be in [0, 1)")
        if extra["sum_rule"] == "any" and "sum_tolerance" in table.data:
            table.fail("sum_tolerance", "applies to sum = 'one' only")
        if entry.csv_case:
            extra["columns"] = _class_columns(table, "columns", extra["classes"], *entry.csv_case)

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> dict[str, float]:
        return probabilities(output, raw, case, what)

    def missing_value(self, output: OutputSpec, truth: Any, case: str) -> dict[str, float]:
        """Uniform, or all mass on the first declared class that is not the truth."""
        if output.missing == "uniform":
            return dict.fromkeys(output.classes, 1.0 / len(output.classes))
        wrong = next(c for c in output.classes if c != truth)
        return {c: float(c == wrong) for c in output.classes}

    def settings(self, output: OutputSpec) -> dict[str, Any]:
        return {"classes": list(output.classes), "sum": output.sum_rule,
                **({"sum_tolerance": output.sum_tolerance} if output.sum_rule == "one" else {})}  # fmt: skip


class Boxes(OutputKind):
    """Boxes per image: the platform's "Multiple 2D bounding boxes" JSON with a `probability` per box, or
    `[[x1, y1, x2, y2, score], ...]` (scores in [0, 1], no negative or degenerate box); the reference one `.json`
    per image (`{case}` pattern; either form without scores, `[]` for none) or one `.json` `{image: boxes}` that
    lists the cases, or PASCAL VOC XML files (`reference_voc`)."""

    name, platform_kind = "boxes", "Multiple 2D bounding boxes"
    missing = ("error", "empty", "exclude")  # empty: an image without detections
    objects, value, csv, scoring = True, False, "", "detection"
    parser: ClassVar[Callable[..., Any]] = staticmethod(parse_detections)
    # a detection metric's declared ``match`` -> the catalogue's criterion (the first: the default)
    criteria: ClassVar[dict[str, str]] = {"iou": "iou", "distance": "centre_distance"}
    keys: ClassVar[dict[str, Any]] = {
        "reference_voc": {"type": "boolean", "description": "With a one-document reference (`reference = "
                          "'boxes.json'`) and without that file: every PASCAL VOC XML file under the ground truth, "
                          "one per image (named by its `<filename>`, else its stem), each `<bndbox>` a box."},
        "reference_fault": {"type": "string", "description": "The one-line error when the reference files cannot be "
                            "read, `{problem}` naming the error's kind."},
    }  # fmt: skip

    def parse(self, entry: Entry) -> Reference:
        voc = entry.table.get("reference_voc", bool, False)
        fault = entry.table.get("reference_fault", str, "")
        for key, given in (("reference_voc", voc), ("reference_fault", fault)):
            if given and entry.reference.document is None:
                entry.table.fail(key, "needs the reference in one document (reference = 'boxes.json')")
        if fault and not fault.strip():
            entry.table.fail("reference_fault", "must be a sentence (the one-line error)")
        entry.extra["options"] = (("reference_voc", True),) * voc + (("reference_fault", fault),) * bool(fault)
        return entry.reference

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> Any:
        return self.parser(raw, case)

    def missing_value(self, output: OutputSpec, truth: Any, case: str) -> Any:
        return self.parser([], case)  # an image without detections: its reference objects are false negatives


class Points(Boxes):
    """Points per image: the platform's "Multiple points" JSON (`{"points": [{"point": [x, y, z], "probability":
    p}, ...]}`) or `[[x, y(, z), score], ...]`, a 2D point in the plane z = 0, each keeping its `name` (a decision
    metric's `classes` filter them); the reference as a boxes output's (`[[x, y(, z)], ...]`) or a CSV with a row per
    point (LUNA16's annotations.csv); points match by distance only."""

    name, platform_kind = "points", "Multiple points"
    parser: ClassVar[Callable[..., Any]] = staticmethod(parse_points)
    criteria: ClassVar[dict[str, str]] = {"distance": "distance"}  # points match by distance only
    keys: ClassVar[dict[str, Any]] = {
        "missing_score": {"anyOf": [{"const": "error"}, {"type": "number", "minimum": 0, "maximum": 1}],
                          "default": "error", "description": "A submitted point without a `probability`: refused, or "
                          "the score it gets."},
        "reference_diameter": {"type": "string", "minLength": 1, "description": "`cpm`: the key (or CSV column) of "
                               "each reference point's diameter (`'diameter_mm'`; negative or absent: unknown)."},
        "reference_ignore": {"type": "string", "minLength": 1, "description": "`cpm`: the `name` of the reference "
                             "points that are ignored findings (`'excluded'`)."},
        "reference_excluded": {"type": "string", "pattern": r"^.+\.csv$", "description": "A reference CSV's "
                               "companion: a CSV of the same columns whose points are ignored findings."},
        "reference_cases": {"type": "string", "pattern": r"^.+\.csv$", "description": "A CSV whose first cell of each "
                            "row is a case (LUNA16's seriesuids.csv: the cases without a point too)."},
        "reference_coordinates": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 2,
                                  "maxItems": 3, "description": "A reference CSV with a row per point (LUNA16's "
                                  "annotations.csv): its 2 or 3 coordinate columns."},
    }  # fmt: skip

    def parse(self, entry: Entry) -> Reference:
        score = entry.table.get("missing_score", (float, str), "error")
        if score != "error" and (isinstance(score, str) or not 0 <= score <= 1):
            entry.table.fail("missing_score", f"must be 'error' or a score in [0, 1], not {score!r}")
        options: tuple[tuple[str, Any], ...] = (("missing_score", score),) if score != "error" else ()
        for key in ("reference_diameter", "reference_ignore"):  # a hit radius metric's reference findings
            if key in entry.table.data and entry.reference.document is not None:
                entry.table.fail(key, "needs the reference points in a file per image or a CSV, not one document")
            if key in entry.table.data:
                text = entry.table.get(key, str)
                if not text:
                    entry.table.fail(key, "must name a key of the reference points" if key == "reference_diameter"
                                     else "must be a point name")  # fmt: skip
                options += ((key, text),)
        options += self._point_table(entry)
        if options:
            entry.extra["options"] = options
        return entry.reference

    @staticmethod
    def _point_table(entry: Entry) -> tuple[tuple[str, Any], ...]:
        """The keys of a reference CSV with a row per point (``reference = "<file>.csv"``)."""
        table, rows = entry.table, POINT_TABLE_KEYS
        if not entry.reference.text.endswith(".csv"):
            wrong = next((key for key in (*rows, "reference_coordinates") if key in table.data), None)
            if wrong:
                table.fail(wrong, "only a reference CSV with a row per point (reference = '<file>.csv') has it")
            return ()
        if "reference_ignore" in table.data:
            table.fail("reference_ignore", "names ignored points in JSON; a reference CSV's are reference_excluded")
        coordinates = table.strings("reference_coordinates")
        if len(coordinates) not in (2, 3) or not all(coordinates) or entry.id_column in coordinates:
            table.fail("reference_coordinates", "must name the 2 or 3 coordinate columns (x, y(, z))")
        options: tuple[tuple[str, Any], ...] = (("reference_coordinates", list(coordinates)),)
        for key in rows:
            if key in table.data:
                text = table.get(key, str)
                if not text.endswith(".csv"):
                    table.fail(key, f"{text!r} is not a .csv file")
                _inside(table, key, text, text)
                options += ((key, text),)
        return options

    def answer(self, output: OutputSpec, raw: Any, case: str, what: str, predicted_time: bool) -> Any:
        score = dict(output.options).get("missing_score")
        if score is not None and isinstance(raw, dict) and isinstance(raw.get("points"), list):
            raw = {**raw, "points": [{"probability": score, **p} if isinstance(p, dict) else p for p in raw["points"]]}
        points, scores = self.parser(raw, case)
        return points, scores, point_names(raw, case)

    def settings(self, output: OutputSpec) -> dict[str, Any]:
        return dict(output.options)


class HeatMap(OutputKind):
    """A float detection map / heat map per case (PI-CAI; `images/<slug>`, finite non-negative values that fit
    float32): its lesion candidates (the non-zero 26-connected components, or those extracted from a heat map at
    `candidates`) matched in a worker (``heat_maps``) to the reference lesions (`'labels/{case}.mha'`: the non-zero
    26-connected components of an integer image), the case score its maximum."""

    name, platform_kind = "heat_map", "Heat Map"
    missing = ("error", "empty-mask", "exclude")  # empty-mask: an all-zero map (no candidate, case score 0)
    image, value, csv, scoring = True, False, "", "heat_map"

    # ``heat_maps`` (with the lesion matching) imported where a heat map is scored, not at the engine's start
    @staticmethod
    def worker_task(*arguments: Any) -> Any:
        from evaluation.declarative import heat_maps

        return heat_maps.heat_map_task(*arguments)

    @staticmethod
    def check_file(*arguments: Any) -> None:
        from evaluation.declarative import heat_maps

        heat_maps.check_heat_map(*arguments)

    @staticmethod
    def aggregation(*arguments: Any) -> Any:
        from evaluation.declarative import heat_maps

        return heat_maps.heat_map_metric(*arguments)

    keys: ClassVar[dict[str, Any]] = {
        "dimension": {"enum": [2, 3], "description": "The maps' dimension."},
        **GEOMETRY_KEYS,
        "min_overlap": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": MIN_OVERLAP,
                        "description": "The least IoU or Dice of a candidate matching a reference lesion."},
        "overlap": {"enum": list(OVERLAPS), "default": OVERLAPS[0], "description": "How a match's overlap is "
                    "measured (picai_eval)."},
        "candidates": {"anyOf": [{"enum": ["given", *DYNAMIC]},
                                 {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}], "default": "given",
                       "description": "`given`: the map is a detection map, its non-zero components the candidates "
                       "(each scored by its maximum); else `report_guided_annotation`'s extraction (a threshold or "
                       "a dynamic mode) from a heat map."},
        "case_score": {"enum": list(CASE_SCORES), "default": CASE_SCORES[0], "description": "A case's score from "
                       "its candidates (picai_eval)."},
        "unmatched_overlapping": {"type": "boolean", "default": False, "description": "picai_eval's "
                                  "`allow_unmatched_candidates_with_minimal_overlap`."},
    }  # fmt: skip

    def default_path(self, slug: str) -> str:
        return f"images/{slug}"

    def parse(self, entry: Entry) -> Reference:
        table = entry.table
        entry.extra["dimension"] = table.get("dimension", int, 3, (2, 3))
        _geometry(table, entry.extra)
        min_overlap = table.get("min_overlap", float, MIN_OVERLAP)
        if not 0 < min_overlap <= 1:
            table.fail("min_overlap", "must be in (0, 1] (the least IoU or Dice of a match)")
        candidates = table.get("candidates", (str, float), "given")
        if isinstance(candidates, str) and candidates not in ("given", *DYNAMIC):
            table.fail("candidates", f"{candidates!r} is not one of given, {', '.join(DYNAMIC)} or a threshold")
        if not isinstance(candidates, str) and not 0 < candidates < 1:
            table.fail("candidates", "a threshold must be in (0, 1)")
        entry.extra["options"] = (
            ("min_overlap", min_overlap),
            ("overlap", table.get("overlap", str, "iou", OVERLAPS)),
            ("candidates", candidates),
            ("case_score", table.get("case_score", str, "max", CASE_SCORES)),
            ("unmatched_overlapping", table.get("unmatched_overlapping", bool, False)),
        )
        return entry.reference

    def settings(self, output: OutputSpec) -> dict[str, Any]:
        declared = (output.geometry, output.tolerance) != ("error", GEOMETRY_TOLERANCE)  # the default: unechoed
        geometry = {"geometry": output.geometry, "tolerance": output.tolerance} if declared else {}
        return {"dimension": output.dimension, **geometry, **dict(output.options)}


KINDS: dict[str, OutputKind] = {kind.name: kind() for kind in (Segmentation, Number, Boolean, Choice, Probabilities,
                                                                Boxes, Points, HeatMap)}  # fmt: skip
OUTPUT_KINDS = tuple(KINDS)


def parse_output(table: Table, csv_case: CsvCase | None, id_column: str) -> OutputSpec:
    """One ``[[outputs]]`` entry: a socket of an algorithm job, or (``csv_case``: the prediction CSV's
    case column and its name in messages) a column of the participant's prediction CSV, which only a
    kind with ``csv`` can be. ``id_column``: the case column of the CSV references."""
    slug = table.get("slug", str)
    if not SLUG.fullmatch(slug):
        table.fail("slug", f"{slug!r} is not a socket slug (lower-case letters, digits, '-')")
    name = table.get("kind", str)
    csv_kinds = ", ".join(k.name for k in KINDS.values() if k.csv == "column")
    csv_classes = ", ".join(k.name for k in KINDS.values() if k.csv == "columns")
    if name == CSV_COLUMN:
        table.fail("kind", f"{name!r}: declare [submission] kind = 'csv' and give a {csv_kinds} output "
                   f"its column = '<CSV column>' (a {csv_classes} output: a column per class)")  # fmt: skip
    if name in RESERVED_KINDS:
        hint = LIST_HINT if name == "list" else ""
        table.fail("kind", f"{name!r} is not supported by this version (supported: {', '.join(OUTPUT_KINDS)}){hint}")
    if name not in KINDS:
        table.fail("kind", f"{name!r} is not one of {', '.join(OUTPUT_KINDS + RESERVED_KINDS)}")
    kind = KINDS[name]
    if csv_case and not kind.csv:
        table.fail("kind", f"a {name} output cannot be a column of a prediction CSV ([submission] kind = 'csv'): "
                   f"only {csv_kinds} (and {csv_classes}, a column per class)")  # fmt: skip
    column, relative_path, platform_kind = "", "", ""
    if csv_case and kind.csv == "column":  # a column of the CSV, not a socket: no relative path, no platform kind
        column = _column_name(table, "column", table.get("column", str, slug), *csv_case)
    elif not csv_case:
        relative_path = table.get("relative_path", str, kind.default_path(slug))
        platform_kind = table.get("platform_kind", str, kind.platform_kind)
    if csv_case and kind.csv == "columns" and "column" in table.data:  # a column per class, read with the classes
        table.fail("column", f"a {name} output reads one column per class: declare columns = {{ <class> = "
                   "'<CSV column>', ... } (default: each class's own name)")  # fmt: skip
    reference = _reference(table, kind)
    missing = table.get("missing", str, "error")
    if missing not in MISSING_POLICIES and set(kind.missing) <= set(MISSING_POLICIES):  # (a kind's own: named below)
        table.fail("missing", f"{missing!r} is not one of {', '.join(MISSING_POLICIES)}")
    if missing not in kind.missing:
        table.fail("missing", f"{missing!r} is not one of {', '.join(kind.missing)} (for a {name} output)")
    extra: dict[str, Any] = {
        "noun": table.get("noun", str, ""),
        "unit": table.get("unit", str, ""),
        "column": column,
        "list_noun": table.get("list_noun", str, ""),
    }
    if "super_kind" in table.data and not kind.value:
        table.fail("super_kind", f"applies to a value output (a {name} output's socket is its own)")
    extra["file_socket"] = table.get("super_kind", str, "Value", ("Value", "File")) == "File"
    if reference.csv_file is not None:
        extra["blank"] = table.get("blank", str, "error", ("error", "skip"))
        if "blank_values" in table.data:
            extra["blank_values"] = tuple(text.lower() for text in table.strings("blank_values"))
        if "together_with" in table.data:
            extra["together_with"] = table.strings("together_with")
        extra["extra_cases"] = table.get("extra_cases", str, "error", EXTRA_CASES)
    entry = Entry(table, reference, missing, extra, csv_case, id_column)
    reference = kind.parse(entry)
    for key in ("reference_columns", "reference_none"):
        if key in table.data and not reference.one_hot:
            table.fail(key, "applies to a one-hot reference only (a choice or probabilities output with reference = "
                       "'file.csv')")  # fmt: skip
    kind.parse_after_reference(entry)
    table.done()
    return OutputSpec(slug, name, relative_path, platform_kind, reference, missing, **extra)


def _inside(table: Table, key: str, text: str, path: str) -> None:
    """A ground-truth ``path`` declared at ``key`` must stay inside the ground truth."""
    if Path(path).is_absolute() or ".." in Path(path).parts:
        table.fail(key, f"{text!r} must be a relative path inside the ground truth")


POINT_TABLE_KEYS = ("reference_excluded", "reference_cases")  # the other CSVs of a points reference CSV


def _reference(table: Table, kind: OutputKind) -> Reference:
    """The ``reference`` key (and ``reference_suffixes``) as the output's kind allows it."""
    text = table.get("reference", str)
    if kind.name == "points" and text.endswith(".csv") and "{" not in text and ":" not in text:  # a row per point
        _inside(table, "reference", text, text)
        return Reference(text)
    if ":" in text and text.partition(":")[0].endswith(".json") and kind.value:  # stacks of frame records
        frames_file, _, field = text.partition(":")
        if not field:
            table.fail("reference", f"{text!r} is not 'file.json:field' (a field of each frame record)")
        _inside(table, "reference", text, frames_file)
        return Reference(text, column=field, frames_file=frames_file)
    if ":" in text:
        csv_file, _, column = text.partition(":")
        if not csv_file.endswith(".csv") or not column:
            table.fail("reference", f"{text!r} is neither a path pattern with {{case}} nor 'file.csv:column'")
        if not kind.value:
            table.fail(
                "reference", f"a {kind.name} output needs a path pattern such as 'labels/{{case}}.mha' or '.json'"
            )
        _inside(table, "reference", text, csv_file)
        return Reference(text, csv_file=csv_file, column=column)
    if kind.one_hot and text.endswith(".csv") and "{" not in text:  # one-hot: columns come with the classes
        _inside(table, "reference", text, text)
        return Reference(text, csv_file=text)
    if kind.objects and text.endswith(".json") and not any(c in text for c in "{}*"):
        _inside(table, "reference", text, text)  # one JSON document {case: objects} lists the cases
        return Reference(text, document=text)
    if kind.objects and (text.count("{case}") != 1 or "{stem}" in text or not text.endswith(".json")):
        table.fail(
            "reference",
            f"{text!r} is not a path pattern with exactly one {{case}} ending in .json, nor "
            "one .json file of every case's objects",
        )
    if (text.count("{case}") + text.count("{stem}") != 1 or not kind.image) and not kind.objects:
        what = "a path pattern with exactly one {case} or {stem}" if kind.image else "'file.csv:column'"
        if kind.one_hot:
            what += " or a one-hot 'file.csv' (a 0/1 column per class)"
        table.fail("reference", f"{text!r} is not {what}")
    _inside(table, "reference", text, text)
    if text.endswith(".*") and "{case}" in text and not text.endswith("{case}.*"):
        table.fail("reference", f"{text!r}: a '.*' pattern with {{case}} must end in '{{case}}.*' (it lists the cases)")
    if "*" in text.removesuffix(".*"):
        table.fail("reference", f"{text!r} may hold '*' only as a trailing '.*' (any of reference_suffixes)")
    suffixes: tuple[str, ...] = ()
    if text.endswith(".*"):
        suffixes = tuple(s.lower() for s in table.strings("reference_suffixes", list(IMAGE_NAME_SUFFIXES)))
        if not suffixes or not all(s.startswith(".") and len(s) > 1 for s in suffixes):
            table.fail("reference_suffixes", "must be a list of file suffixes such as '.png'")
    return Reference(text, pattern=text, suffixes=suffixes)


def _one_hot(
    table: Table, reference: Reference, classes: tuple[str, ...], id_column: str, extra: dict[str, Any]
) -> Reference:
    """A one-hot reference's keys: ``reference_none`` (what a row without a class at 1 is: "error",
    "skip" or a class, which then has no column), ``reference_columns`` (the other classes' columns)
    and the cells' ``true_values`` / ``false_values`` (into ``extra``)."""
    _spellings(table, extra)
    none = table.get("reference_none", str, "error")
    if none not in (*NO_CLASS_POLICIES, *classes):
        table.fail("reference_none", f"{none!r} is not one of {', '.join(NO_CLASS_POLICIES)} or a class of this output "
                   f"({', '.join(classes)})")  # fmt: skip
    if none in NO_CLASS_POLICIES and none in classes:
        table.fail("reference_none", f"{none!r} is both a policy and a class of this output: rename the class")
    named = table.data.get("reference_columns")
    if isinstance(named, dict) and none in named:
        table.fail(f"reference_columns.{none}", "is the reference_none class, read from no column")
    case_column = (id_column, "the case column of the reference CSVs ([cases] id_column)")
    read = tuple(name for name in classes if name != none)
    return dataclasses.replace(
        reference, columns=_class_columns(table, "reference_columns", read, *case_column), none=none
    )


def _spellings(table: Table, extra: dict[str, Any]) -> None:
    """``true_values`` / ``false_values``: how a boolean reference (or a one-hot reference's cells)
    spells true and false; none shared, none a blank spelling."""
    for key in ("true_values", "false_values"):
        if key in table.data:
            extra[key] = tuple(text.lower() for text in table.strings(key))
    if set(extra.get("true_values", ())) & set(extra.get("false_values", ())):
        table.fail("false_values", "shares a spelling with true_values")
    spellings = set(
        extra.get("true_values", OutputSpec.true_values) + extra.get("false_values", OutputSpec.false_values)
    )
    if spellings & set(extra.get("blank_values", ())):
        table.fail("blank_values", "shares a spelling with true_values or false_values")


def _column_name(table: Table, key: str, column: Any, case_column: str, case_named: str) -> str:
    """A column of a CSV named at ``key``: a name, not ``case_column`` (``case_named`` in messages)."""
    if not isinstance(column, str):
        table.fail(key, f"must be a string, not {type_of(column)} {column!r}")
    if not column or column != column.strip():
        table.fail(key, f"{column!r} is not a column name (none, or with surrounding spaces)")
    if column == case_column:
        table.fail(key, f"{column!r} is {case_named}")
    return column


def _class_columns(
    table: Table, key: str, classes: tuple[str, ...], case_column: str, case_named: str
) -> tuple[tuple[str, str], ...]:
    """A column per class, declared at ``key``: a probabilities output's ``columns`` in a prediction-file
    phase (the CSV column of each probability) or a one-hot reference's ``reference_columns`` (the 0/1
    column of each class); class -> column, each class not listed in the column of its own name (ISIC's
    ``image,MEL,NV,...``)."""
    named = table.get(key, dict, {})
    unknown = next((name for name in named if name not in classes), None)
    if unknown is not None:
        table.fail(f"{key}.{unknown}", f"is not a class of this output ({', '.join(classes)})")
    columns: dict[str, str] = {}
    for name in classes:
        where = f"{key}.{name}"
        column = _column_name(table, where, named.get(name, name), case_column, case_named)
        other = next((c for c, taken in columns.items() if taken == column), None)
        if other is not None:
            table.fail(where, f"{column!r} is the column of class {other!r} too")
        columns[name] = column
    return tuple(columns.items())


def class_items(output: OutputSpec, raw: Any, case: str, what: str) -> list[tuple[str, Any]]:
    """A probabilities answer's (class, value) pairs in the declared order: a JSON object with
    exactly the declared classes, or a list of as many values in the declared order."""
    classes = output.classes
    if isinstance(raw, dict):
        extra = next((k for k in raw if k not in classes), None)
        if extra is not None:
            raise SubmissionError(
                f"{what} has a probability for {shown(extra)}, which is not a class ({', '.join(classes)}).", case
            )
        absent = next((c for c in classes if c not in raw), None)
        if absent is not None:
            raise SubmissionError(f"{what} has no probability for class {absent!r}.", case)
        items = [(c, raw[c]) for c in classes]
    elif isinstance(raw, list):
        if len(raw) != len(classes):
            raise SubmissionError(f"{what} is a list of {len(raw)} values; it needs {len(classes)}, one per class in "
                                  f"the order {', '.join(classes)}.", case)  # fmt: skip
        items = list(zip(classes, raw, strict=True))
    else:
        raise SubmissionError(f"{what} is neither a JSON object of class probabilities nor a list of numbers.", case)
    return items


def probabilities(
    output: OutputSpec, raw: Any, case: str, what: str, subject: Callable[[str], str] | None = None
) -> dict[str, float]:
    """A probabilities answer checked (``class_items``): each value finite, in [0, 1]; summing to 1
    within the tolerance when ``sum = "one"``. Returned as {class: probability} in the declared order.
    ``subject(class)`` names one value in messages (default: "<what>, class 'mel',"; a prediction
    CSV: its cell's line and column)."""
    subject = subject or (lambda name: f"{what}, class {name!r},")
    found = {}
    for name, value in class_items(output, raw, case, what):
        number = finite_number(value, subject(name), case)
        if number < 0:
            raise SubmissionError(f"{subject(name)} is {number:g}; a probability cannot be negative.", case)
        if number > 1:
            raise SubmissionError(f"{subject(name)} is {number:g}, outside [0, 1].", case)
        found[name] = number
    total = math.fsum(found.values())
    if output.sum_rule == "one" and abs(total - 1.0) > output.sum_tolerance:
        raise SubmissionError(f"{what} sums to {total:.10g}; the probabilities must sum to 1 (within "
                              f"{output.sum_tolerance:g}).", case)  # fmt: skip
    return found


def cell_number(text: str, what: str, case: str) -> float:
    """A prediction CSV's cell as a finite decimal number (``what`` names the cell in messages); not
    Python's digit separators, which ``float`` reads ("0.2_5" would be 0.25)."""
    try:
        if "_" in text or not text.isascii():  # float() reads "0.2_5" and Arabic-Indic or full-width digits too
            raise ValueError(text)
        number = float(text)
    except ValueError:
        ascii_only = "" if text.isascii() else " in ASCII digits"
        raise SubmissionError(f"{what} is {shown(text)}, not a number{ascii_only}.", case) from None
    if not math.isfinite(number):
        raise SubmissionError(f"{what} is {shown(text)}, not a finite number.", case)
    return number


# every output's own keys beside its kind's (JSON Schema)
COMMON_KEYS = {
    "slug": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$", "description": "The output socket's slug."},
    "reference": {"type": "string", "description": "A path pattern relative to the ground truth, never leaving it, "
                  "with `{case}` (`'labels/{case}.mha'`) or `{stem}` (the case without its image suffix), optionally "
                  "ending in `.*` (any of `reference_suffixes`, exactly one file per case; `'<folder>/{case}.*'` lists "
                  "the cases: every file of the folder with such a suffix); or `'file.csv:column'`; or "
                  "(choice, probabilities) a one-hot `'file.csv'`; boxes, points: one `.json` per image or one for "
                  "all."},
    "reference_suffixes": {**_STRINGS, "description": "For a pattern ending in `.*`: the suffixes allowed (letter "
                           "case ignored); default: the image suffixes."},
    "noun": {"type": "string", "description": "How messages name the output, e.g. `'malignancy likelihood'`: 'The "
             "malignancy likelihood of image a.png is not a number.'; not set: `output '<slug>'`."},
    "list_noun": {"type": "string", "description": "Stacked inputs only: how messages name a job's list of the "
                  "output's values, e.g. `'likelihoods'`: 'The likelihoods of stack s1.tiff are not a JSON list of "
                  "numbers.', 'Stack s1.tiff has 4 frames but 3 likelihoods were given.'; not set: the output."},
    "super_kind": {"enum": ["Value", "File"], "default": "Value", "description": "A value output's socket: a value, "
                   "or a JSON file (RARE25's likelihoods)."},
    "unit": {"type": "string", "description": "The unit messages give a value in, e.g. `'days'`."},
    "relative_path": {"type": "string", "description": "The socket's path in a job's output; default: "
                      "`images/<slug>` (images) or `<slug>.json`."},
    "platform_kind": {"type": "string", "description": "The socket's kind on grand-challenge.org; default: the "
                      "kind's."},
    "blank": {"enum": ["error", "skip"], "description": "A CSV reference's blank cell: refused, or the case leaves "
              "this output (when every output is a CSV column, a case blank in all is no case)."},
    "blank_values": {**_STRINGS, "description": "The spellings of a blank cell (case-insensitive), e.g. `['', "
                     "'nan', 'na']`."},
    "together_with": {**_STRINGS, "description": "Other outputs with a CSV column reference: a case is scored for "
                      "this output only when it has a reference for them too (HECKTOR 2026's T and N stages)."},
    "extra_cases": {"enum": list(EXTRA_CASES), "description": "A CSV reference's row of a case the listing output "
                    "lacks: refused, or no case."},
}  # fmt: skip


def outputs_schema() -> dict[str, Any]:
    """The JSON Schema of one ``[[outputs]]`` entry: its kind's keys and missing policies."""
    return {
        "type": "object",
        "properties": {"kind": {"enum": list(KINDS), "description": "The output's kind (its own keys below)."}},
        "required": ["slug", "kind", "reference"],
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                "then": {
                    "properties": {
                        "kind": {"const": name, "description": " ".join((type(kind).__doc__ or "").split())},
                        **COMMON_KEYS,
                        "missing": {
                            "enum": list(kind.missing),
                            "default": kind.missing[0],
                            "description": "A case without this output: "
                            + "; ".join(f"`{policy}`: {MISSING_MEANINGS[policy]}" for policy in kind.missing)
                            + ".",
                        },
                        **kind.keys,
                    },
                    "required": list(kind.required),
                    "additionalProperties": False,
                },
            }
            for name, kind in KINDS.items()
        ],
    }
