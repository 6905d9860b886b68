"""The declaration format: one TOML file per challenge, parsed and validated into plain dataclasses.

Every key is checked (type, allowed values, references between sections) before anything runs; the
first problem is a ``ConfigurationError`` of one line naming the file and the key, e.g.
``kits.toml: outputs[1].missing: 'zero' is not one of error, empty-mask, exclude (for a segmentation
output)``. The README section "A new challenge without Python" documents every key with an example.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from evaluation.declarative import bounds, measures
from evaluation.errors import ConfigurationError
from evaluation.platform.images import GEOMETRY_POLICIES, GEOMETRY_TOLERANCE
from evaluation.platform.matching import IMAGE_NAME_SUFFIXES

NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
KEY = re.compile(r"[A-Za-z0-9_-]+")  # a metrics.json key: no dot (the platform splits paths on dots)

OUTPUT_KINDS = ("segmentation", "number", "boolean", "choice", "probabilities", "boxes", "points")
RESERVED_KINDS = ("list",)  # in the format, not yet in the engine
CSV_COLUMN = "csv-column"  # the issue's name for a prediction CSV's column: a [submission] kind = "csv" phase
CSV_KINDS = ("number", "boolean", "choice")  # the outputs a prediction CSV's one column can hold
CSV_CLASS_KIND = "probabilities"  # in a prediction CSV: one column per class (``columns``)
ONE_HOT_KINDS = ("choice", "probabilities")  # may take a one-hot reference: ``reference = "truth.csv"``
NO_CLASS_POLICIES = ("error", "skip")  # a one-hot row without a class at 1 (``reference_none``), or a class name
SUBMISSION_KINDS = ("jobs", "csv")  # algorithm jobs (predictions.json) or one prediction CSV
PLATFORM_KINDS = {"segmentation": "Segmentation", "number": "Float", "boolean": "Bool", "choice": "String",
                  "probabilities": "Anything", "boxes": "Multiple 2D bounding boxes",
                  "points": "Multiple points"}  # fmt: skip
MISSING_POLICIES = ("error", "empty-mask", "worst-value", "misclassification", "exclude", "empty", "non-concordant",
                    "tie")  # fmt: skip
SURVIVAL_MISSING = ("non-concordant", "tie")  # c_index's policies for a missing risk (survival.MISSING_POLICIES)
MISSING_BY_KIND = {
    "segmentation": ("error", "empty-mask", "exclude"),
    "number": ("error", "worst-value", "exclude", *SURVIVAL_MISSING),
    "boolean": ("error", "misclassification", "exclude"),
    "choice": ("error", "misclassification", "exclude"),
    "probabilities": ("error", "worst-value", "uniform", "exclude"),
    "boxes": ("error", "empty", "exclude"),  # empty: an image without detections
    "points": ("error", "empty", "exclude"),
}
OBJECT_KINDS = ("boxes", "points")  # detection outputs: one JSON file of objects per image
DETECTION_METRICS = tuple(measures.DETECTION_METRICS)  # on a boxes output
SEGMENTATION_METRICS = ("dice", "iou", "hd95", "nsd", "lesion_f1", "hausdorff", "masd", "volume_difference",
                        "panoptic_quality")  # fmt: skip
VALUE_METRICS = {  # metric -> output kinds it scores
    "auroc": ("number", "probabilities"),
    "average_precision": ("number", "probabilities"),
    "brier": ("number", "probabilities"),
    "ece": ("number", "probabilities"),
    "top_label_calibration_error": ("probabilities",),
    "mae": ("number",),
    "rmse": ("number",),
    "balanced_accuracy": ("boolean", "choice", "probabilities"),
    "accuracy": ("boolean", "choice", "probabilities"),
    "sensitivity": ("number", "probabilities"),
    "specificity": ("number", "probabilities"),
    "sensitivity_at_specificity": ("number",),
    "specificity_at_sensitivity": ("number",),
    "cohen_kappa": ("boolean", "choice", "probabilities"),
    "pearson": ("number",),
    "spearman": ("number",),
    "c_index": ("number",),
}
NONZERO = "nonzero"  # a label value: any non-zero pixel of a 2D mask (PNG, RGB) is this label
MEAN_OVER = ("all", "present", "positives")
SETTINGS_LAYOUTS = ("full", "options")
COMBINED = "mean"  # the mean of aggregates declared before (e.g. HECKTOR's segmentation score)
BINARY_REFERENCE_METRICS = ("auroc", "average_precision", "brier", "ece", "sensitivity", "specificity",
                            "sensitivity_at_specificity", "specificity_at_sensitivity")  # fmt: skip
PROBABILITY_METRICS = ("brier", "ece")
PER_CLASS_METRICS = ("auroc", "average_precision", "ece", "sensitivity", "specificity")  # on probabilities
PER_CLASS_FORMS = ("per_class", "macro")  # one value per class (one-vs-rest); their mean
SUM_RULES = ("one", "any")  # a probabilities answer: its values sum to 1 (within sum_tolerance), or any sum
COUNT_FORMS = ("tp", "fp", "fn")  # lesion_f1's summed lesion counts: integers, never bootstrapped
FORMS = {"dice": ("mean", "dataset"), "iou": ("mean", "dataset"), "hd95": ("mean",), "nsd": ("mean",),
         "lesion_f1": ("mean", "dataset", *COUNT_FORMS), "hausdorff": ("mean",), "masd": ("mean",),
         "volume_difference": ("mean",), "panoptic_quality": ("mean",)}  # fmt: skip
SURFACE_METRICS = ("hd95", "nsd", "hausdorff", "masd")  # 3D only (DeepMind surfels)
DISTANCE_METRICS = ("hd95", "hausdorff", "masd")  # one_empty: a number or "diagonal"
SCORING_METHODS = ("abs", "avg", "med")
ORDERS = ("metric", "label")  # [report] order: metrics.json keys metric by metric, or label by label
SORTS = ("asc", "desc")


@dataclass(frozen=True)
class Cases:
    """How a job names its case: the image name of input socket ``input``, minus one of
    ``strip_suffixes`` (file extensions), minus one of ``strip`` (trailing markers such as ``__CT``)."""

    input: str
    strip_suffixes: tuple[str, ...]
    strip: tuple[str, ...]
    id_column: str
    word: str = ""  # how messages name a case ("image a.png"); "" names it alone
    same_stem: bool = False  # an unknown job name matches the one case with the same stem
    ground_truth_name: str = ""  # how a CSV decoding error names the ground truth ("The HECKTOR ground truth ...")

    def named(self, case: str) -> str:
        """The case as messages name it."""
        return f"{self.word} {case}" if self.word else case

    @property
    def noun(self) -> str:
        """The word for a case where a message needs one ("image", else "case")."""
        return self.word or "case"

    @property
    def ground_truth(self) -> str:
        """How the organizer's messages open: "The HECKTOR ground truth", or "The ground truth"."""
        return f"The {self.ground_truth_name} ground truth" if self.ground_truth_name else "The ground truth"


@dataclass(frozen=True)
class Submission:
    """What a participant submits (``[submission]``): algorithm jobs (``kind = "jobs"``), or one CSV
    of a prediction-file phase (``kind = "csv"``) with a row per case, found as ``file`` (else the
    single ``*.csv`` of the input), its cases in ``id_column``, refused unread above ``max_mb``."""

    kind: str = "jobs"
    file: str = "predictions.csv"
    id_column: str = "case"
    max_mb: float = 10.0  # a row per case is far smaller; at 10 MB: 1.3 s, 222 MiB (benchmarks/prediction_csv.py)

    @property
    def csv(self) -> bool:
        return self.kind == "csv"

    @property
    def missing_key(self) -> str:
        """The list of cases without a prediction in the ``missing`` block: jobs, or rows of the CSV."""
        return "rows" if self.csv else "jobs"


@dataclass(frozen=True)
class InputSpec:
    slug: str
    relative_path: str
    kind: str
    name: str  # the input file name of a case, for make_input: "{case}.mha"


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
    labels: tuple[tuple[str, int | str], ...] = ()  # a value "nonzero": any non-zero pixel is the label
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
    noun: str = ""  # how messages name the output ("malignancy likelihood"); "" = "output '<slug>'"
    unit: str = ""  # how messages follow a value of the output ("days")
    event: Reference | None = None  # a number output scored by c_index: the event column (reference = time)
    sum_rule: str = "one"  # probabilities: "one" (the values sum to 1 within sum_tolerance) or "any"
    sum_tolerance: float = 1e-3
    column: str = ""  # a prediction-file phase: the column of the participant's CSV holding this output
    columns: tuple[tuple[str, str], ...] = ()  # ... or, for probabilities, (class, column) in the declared order

    @property
    def csv_columns(self) -> tuple[str, ...]:
        """The participant's CSV columns this output reads (none outside a prediction-file phase)."""
        return tuple(column for _, column in self.columns) or ((self.column,) if self.column else ())

    @property
    def super_kind(self) -> str:
        return "Image" if self.kind == "segmentation" else "Value"

    @property
    def nonzero(self) -> bool:
        """A 2D mask where any non-zero pixel is its one label (``labels = { lesion = "nonzero" }``)."""
        return any(value == NONZERO for _, value in self.labels)


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric; ``params`` holds its parameters and edge-case values, defaults filled in."""

    name: str
    metric: str
    output: str
    labels: tuple[str, ...]
    aggregates: tuple[str, ...]
    bootstrap: bool
    params: tuple[tuple[str, Any], ...]
    group: str | None = None  # the aggregates sub-table the values go to (aggregates.<group>.<key>)
    keys: tuple[tuple[str, str], ...] = ()  # form -> key template with {name}, {label}, {form}
    case_key: str = "{name}_{label}"  # the per-case key template (segmentation metrics); "": none
    case_count_key: str = ""  # lesion_f1: the per-case TP / FP / FN key template ({count}); "": none

    def param(self, key: str) -> Any:
        return dict(self.params)[key]

    def key(self, label: str, form: str) -> str:
        """The aggregate key of one label and form (value metrics: label "" and form "value")."""
        return dict(self.keys)[form].format(name=self.name, label=label, form=form)

    def per_case_key(self, label: str) -> str:
        return self.case_key.format(name=self.name, label=label)

    def count_key(self, label: str, count: str) -> str:
        return self.case_count_key.format(name=self.name, label=label, count=count)


@dataclass(frozen=True)
class Column:
    title: str
    path: str
    order: str
    exclude_from_ranking: bool


@dataclass(frozen=True)
class Leaderboard:
    score: str
    title: str
    sort: str
    decimal_places: int
    scoring_method: str
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class OptionSpec:
    """A ``--set`` option that overrides declared values: ``targets`` are (section, index, key), e.g.
    ("outputs", 0, "geometry") for ``sets = ["outputs.kidney-segmentation.geometry"]``."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None
    targets: tuple[tuple[str, int, str], ...]
    sets: tuple[str, ...]
    values: tuple[tuple[str, Any], ...] = ()  # the option's value (as text) -> the declared value it sets

    def declared(self, value: Any) -> Any:
        """The declared value an option value sets (itself without a ``values`` table)."""
        return dict(self.values).get(_text(value), value) if self.values else value


@dataclass(frozen=True)
class Report:
    """The layout of metrics.json beyond the metrics (``[report]``)."""

    missing: bool = True  # write the "missing" block
    settings: str = "full"  # "full": the whole declaration; "options": the challenge and the options only
    case_values: bool = True  # per case: the participant's own value of each value output
    label_presence: bool = False  # per case: "<label>_in_reference" for each segmentation label
    counts: tuple[tuple[str, str], ...] = ()  # aggregate key -> "cases" or the mean aggregate it counts
    notes: tuple[tuple[str, Any], ...] = ()  # constant settings entries: [report.constants], then the prose notes
    notes_first: bool = False  # those entries right after "challenge" (before the options) instead of last
    per_case: bool = True  # false: "case" is an empty object (the phase reports no per-case entries)
    missing_names: tuple[tuple[str, str], ...] = ()  # output slug -> its key in the "missing" block
    order: str = "metric"  # "label": a run of segmentation metrics of one output and group, label by label
    absent_labels: tuple[str, str] | None = None  # (aggregate path, output): the labels in no reference/prediction


@dataclass(frozen=True)
class Declaration:
    source: str
    name: str
    title: str
    cases: Cases
    inputs: tuple[InputSpec, ...]
    outputs: tuple[OutputSpec, ...]
    metrics: tuple[MetricSpec, ...]
    leaderboard: Leaderboard
    resamples: int
    seed: int
    level: float
    options: tuple[OptionSpec, ...] = ()
    report: Report = Report()
    submission: Submission = Submission()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def output(self, slug: str) -> OutputSpec:
        return next(o for o in self.outputs if o.slug == slug)

    def aggregate_keys(self) -> list[str]:
        """Every path this declaration writes under ``aggregates`` (``group.key`` or ``key``, with CI
        siblings where declared)."""
        keys = []
        for metric in self.metrics:
            for _, form, key in metric_keys(metric):
                path = f"{metric.group}.{key}" if metric.group else key
                keys.append(path)
                if metric.bootstrap and form not in COUNT_FORMS:
                    keys += [f"{path}_ci_low", f"{path}_ci_high"]
        return keys


def metric_keys(metric: MetricSpec) -> list[tuple[str, str, str]]:
    """(label, form, key) of every aggregate of one metric: per label and form for a segmentation
    metric (default key ``<name>_<label>_<form>``); per class (``<name>_<class>``) then the macro
    mean (``<name>_macro``) for a per-class metric of a probabilities output; one ``<name>`` for any
    other case-level output metric."""
    if metric.metric in SEGMENTATION_METRICS:
        return [(label, form, metric.key(label, form)) for label in metric.labels for form in metric.aggregates]
    if metric.aggregates:  # per class and macro (labels: the classes)
        return [(label, form, metric.key(label, form)) for form in metric.aggregates
                for label in (metric.labels if form == "per_class" else ("",))]  # fmt: skip
    return [("", "value", metric.key("", "value"))]


# ------------------------------------------------------------------------------------- validation


class _Table:
    """A TOML table being validated: every key read is remembered; leftovers are unknown keys."""

    def __init__(self, file: str, where: str, data: Any) -> None:
        self.file, self.where = file, where
        if not isinstance(data, dict):
            self.fail("", f"must be a table, not {_type(data)}")
        self.data, self.read = data, set()

    def fail(self, key: str, problem: str) -> NoReturn:
        location = ".".join(part for part in (self.where, key) if part) or "(top level)"
        raise ConfigurationError(f"{self.file}: {location}: {problem}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., choices: tuple[Any, ...] = ()) -> Any:
        self.read.add(key)
        if key not in self.data:
            if default is ...:
                # a misspelt required key would otherwise go unnamed: the table fails before done() sees it
                typo = difflib.get_close_matches(key, [k for k in self.data if k not in self.read], n=1)
                self.fail(key, f"is required (is {typo[0]!r} a misspelling of it?)" if typo else "is required")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            self.fail(key, f"must be {' or '.join(_name(k) for k in kinds)}, not {_type(value)} {value!r}")
        if choices and value not in choices:
            self.fail(key, f"{value!r} is not one of {', '.join(map(str, choices))}")
        return value

    def strings(self, key: str, default: Any = ...) -> tuple[str, ...]:
        value = self.get(key, list, default)
        if not all(isinstance(item, str) for item in value):
            self.fail(key, "must be a list of strings")
        return tuple(value)

    def sub(self, key: str) -> _Table:
        """An optional sub-table (empty when absent)."""
        where = f"{self.where}.{key}" if self.where else key
        return _Table(self.file, where, self.get(key, dict, {}))

    def items(self, key: str) -> list[_Table]:
        raw = self.get(key, list)
        if not raw:
            self.fail(key, "needs at least one entry")
        prefix = f"{self.where}.{key}" if self.where else key
        return [_Table(self.file, f"{prefix}[{i}]", item) for i, item in enumerate(raw)]

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            known = ", ".join(sorted(self.read))
            self.fail(unknown[0], f"unknown key (known here: {known})")


def _name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
            dict: "a table"}[kind]  # fmt: skip


def _type(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)  # fmt: skip


def _number_or(table: _Table, key: str, default: float | str, word: str) -> float | str:
    """A number, or the one word ``word`` (e.g. "exclude")."""
    value = table.get(key, (float, str), default)
    if isinstance(value, str) and value != word:
        table.fail(key, f"must be a number or {word!r}, not {value!r}")
    return value


def _inside(table: _Table, key: str, text: str, path: str) -> None:
    """A ground-truth ``path`` declared at ``key`` must stay inside the ground truth."""
    if Path(path).is_absolute() or ".." in Path(path).parts:
        table.fail(key, f"{text!r} must be a relative path inside the ground truth")


def _reference(table: _Table, kind: str) -> Reference:
    text = table.get("reference", str)
    if ":" in text:
        csv_file, _, column = text.partition(":")
        if not csv_file.endswith(".csv") or not column:
            table.fail("reference", f"{text!r} is neither a path pattern with {{case}} nor 'file.csv:column'")
        if kind in ("segmentation", *OBJECT_KINDS):
            table.fail("reference", f"a {kind} output needs a path pattern such as 'labels/{{case}}.mha' or '.json'")
        _inside(table, "reference", text, csv_file)
        return Reference(text, csv_file=csv_file, column=column)
    if kind in ONE_HOT_KINDS and text.endswith(".csv") and "{" not in text:  # one-hot: columns come with the classes
        _inside(table, "reference", text, text)
        return Reference(text, csv_file=text)
    if kind in OBJECT_KINDS and (text.count("{case}") != 1 or "{stem}" in text or not text.endswith(".json")):
        table.fail("reference", f"{text!r} is not a path pattern with exactly one {{case}} ending in .json")
    if (text.count("{case}") + text.count("{stem}") != 1 or kind != "segmentation") and kind not in OBJECT_KINDS:
        what = "a path pattern with exactly one {case} or {stem}" if kind == "segmentation" else "'file.csv:column'"
        if kind in ONE_HOT_KINDS:
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


def _output(table: _Table, submission: Submission, id_column: str) -> OutputSpec:
    """One ``[[outputs]]`` entry: a socket of an algorithm job, or (``submission.csv``) a column of the
    participant's prediction CSV, which only a number, boolean or choice output can be (or, a column
    per class, a probabilities output). ``id_column``: the case column of the CSV references."""
    slug = table.get("slug", str)
    if not SLUG.fullmatch(slug):
        table.fail("slug", f"{slug!r} is not a socket slug (lower-case letters, digits, '-')")
    kind = table.get("kind", str)
    if kind == CSV_COLUMN:
        table.fail("kind", f"{kind!r}: declare [submission] kind = 'csv' and give a {', '.join(CSV_KINDS)} output "
                   f"its column = '<CSV column>' (a {CSV_CLASS_KIND} output: a column per class)")  # fmt: skip
    if kind in RESERVED_KINDS:
        hint = "; a list of class probabilities per case is kind = 'probabilities'" if kind == "list" else ""
        table.fail("kind", f"{kind!r} is not supported by this version (supported: {', '.join(OUTPUT_KINDS)}){hint}")
    if kind not in OUTPUT_KINDS:
        table.fail("kind", f"{kind!r} is not one of {', '.join(OUTPUT_KINDS + RESERVED_KINDS)}")
    if submission.csv and kind not in (*CSV_KINDS, CSV_CLASS_KIND):
        table.fail("kind", f"a {kind} output cannot be a column of a prediction CSV ([submission] kind = 'csv'): "
                   f"only {', '.join(CSV_KINDS)} (and {CSV_CLASS_KIND}, a column per class)")  # fmt: skip
    column = ""
    if submission.csv and kind == CSV_CLASS_KIND:  # a column per class: ``columns``, read with the classes
        relative_path, platform_kind = "", ""
        if "column" in table.data:
            table.fail("column", f"a {kind} output reads one column per class: declare columns = {{ <class> = "
                       "'<CSV column>', ... } (default: each class's own name)")  # fmt: skip
    elif submission.csv:  # a column of the CSV, not a socket: no relative path, no platform kind
        relative_path, platform_kind = "", ""
        column = _column_name(table, "column", table.get("column", str, slug), *_prediction_case_column(submission))
    else:
        default_path = f"images/{slug}" if kind == "segmentation" else f"{slug}.json"
        relative_path = table.get("relative_path", str, default_path)
        platform_kind = table.get("platform_kind", str, PLATFORM_KINDS[kind])
    reference = _reference(table, kind)
    missing = table.get("missing", str, "error")
    if missing not in MISSING_POLICIES and kind != "probabilities":  # (its "uniform" is its own: named below)
        table.fail("missing", f"{missing!r} is not one of {', '.join(MISSING_POLICIES)}")
    if missing not in MISSING_BY_KIND[kind]:
        table.fail("missing", f"{missing!r} is not one of {', '.join(MISSING_BY_KIND[kind])} (for a {kind} output)")
    extra: dict[str, Any] = {"noun": table.get("noun", str, ""), "unit": table.get("unit", str, ""), "column": column}
    if reference.csv_file is not None:
        extra["blank"] = table.get("blank", str, "error", ("error", "skip"))
        if "blank_values" in table.data:
            extra["blank_values"] = tuple(text.lower() for text in table.strings("blank_values"))
    if kind == "number" and reference.csv_file is not None and "event" in table.data:
        event = table.get("event", str)
        csv_file, _, column = event.partition(":")
        if not csv_file.endswith(".csv") or not column:
            table.fail("event", f"{event!r} is not 'file.csv:column' (the event indicator of each case, 1 = event)")
        extra["event"] = Reference(event, csv_file=csv_file, column=column)
    if kind == "segmentation":
        labels = table.get("labels", dict)
        for label, value in labels.items():
            if not KEY.fullmatch(label):
                table.fail(f"labels.{label}", "a label name may hold letters, digits, '_' and '-' only")
            if value == NONZERO and len(labels) > 1:
                table.fail(f"labels.{label}", f"a {NONZERO!r} label must be the output's only label")
            if value != NONZERO and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                table.fail(f"labels.{label}", f"must be a positive integer voxel value or {NONZERO!r}, not {value!r}")
        if not labels:
            table.fail("labels", "needs at least one label")
        if len(set(labels.values())) != len(labels):
            table.fail("labels", "two labels share a voxel value")
        extra["labels"] = tuple(labels.items())
        extra["geometry"] = table.get("geometry", str, "error", GEOMETRY_POLICIES)
        extra["tolerance"] = table.get("tolerance", float, GEOMETRY_TOLERANCE)
        extra["grid"] = table.get("grid", str, OutputSpec.grid)
        if not 0 <= extra["tolerance"] < 1:
            table.fail("tolerance", "must be in [0, 1) (relative and absolute)")
        extra["dimension"] = table.get("dimension", int, 3, (2, 3))
        if NONZERO in labels.values() and extra["dimension"] != 2:
            table.fail("dimension", f"a {NONZERO!r} mask is a 2D image: declare dimension = 2")
        if NONZERO in labels.values() and extra["geometry"] != "error":
            table.fail("geometry", f"a {NONZERO!r} mask has no physical grid to resample on: only 'error'")
    elif kind == "number":
        bounds = table.get("range", list, None)
        if bounds is not None:
            if len(bounds) != 2 or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds):
                table.fail("range", "must be [low, high], two numbers")
            if not bounds[0] < bounds[1]:
                table.fail("range", "low must be smaller than high")
            extra["range"] = (float(bounds[0]), float(bounds[1]))
        if missing == "worst-value" and bounds is None:
            table.fail("missing", "'worst-value' needs a range = [low, high] (the worst value is its end farthest "
                       "from the reference)")  # fmt: skip
    elif kind == "boolean":
        _spellings(table, extra)
    elif kind in ("choice", "probabilities"):
        classes = table.strings("classes")
        if len(classes) < 2 or len(set(classes)) != len(classes):
            table.fail("classes", "needs at least two distinct classes")
        if kind == "probabilities" and not all(KEY.fullmatch(c) for c in classes):
            bad = next(c for c in classes if not KEY.fullmatch(c))
            table.fail("classes", f"{bad!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")
        extra["classes"] = classes
        if reference.one_hot:
            reference = _one_hot(table, reference, classes, id_column, extra)
    for key in ("reference_columns", "reference_none"):
        if key in table.data and not reference.one_hot:
            table.fail(key, "applies to a one-hot reference only (a choice or probabilities output with reference = "
                       "'file.csv')")  # fmt: skip
    if kind == "probabilities":
        extra["sum_rule"] = table.get("sum", str, "one", SUM_RULES)
        extra["sum_tolerance"] = table.get("sum_tolerance", float, 1e-3)
        if not 0 <= extra["sum_tolerance"] < 1:
            table.fail("sum_tolerance", "must be in [0, 1)")
        if extra["sum_rule"] == "any" and "sum_tolerance" in table.data:
            table.fail("sum_tolerance", "applies to sum = 'one' only")
        if submission.csv:
            extra["columns"] = _class_columns(table, "columns", extra["classes"], *_prediction_case_column(submission))
    table.done()
    return OutputSpec(slug, kind, relative_path, platform_kind, reference, missing, **extra)


def _one_hot(
    table: _Table, reference: Reference, classes: tuple[str, ...], id_column: str, extra: dict[str, Any]
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


def _spellings(table: _Table, extra: dict[str, Any]) -> None:
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


def _prediction_case_column(submission: Submission) -> tuple[str, str]:
    """The prediction CSV's case column, and how messages name it."""
    return submission.id_column, "the case column of the prediction CSV ([submission] id_column)"


def _column_name(table: _Table, key: str, column: Any, case_column: str, case_named: str) -> str:
    """A column of a CSV named at ``key``: a name, not ``case_column`` (``case_named`` in messages)."""
    if not isinstance(column, str):
        table.fail(key, f"must be a string, not {_type(column)} {column!r}")
    if not column or column != column.strip():
        table.fail(key, f"{column!r} is not a column name (none, or with surrounding spaces)")
    if column == case_column:
        table.fail(key, f"{column!r} is {case_named}")
    return column


def _class_columns(
    table: _Table, key: str, classes: tuple[str, ...], case_column: str, case_named: str
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


def _metric(table: _Table, outputs: dict[str, OutputSpec], earlier: Mapping[str, MetricSpec]) -> MetricSpec:
    """One ``[[metrics]]`` entry; ``earlier`` maps the aggregate paths of the metrics before it to them."""
    metric = table.get("metric", str)
    known = (*SEGMENTATION_METRICS, *VALUE_METRICS, *DETECTION_METRICS, COMBINED)
    if metric not in known:
        table.fail("metric", f"{metric!r} is not one of {', '.join(known)}")
    name = table.get("name", str, metric)
    if not KEY.fullmatch(name):
        table.fail("name", f"{name!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")
    bootstrap = table.get("bootstrap", bool, False)
    params: dict[str, Any] = {}
    slug, output = "", None
    if metric == COMBINED:
        params["of"] = table.strings("of")
        for path in params["of"]:
            if path not in earlier:
                shown = ", ".join(list(earlier)[:6])
                table.fail("of", f"{path!r} is not a value of a metric declared before this one (e.g. {shown})")
            if bootstrap and not earlier[path].bootstrap:
                table.fail("bootstrap", f"a bootstrapped mean needs {path!r} bootstrapped too")
        if len(params["of"]) < 2:
            table.fail("of", "needs two or more aggregate paths")
    else:
        slug = table.get("output", str)
        if slug not in outputs:
            table.fail("output", f"{slug!r} is not a declared output (outputs: {', '.join(outputs)})")
        output = outputs[slug]
        allowed_kinds = ("segmentation",) if metric in SEGMENTATION_METRICS else VALUE_METRICS.get(metric, OBJECT_KINDS)
        if output.kind not in allowed_kinds:
            plain = tuple(kind for kind in allowed_kinds if kind != "probabilities") or allowed_kinds
            also = f" ({metric} also scores a probabilities output)" if plain != allowed_kinds else ""
            table.fail("output", f"{metric} scores a {' or '.join(plain)} output; {slug!r} is a {output.kind}{also}")
        if output.missing in SURVIVAL_MISSING and metric != "c_index":
            table.fail("output", f"{slug!r} has missing = {output.missing!r} (for c_index): {metric} cannot score it")
        if metric == "c_index" and output.event is None:
            table.fail("output", f"c_index needs the event column: declare event = 'file.csv:column' on {slug!r}")
    labels: tuple[str, ...] = ()
    aggregates: tuple[str, ...] = ()
    per_class = metric in PER_CLASS_METRICS and output is not None and output.kind == "probabilities"
    if per_class:
        labels = output.classes
        aggregates = table.strings("aggregates", list(PER_CLASS_FORMS))
        if not aggregates or len(set(aggregates)) != len(aggregates) or not set(aggregates) <= set(PER_CLASS_FORMS):
            table.fail("aggregates", f"needs one or both of {', '.join(PER_CLASS_FORMS)}, each once")
    if metric in SEGMENTATION_METRICS:
        label_names = [label for label, _ in output.labels]
        labels = table.strings("labels", label_names)
        for label in labels:
            if label not in label_names:
                table.fail("labels", f"{label!r} is not a label of {slug!r} ({', '.join(label_names)})")
        aggregates = table.strings("aggregates", ["mean"])
        for form in aggregates:
            if form not in FORMS[metric]:
                table.fail("aggregates", f"{form!r} is not one of {', '.join(FORMS[metric])} (for {metric})")
        if not aggregates or len(set(aggregates)) != len(aggregates):
            table.fail("aggregates", "needs one or more distinct forms")
        if metric in SURFACE_METRICS and output.dimension != 3:
            table.fail("metric", f"{metric} needs a 3D segmentation (output {slug!r} has dimension 2)")
        if metric not in ("dice", "iou") and output.nonzero:
            table.fail("metric", f"{metric} needs a label image; output {slug!r} is a {NONZERO!r} mask (dice, iou)")
    both_empty_defaults = {"dice": 1.0, "iou": 1.0, "hd95": 0.0, "nsd": 1.0, "hausdorff": 0.0, "masd": 0.0}
    if metric in both_empty_defaults:
        params["both_empty"] = table.get("both_empty", (float, str), both_empty_defaults[metric])
        if isinstance(params["both_empty"], str) and params["both_empty"] != "exclude":
            table.fail("both_empty", f"must be a number or 'exclude', not {params['both_empty']!r}")
        params["mean_over"] = table.get("mean_over", str, "all", MEAN_OVER)
    if metric in ("dice", "iou"):
        params["absent_everywhere"] = table.get("absent_everywhere", float, 1.0)
        params["volume"] = table.get("volume", str, "voxels", ("voxels", "mm3"))
    if metric in DISTANCE_METRICS:
        params["one_empty"] = table.get("one_empty", (float, str), "diagonal")
        if isinstance(params["one_empty"], str) and params["one_empty"] != "diagonal":
            table.fail("one_empty", f"must be a number or 'diagonal', not {params['one_empty']!r}")
    if metric in SURFACE_METRICS and "compute" in table.data:  # false: not computed (null; saves the surfaces)
        params["compute"] = table.get("compute", bool)
    if metric == "nsd":
        params["tolerance_mm"] = table.get("tolerance_mm", float)
        if params["tolerance_mm"] <= 0:
            table.fail("tolerance_mm", "must be positive")
        params["one_empty"] = table.get("one_empty", float, 0.0)
    if metric == "lesion_f1":
        params["iou_threshold"] = table.get("iou_threshold", float, 0.3)
        if not 0 <= params["iou_threshold"] < 1:
            table.fail("iou_threshold", "must be in [0, 1) (a match needs IoU strictly above it)")
        params["matching"] = table.get("matching", str, "greedy", ("greedy", "hungarian"))
        params["connectivity"] = table.get("connectivity", int, 26, (26,))
        params["no_lesions"] = table.get("no_lesions", float, 1.0)
    if metric == "volume_difference":
        params["relative"] = table.get("relative", bool, False)
        params["absolute"] = table.get("absolute", bool, True)
        params["volume"] = table.get("volume", str, "voxels", ("voxels", "mm3"))
        if params["relative"]:  # V(R) = 0 < V(P): the catalogue's empty_reference (no finite default)
            params["empty_reference"] = _number_or(table, "empty_reference", "exclude", "exclude")
    if metric == "panoptic_quality":
        params["iou_threshold"] = table.get("iou_threshold", float, 0.5)
        if not 0.5 <= params["iou_threshold"] < 1:
            table.fail("iou_threshold", "must be in [0.5, 1) (a match needs IoU strictly above it, and is then unique)")
        params["quality"] = table.get("quality", str, "pq", ("pq", "sq", "rq"))
        params["no_instances"] = _number_or(table, "no_instances", 1.0, "exclude")
    if metric in ("sensitivity", "specificity") and not per_class:
        params["threshold"] = table.get("threshold", float)  # the decision: positive when output >= threshold
    if metric in ("sensitivity_at_specificity", "specificity_at_sensitivity"):
        params["target"] = table.get("target", float)
        if not 0 <= params["target"] <= 1:
            table.fail("target", "must be in [0, 1]")
    if metric == "cohen_kappa":
        params["weights"] = table.get("weights", str, "none", ("none", "linear", "quadratic"))
        if params["weights"] != "none" and output.missing == "misclassification":
            table.fail("weights", f"weighted kappa orders the classes: a missing answer ({slug!r} has missing = "
                       "'misclassification') has no place there; use missing = 'error' or 'exclude'")  # fmt: skip
    if metric == "c_index":
        params["sign"] = table.get("sign", str, "risk", ("risk", "time"))  # the output: a risk or a predicted time
        params["policy"] = output.missing if output.missing in SURVIVAL_MISSING else "non-concordant"
    if metric in DETECTION_METRICS:
        params["objects"] = output.kind  # points match by distance only
        matches = ("distance",) if output.kind == "points" else tuple(measures.DETECTION_MATCHING)
        params["match"] = table.get("match", str, matches[0], matches)
        if params["match"] == "iou":
            params["threshold"] = table.get("threshold", float, 0.5)
            if not 0 <= params["threshold"] < 1:
                table.fail("threshold", "must be in [0, 1) (a match needs IoU strictly above it)")
        else:  # the distance of box centres, in the boxes' unit (pixels or mm)
            params["threshold"] = table.get("threshold", float)
            if params["threshold"] < 0:
                table.fail("threshold", "must be a non-negative distance")
        params["matching"] = table.get("matching", str, "greedy", ("greedy", "hungarian"))
        if metric == "recall_at_precision":
            params["precision"] = table.get("precision", float)
            if not 0 <= params["precision"] <= 1:
                table.fail("precision", "must be in [0, 1]")
        if metric == "froc":
            rates = table.get("fp_rates", list, [1, 2, 4, 8, 16, 32])
            if not rates or not all(isinstance(r, (int, float)) and not isinstance(r, bool) and r >= 0 for r in rates):
                table.fail("fp_rates", "must be a non-empty list of non-negative numbers (false positives per image)")
            params["fp_rates"] = [float(r) for r in rates]
            params["fp_images"] = table.get("fp_images", str, "all", ("all", "negative"))
    value_edges = measures.declared_edges(metric) if metric in (*VALUE_METRICS, *DETECTION_METRICS) else ()
    for edge in value_edges:  # the catalogue's edge-case parameters: a number, or "error"
        if edge in measures.PREDICTION_EDGES:  # a participant's answer can cause it: a number, never "error"
            params[edge] = table.get(edge, float, measures.PREDICTION_EDGES[edge])
            continue
        params[edge] = table.get(edge, (float, str), "error")
        words = ("error", "exclude") if per_class else ("error",)  # exclude: a class left out of the macro mean
        if isinstance(params[edge], str) and params[edge] not in words:
            table.fail(edge, f"must be a number or {' or '.join(map(repr, words))}, not {params[edge]!r}")
    if metric in ("ece", "top_label_calibration_error"):
        params["bins"] = table.get("bins", int, 10)
        if params["bins"] < 1:
            table.fail("bins", "must be at least 1")
    if metric in PROBABILITY_METRICS and output.kind == "number" and output.range != (0.0, 1.0):
        table.fail("output", f"{metric} needs a probability: declare range = [0, 1] on output {slug!r}")
    group = table.get("group", str, None)
    if group is not None and not KEY.fullmatch(group):
        table.fail("group", f"{group!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")
    forms = aggregates or ("value",)
    default: str | dict[str, str] = "{name}_{label}_{form}" if metric in SEGMENTATION_METRICS else "{name}"
    if per_class:
        default = {form: {"per_class": "{name}_{label}", "macro": "{name}_macro"}[form] for form in forms}
    raw_keys = table.get("key", (str, dict), default)
    templates = {form: raw_keys for form in forms} if isinstance(raw_keys, str) else raw_keys
    if set(templates) != set(forms):
        table.fail("key", f"a table of key templates needs exactly the forms {', '.join(forms)}")
    for form, template in templates.items():
        named = labels if form != "macro" else ("",)
        try:
            rendered = [str(template).format(name=name, label=label, form=form) for label in named or ("",)]
        except (KeyError, IndexError, ValueError):
            table.fail("key", f"{template!r} may use only {{name}}, {{label}} and {{form}}")
        if not all(KEY.fullmatch(key) for key in rendered):
            table.fail("key", f"{template!r} gives a key with characters other than letters, digits, '_', '-'")
    case_key = table.get("case_key", str, "{name}_{label}") if metric in SEGMENTATION_METRICS else "{name}_{label}"
    try:
        case_keys = {case_key.format(name=name, label=label) for label in labels}
    except (KeyError, IndexError, ValueError):
        table.fail("case_key", f"{case_key!r} may use only {{name}} and {{label}}")
    if case_key and (not all(KEY.fullmatch(key) for key in case_keys) or len(case_keys) != len(labels)):
        table.fail("case_key", f"{case_key!r} must give one key per label of letters, digits, '_', '-' (or '': none)")
    count_key = ""
    if metric == "lesion_f1":
        count_key = table.get("case_count_key", str, f"{case_key}_{{count}}" if case_key else "")
        try:
            count_keys = {count_key.format(name=name, label=label, count=c) for label in labels for c in COUNT_FORMS}
        except (KeyError, IndexError, ValueError):
            table.fail("case_count_key", f"{count_key!r} may use only {{name}}, {{label}} and {{count}}")
        if count_key and (not all(KEY.fullmatch(key) for key in count_keys) or len(count_keys) != 3 * len(labels)):
            table.fail("case_count_key", f"{count_key!r} must give one key per label and count (tp, fp, fn) of "
                       "letters, digits, '_', '-' (or '': none)")  # fmt: skip
    table.done()
    keys = tuple((form, str(templates[form])) for form in forms)
    return MetricSpec(
        name, metric, slug, labels, aggregates, bootstrap, tuple(params.items()), group, keys, case_key, count_key
    )


def _leaderboard(table: _Table, produced: list[str]) -> Leaderboard:
    def path(sub: _Table, key: str) -> str:
        value = sub.get(key, str)
        if not value.startswith("aggregates.") or value.removeprefix("aggregates.") not in produced:
            examples = ", ".join(f"aggregates.{k}" for k in produced[:6])
            sub.fail(key, f"{value!r} is not a value this declaration writes (for example {examples})")
        return value

    score = path(table, "score")
    columns = []
    for column in table.items("columns") if "columns" in table.data else []:
        columns.append(
            Column(
                title=column.get("title", str),
                path=path(column, "path"),
                order=column.get("order", str, "desc", SORTS),
                exclude_from_ranking=column.get("exclude_from_ranking", bool, False),
            )
        )
        column.done()
    table.read.add("columns")
    board = Leaderboard(
        score=score,
        title=table.get("title", str, score),
        sort=table.get("sort", str, "desc", SORTS),
        decimal_places=table.get("decimal_places", int, 4),
        scoring_method=table.get("scoring_method", str, "abs", SCORING_METHODS),
        columns=tuple(columns),
    )
    table.done()
    return board


RESERVED_OPTIONS = ("seed", "bootstrap_resamples")


def _text(value: Any) -> str:
    """An option value as a key of its ``values`` table (TOML spells booleans true / false)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _constant(value: Any) -> bool:
    """A settings constant's scalar: a number or a boolean."""
    return isinstance(value, (int, float, bool))


def _report(
    table: _Table, outputs: Mapping[str, OutputSpec], metrics: list[MetricSpec], submission: Submission
) -> Report:
    """The ``[report]`` table: what metrics.json holds beside the declared metrics."""
    missing = table.get("missing", bool, True)
    if not missing:
        loose = next((o for o in outputs.values() if o.missing != "error"), None)
        if loose is not None:
            table.fail(
                "missing", f"false needs missing = 'error' on every output ({loose.slug!r} has {loose.missing!r})"
            )
    means = {
        f"{m.group}.{key}" if m.group else key: (m, label)
        for m in metrics
        for label, form, key in metric_keys(m)
        if form == "mean" and m.metric in SEGMENTATION_METRICS
    }
    written = [f"{m.group}.{key}" if m.group else key for m in metrics for _, _, key in metric_keys(m)]
    counts = table.get("counts", dict, {})
    for key, counted in counts.items():
        if not KEY.fullmatch(key) or key in written:
            table.fail(f"counts.{key}", "must be a new aggregate key of letters, digits, '_' and '-'")
        if not isinstance(counted, str):
            table.fail(f"counts.{key}", f"must be a string, not {_type(counted)}")
        if counted != "cases" and counted not in means:
            shown = ", ".join(["cases", *means][:6])
            table.fail(f"counts.{key}", f"{counted!r} is not 'cases' or the path of a mean aggregate ({shown})")
    notes = table.get("notes", dict, {})
    for key, text in notes.items():
        if not isinstance(text, str):
            table.fail(f"notes.{key}", f"must be a string, not {_type(text)}")
    constants = table.get("constants", dict, {})
    for key, value in constants.items():
        if not (_constant(value) or (isinstance(value, list) and all(_constant(item) for item in value))):
            table.fail(f"constants.{key}", f"must be a number, a boolean or a list of those, not {_type(value)}")
        if key in notes:
            table.fail(f"constants.{key}", "is a note's key too")
    names = table.get("missing_names", dict, {})
    for slug, key in names.items():
        if slug not in outputs:
            table.fail(f"missing_names.{slug}", f"is not an output (one of {', '.join(outputs)})")
        if not isinstance(key, str) or not KEY.fullmatch(key) or key == submission.missing_key:
            table.fail(
                f"missing_names.{slug}", f"must be a key of letters, digits, '_' and '-' other than "
                f"'{submission.missing_key}'"
            )  # fmt: skip
    listed = [names.get(slug, slug) for slug in outputs]
    if len(set(listed)) != len(listed):
        table.fail("missing_names", "gives two outputs the same key in the missing block")
    absent = None
    if "absent_labels" in table.data:
        sub = table.sub("absent_labels")
        path, slug = sub.get("path", str), sub.get("output", str)
        if outputs.get(slug) is None or outputs[slug].kind != "segmentation":
            sub.fail("output", f"{slug!r} is not a segmentation output")
        parts = path.split(".")
        if len(parts) > 2 or not all(KEY.fullmatch(part) for part in parts) or path in written:
            sub.fail("path", f"{path!r} must be a new aggregate key, or group.key (letters, digits, '_', '-')")
        if len(parts) == 2 and any(w.startswith(f"{path}.") or w == parts[0] for w in written):
            sub.fail("path", f"{path!r} clashes with a value this declaration writes")
        sub.done()
        absent = (path, slug)
    report = Report(
        missing=missing,
        settings=table.get("settings", str, "full", SETTINGS_LAYOUTS),
        case_values=table.get("case_values", bool, True),
        label_presence=table.get("label_presence", bool, False),
        counts=tuple(counts.items()),
        notes=tuple(constants.items()) + tuple(notes.items()),
        notes_first=table.get("notes_first", bool, False),
        per_case=table.get("per_case", bool, True),
        missing_names=tuple(names.items()),
        order=table.get("order", str, "metric", ORDERS),
        absent_labels=absent,
    )
    table.done()
    return report


def _submission(table: _Table, cases: _Table) -> Submission:
    """The ``[submission]`` table; a CSV's ``id_column`` defaults to the references' (``[cases]``)."""
    kind = table.get("kind", str, "jobs", SUBMISSION_KINDS)
    if kind == "jobs":
        table.done()  # the other keys describe a CSV
        return Submission()
    file = table.get("file", str, Submission.file)
    if Path(file).name != file or not file.lower().endswith(".csv"):
        table.fail("file", f"{file!r} must be a file name ending in .csv (the file in the input folder)")
    default = cases.data.get("id_column")
    id_column = table.get("id_column", str, default if isinstance(default, str) else "case")
    if not id_column or id_column != id_column.strip():
        table.fail("id_column", f"{id_column!r} is not a column name (none, or with surrounding spaces)")
    max_mb = table.get("max_mb", float, Submission.max_mb)
    if not max_mb > 0:
        table.fail("max_mb", "must be positive")
    table.done()
    return Submission(kind, file, id_column, max_mb)


def _overridden(data: Mapping[str, Any], targets: tuple[tuple[str, int, str], ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(dict(data))
    for section, index, key in targets:
        changed[section][index][key] = value
    return changed


def _target(table: _Table, data: Mapping[str, Any], text: str) -> tuple[str, int, str]:
    section, _, rest = text.partition(".")
    which, _, key = rest.rpartition(".")
    entries = data.get(section) if section in ("outputs", "metrics") else None
    if isinstance(entries, list) and which and key:
        for index, entry in enumerate(entries):
            named = entry.get("slug") if section == "outputs" else entry.get("name", entry.get("metric"))
            if isinstance(entry, dict) and named == which:
                return section, index, key
    table.fail("sets", f"{text!r} names no declared value (outputs.<slug>.<key> or metrics.<name>.<key>)")


def _options(top: _Table, data: Mapping[str, Any]) -> tuple[OptionSpec, ...]:
    """The ``[[options]]``: each default and choice must give a valid declaration where it applies."""
    options: list[OptionSpec] = []
    for table in top.items("options"):
        name = table.get("name", str)
        if not KEY.fullmatch(name) or name in RESERVED_OPTIONS or name in [o.name for o in options]:
            table.fail("name", f"{name!r} must be a new option name (letters, digits, '_', '-'; not seed, "
                       "bootstrap_resamples)")  # fmt: skip
        table.read.add("default")
        default = table.data.get("default")
        if not isinstance(default, (str, int, float, bool)):
            table.fail("default", "is required: a string, number or boolean")
        choices = table.get("choices", list, None)
        sets = table.strings("sets")
        if not sets:
            table.fail("sets", "needs at least one declared value to override")
        targets = tuple(_target(table, data, text) for text in sets)
        values = table.get("values", dict, {})
        offered = [default, *(choices or [])]
        if values and (choices is None or set(values) != {_text(v) for v in offered}):
            table.fail("values", "needs choices, and one entry per choice (the declared value each one sets)")
        for key, value in [("default", default)] + [("choices", choice) for choice in choices or []]:
            if type(value) is not type(default):
                table.fail(key, f"{value!r} is not of the default's type ({type(default).__name__})")
            declared = values.get(_text(value), value)
            try:
                parse_data(_overridden(data, targets, declared), top.file, check_options=False)
            except ConfigurationError as error:
                table.fail(key, f"{value!r} does not give a valid declaration ({error})")
        help_text = table.get("help", str, f"sets {', '.join(sets)}")
        table.done()
        options.append(
            OptionSpec(
                name, default, help_text, tuple(choices) if choices else None, targets, tuple(sets),
                tuple(values.items()),
            )
        )  # fmt: skip
    return tuple(options)


def with_options(declaration: Declaration, values: Mapping[str, Any]) -> Declaration:
    """The declaration with the option ``values`` in force (itself when all are the defaults)."""
    changed = [o for o in declaration.options if values.get(o.name, o.default) != o.default]
    if not changed:
        return declaration
    data: Mapping[str, Any] = declaration.raw
    for option in changed:
        data = _overridden(data, option.targets, option.declared(values[option.name]))
    return parse_data(data, declaration.source)


def parse(text: str, file: str) -> Declaration:
    """A validated declaration from TOML ``text``; ``file`` names it in error messages."""
    try:
        data = bounds.loads(text, file)  # size, nesting, lengths, integers, key bounds
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{file}: not valid TOML ({error}).") from None
    return parse_data(data, file)


def parse_data(data: Mapping[str, Any], file: str, check_options: bool = True) -> Declaration:
    """A validated declaration from parsed TOML ``data`` (``check_options=False``: the options are
    not checked again, as when checking what an option's value gives)."""
    top = _Table(file, "", data)
    name = top.get("name", str)
    if not NAME.fullmatch(name):
        top.fail("name", f"{name!r} may hold lower-case letters, digits, '.', '_' and '-' only")
    title = top.get("title", str)
    submission = _submission(top.sub("submission"), top.sub("cases"))
    inputs = []
    if submission.csv and "inputs" in data:
        top.fail("inputs", "a prediction-file phase ([submission] kind = 'csv') has no algorithm inputs")
    top.read.add("inputs")
    for table in top.items("inputs") if not submission.csv else []:
        slug = table.get("slug", str)
        if not SLUG.fullmatch(slug):
            table.fail("slug", f"{slug!r} is not a socket slug (lower-case letters, digits, '-')")
        spec = InputSpec(
            slug=slug,
            relative_path=table.get("relative_path", str, f"images/{slug}"),
            kind=table.get("kind", str, "Image"),
            name=table.get("name", str, "{case}.mha"),
        )
        if spec.name.count("{case}") != 1:
            table.fail("name", f"{spec.name!r} needs exactly one {{case}}")
        table.done()
        inputs.append(spec)
    input_slugs = [spec.slug for spec in inputs]
    cases_table = top.sub("cases")
    if submission.csv:  # no job, no input name to read the case from
        job_keys = ("input", "strip_suffixes", "strip", "same_stem")
        for key in (key for key in job_keys if key in cases_table.data):
            cases_table.fail(key, "names a job's case; a prediction-file phase ([submission] kind = 'csv') has no jobs")
    cases = Cases(
        input=cases_table.get("input", str, input_slugs[0] if input_slugs else ""),
        strip_suffixes=cases_table.strings("strip_suffixes", list(IMAGE_NAME_SUFFIXES)),
        strip=cases_table.strings("strip", []),
        id_column=cases_table.get("id_column", str, "case"),
        word=cases_table.get("word", str, ""),
        same_stem=cases_table.get("same_stem", bool, False),
        ground_truth_name=cases_table.get("ground_truth_name", str, ""),
    )
    if cases.input not in input_slugs and not submission.csv:
        cases_table.fail("input", f"{cases.input!r} is not a declared input ({', '.join(input_slugs)})")
    cases_table.done()
    outputs: dict[str, OutputSpec] = {}
    for table in top.items("outputs"):
        output = _output(table, submission, cases.id_column)
        if output.slug in outputs or output.slug in input_slugs:
            table.fail("slug", f"{output.slug!r} is declared twice")
        taken = {column: o.slug for o in outputs.values() for column in o.csv_columns}
        shared = next((column for column in output.csv_columns if column in taken), None)
        if shared is not None:
            key = next((f"columns.{c}" for c, column in output.columns if column == shared), "column")
            table.fail(key, f"{shared!r} is the column of another output too ({taken[shared]!r})")
        outputs[output.slug] = output
    if all(output.reference.per_case for output in outputs.values()):
        top.fail("outputs", "no output's reference lists the cases: one needs a {case} pattern or a CSV column")
    metrics: list[MetricSpec] = []
    earlier: dict[str, MetricSpec] = {}
    for table in top.items("metrics"):
        metrics.append(_metric(table, outputs, earlier))
        for _, _, key in metric_keys(metrics[-1]):
            earlier[f"{metrics[-1].group}.{key}" if metrics[-1].group else key] = metrics[-1]
    names = [f"{m.group}.{key}" if m.group else key for m in metrics for _, _, key in metric_keys(m)]
    duplicate = next((key for key in names if names.count(key) > 1), None)
    if duplicate:
        top.fail("metrics", f"two values go to aggregates.{duplicate}: give one a different name or key")
    clash = next((key for key in names if any(other.startswith(f"{key}.") for other in names)), None)
    if clash:
        top.fail("metrics", f"aggregates.{clash} is both a value and a group")
    boot = top.sub("bootstrap")
    resamples = boot.get("resamples", int, 1000)
    seed = boot.get("seed", int, 0)
    level = boot.get("level", float, 0.95)
    if resamples < 1:
        boot.fail("resamples", "must be at least 1")
    if not 0 < level < 1:
        boot.fail("level", "must be between 0 and 1")
    boot.done()
    partial = Declaration(file, name, title, cases, tuple(inputs), tuple(outputs.values()), tuple(metrics),
                          Leaderboard("", "", "desc", 4, "abs", ()), resamples, seed, level)  # fmt: skip
    leaderboard = _leaderboard(top.sub("leaderboard"), partial.aggregate_keys())
    report = _report(top.sub("report"), outputs, metrics, submission)
    top.read.add("options")
    options = _options(top, data) if check_options and "options" in data else ()
    hidden = next((key for key, _ in report.notes if key in ("challenge", *(o.name for o in options))), None)
    if hidden is not None:
        where = "notes" if hidden in data.get("report", {}).get("notes", {}) else "constants"
        top.fail(
            f"report.{where}.{hidden}", "would hide the settings entry of the same name (the challenge or an option)"
        )
    top.done()
    return Declaration(file, name, title, cases, tuple(inputs), tuple(outputs.values()), tuple(metrics),
                       leaderboard, resamples, seed, level, options, report, submission, data)  # fmt: skip


def load(path: Path) -> Declaration:
    """The validated declaration in ``path``."""
    bounds.check_size(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{path.name}: cannot be read ({error.__class__.__name__}).") from None
    return parse(text, path.name)
