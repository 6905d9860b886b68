"""The declaration format: one TOML file per challenge, parsed and validated into plain dataclasses.

Every key is checked (type, allowed values, references between sections) before anything runs; the
first problem is a ``ConfigurationError`` of one line naming the file and the key, e.g.
``kits.toml: outputs[1].missing: 'zero' is not one of error, empty-mask, exclude (for a segmentation
output)``. The README section "A new challenge without Python" documents every key with an example.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from evaluation.declarative import measures
from evaluation.errors import ConfigurationError
from evaluation.metrics import catalogue
from evaluation.platform.images import GEOMETRY_POLICIES, GEOMETRY_TOLERANCE
from evaluation.platform.matching import IMAGE_NAME_SUFFIXES

NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
KEY = re.compile(r"[A-Za-z0-9_-]+")  # a metrics.json key: no dot (the platform splits paths on dots)

OUTPUT_KINDS = ("segmentation", "number", "boolean", "choice")
RESERVED_KINDS = ("list", "boxes", "points", "csv-column")  # in the format, not yet in the engine
PLATFORM_KINDS = {"segmentation": "Segmentation", "number": "Float", "boolean": "Bool", "choice": "String"}
MISSING_POLICIES = ("error", "empty-mask", "worst-value", "misclassification", "exclude")
MISSING_BY_KIND = {
    "segmentation": ("error", "empty-mask", "exclude"),
    "number": ("error", "worst-value", "exclude"),
    "boolean": ("error", "misclassification", "exclude"),
    "choice": ("error", "misclassification", "exclude"),
}
SEGMENTATION_METRICS = ("dice", "iou", "hd95", "nsd", "lesion_f1")
VALUE_METRICS = {  # metric -> output kinds it scores
    "auroc": ("number",),
    "average_precision": ("number",),
    "brier": ("number",),
    "ece": ("number",),
    "mae": ("number",),
    "rmse": ("number",),
    "balanced_accuracy": ("boolean", "choice"),
    "accuracy": ("boolean", "choice"),
}
COMBINED = "mean"  # the mean of aggregates declared before (e.g. HECKTOR's segmentation score)
BINARY_REFERENCE_METRICS = ("auroc", "average_precision", "brier", "ece")
PROBABILITY_METRICS = ("brier", "ece")
FORMS = {"dice": ("mean", "dataset"), "iou": ("mean", "dataset"), "hd95": ("mean",), "nsd": ("mean",),
         "lesion_f1": ("mean", "dataset")}  # fmt: skip
SCORING_METHODS = ("abs", "avg", "med")
SORTS = ("asc", "desc")


@dataclass(frozen=True)
class Cases:
    """How a job names its case: the image name of input socket ``input``, minus one of
    ``strip_suffixes`` (file extensions), minus one of ``strip`` (trailing markers such as ``__CT``)."""

    input: str
    strip_suffixes: tuple[str, ...]
    strip: tuple[str, ...]
    id_column: str


@dataclass(frozen=True)
class InputSpec:
    slug: str
    relative_path: str
    kind: str
    name: str  # the input file name of a case, for make_input: "{case}.mha"


@dataclass(frozen=True)
class Reference:
    """Where an output's reference lives: a path pattern with ``{case}`` or a CSV column."""

    text: str
    pattern: str | None = None
    csv_file: str | None = None
    column: str | None = None


@dataclass(frozen=True)
class OutputSpec:
    slug: str
    kind: str
    relative_path: str
    platform_kind: str
    reference: Reference
    missing: str
    labels: tuple[tuple[str, int], ...] = ()
    geometry: str = "error"
    tolerance: float = GEOMETRY_TOLERANCE
    dimension: int = 3
    range: tuple[float, float] | None = None
    classes: tuple[str, ...] = ()
    true_values: tuple[str, ...] = ("1", "1.0", "true", "yes")  # boolean: the reference's spellings
    false_values: tuple[str, ...] = ("0", "0.0", "false", "no")  # (case-insensitive)
    blank: str = "error"  # a blank CSV reference cell: "error", or "skip" (the case leaves this output)

    @property
    def super_kind(self) -> str:
        return "Image" if self.kind == "segmentation" else "Value"


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

    def param(self, key: str) -> Any:
        return dict(self.params)[key]

    def key(self, label: str, form: str) -> str:
        """The aggregate key of one label and form (value metrics: label "" and form "value")."""
        return dict(self.keys)[form].format(name=self.name, label=label, form=form)


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
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def output(self, slug: str) -> OutputSpec:
        return next(o for o in self.outputs if o.slug == slug)

    def aggregate_keys(self) -> list[str]:
        """Every path this declaration writes under ``aggregates`` (``group.key`` or ``key``, with CI
        siblings where declared)."""
        keys = []
        for metric in self.metrics:
            for _, _, key in metric_keys(metric):
                path = f"{metric.group}.{key}" if metric.group else key
                keys.append(path)
                if metric.bootstrap:
                    keys += [f"{path}_ci_low", f"{path}_ci_high"]
        return keys


def metric_keys(metric: MetricSpec) -> list[tuple[str, str, str]]:
    """(label, form, key) of every aggregate of one metric: per label and form for a segmentation
    metric (default key ``<name>_<label>_<form>``), one ``<name>`` for a case-level output metric."""
    if metric.metric in SEGMENTATION_METRICS:
        return [(label, form, metric.key(label, form)) for label in metric.labels for form in metric.aggregates]
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
                self.fail(key, "is required")
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


def _reference(table: _Table, kind: str) -> Reference:
    text = table.get("reference", str)
    if ":" in text:
        csv_file, _, column = text.partition(":")
        if not csv_file.endswith(".csv") or not column:
            table.fail("reference", f"{text!r} is neither a path pattern with {{case}} nor 'file.csv:column'")
        if kind == "segmentation":
            table.fail("reference", "a segmentation output needs a path pattern such as 'labels/{case}.mha'")
        return Reference(text, csv_file=csv_file, column=column)
    if text.count("{case}") != 1 or kind != "segmentation":
        what = "a path pattern with exactly one {case}" if kind == "segmentation" else "'file.csv:column'"
        table.fail("reference", f"{text!r} is not {what}")
    if Path(text).is_absolute() or ".." in Path(text).parts:
        table.fail("reference", f"{text!r} must be a relative path inside the ground truth")
    return Reference(text, pattern=text)


def _output(table: _Table) -> OutputSpec:
    slug = table.get("slug", str)
    if not SLUG.fullmatch(slug):
        table.fail("slug", f"{slug!r} is not a socket slug (lower-case letters, digits, '-')")
    kind = table.get("kind", str)
    if kind in RESERVED_KINDS:
        table.fail("kind", f"{kind!r} is not supported by this version (supported: {', '.join(OUTPUT_KINDS)})")
    if kind not in OUTPUT_KINDS:
        table.fail("kind", f"{kind!r} is not one of {', '.join(OUTPUT_KINDS + RESERVED_KINDS)}")
    default_path = f"images/{slug}" if kind == "segmentation" else f"{slug}.json"
    relative_path = table.get("relative_path", str, default_path)
    platform_kind = table.get("platform_kind", str, PLATFORM_KINDS[kind])
    reference = _reference(table, kind)
    missing = table.get("missing", str, "error")
    if missing not in MISSING_POLICIES:
        table.fail("missing", f"{missing!r} is not one of {', '.join(MISSING_POLICIES)}")
    if missing not in MISSING_BY_KIND[kind]:
        table.fail("missing", f"{missing!r} is not one of {', '.join(MISSING_BY_KIND[kind])} (for a {kind} output)")
    extra: dict[str, Any] = {}
    if reference.csv_file is not None:
        extra["blank"] = table.get("blank", str, "error", ("error", "skip"))
    if kind == "segmentation":
        labels = table.get("labels", dict)
        for label, value in labels.items():
            if not KEY.fullmatch(label):
                table.fail(f"labels.{label}", "a label name may hold letters, digits, '_' and '-' only")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                table.fail(f"labels.{label}", f"must be a positive integer voxel value, not {value!r}")
        if not labels:
            table.fail("labels", "needs at least one label")
        if len(set(labels.values())) != len(labels):
            table.fail("labels", "two labels share a voxel value")
        extra["labels"] = tuple(labels.items())
        extra["geometry"] = table.get("geometry", str, "error", GEOMETRY_POLICIES)
        extra["tolerance"] = table.get("tolerance", float, GEOMETRY_TOLERANCE)
        if not 0 <= extra["tolerance"] < 1:
            table.fail("tolerance", "must be in [0, 1) (relative and absolute)")
        extra["dimension"] = table.get("dimension", int, 3, (2, 3))
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
        for key in ("true_values", "false_values"):
            if key in table.data:
                extra[key] = tuple(text.lower() for text in table.strings(key))
        if set(extra.get("true_values", ())) & set(extra.get("false_values", ())):
            table.fail("false_values", "shares a spelling with true_values")
    elif kind == "choice":
        classes = table.strings("classes")
        if len(classes) < 2 or len(set(classes)) != len(classes):
            table.fail("classes", "needs at least two distinct classes")
        extra["classes"] = classes
    table.done()
    return OutputSpec(slug, kind, relative_path, platform_kind, reference, missing, **extra)


def _metric(table: _Table, outputs: dict[str, OutputSpec], earlier: Mapping[str, MetricSpec]) -> MetricSpec:
    """One ``[[metrics]]`` entry; ``earlier`` maps the aggregate paths of the metrics before it to them."""
    metric = table.get("metric", str)
    known = (*SEGMENTATION_METRICS, *VALUE_METRICS, COMBINED)
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
        allowed_kinds = ("segmentation",) if metric in SEGMENTATION_METRICS else VALUE_METRICS[metric]
        if output.kind not in allowed_kinds:
            kinds = " or ".join(allowed_kinds)
            table.fail("output", f"{metric} scores a {kinds} output; {slug!r} is a {output.kind}")
    labels: tuple[str, ...] = ()
    aggregates: tuple[str, ...] = ()
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
        if metric in ("hd95", "nsd") and output.dimension != 3:
            table.fail("metric", f"{metric} needs a 3D segmentation (output {slug!r} has dimension 2)")
    both_empty_defaults = {"dice": 1.0, "iou": 1.0, "hd95": 0.0, "nsd": 1.0}
    if metric in both_empty_defaults:
        params["both_empty"] = table.get("both_empty", (float, str), both_empty_defaults[metric])
        if isinstance(params["both_empty"], str) and params["both_empty"] != "exclude":
            table.fail("both_empty", f"must be a number or 'exclude', not {params['both_empty']!r}")
        params["mean_over"] = table.get("mean_over", str, "all", ("all", "present"))
    if metric in ("dice", "iou"):
        params["absent_everywhere"] = table.get("absent_everywhere", float, 1.0)
        params["volume"] = table.get("volume", str, "voxels", ("voxels", "mm3"))
    if metric == "hd95":
        params["one_empty"] = table.get("one_empty", (float, str), "diagonal")
        if isinstance(params["one_empty"], str) and params["one_empty"] != "diagonal":
            table.fail("one_empty", f"must be a number or 'diagonal', not {params['one_empty']!r}")
    if metric == "nsd":
        params["tolerance_mm"] = table.get("tolerance_mm", float)
        if params["tolerance_mm"] <= 0:
            table.fail("tolerance_mm", "must be positive")
        params["one_empty"] = table.get("one_empty", float, 0.0)
    if metric == "lesion_f1":
        params["iou_threshold"] = table.get("iou_threshold", float, 0.3)
        if not 0 <= params["iou_threshold"] < 1:
            table.fail("iou_threshold", "must be in [0, 1) (a match needs IoU strictly above it)")
        params["matching"] = table.get("matching", str, "greedy", ("greedy",))
        params["connectivity"] = table.get("connectivity", int, 26, (26,))
        params["no_lesions"] = table.get("no_lesions", float, 1.0)
    value_edges = catalogue.get(measures.VALUE_METRICS[metric]).edge_cases if metric in VALUE_METRICS else ()
    for edge in value_edges:  # the catalogue's edge-case parameters: a number, or "error"
        params[edge] = table.get(edge, (float, str), "error")
        if isinstance(params[edge], str) and params[edge] != "error":
            table.fail(edge, f"must be a number or 'error', not {params[edge]!r}")
    if metric == "ece":
        params["bins"] = table.get("bins", int, 10)
        if params["bins"] < 1:
            table.fail("bins", "must be at least 1")
    if metric in PROBABILITY_METRICS and output.range != (0.0, 1.0):
        table.fail("output", f"{metric} needs a probability: declare range = [0, 1] on output {slug!r}")
    group = table.get("group", str, None)
    if group is not None and not KEY.fullmatch(group):
        table.fail("group", f"{group!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")
    forms = aggregates or ("value",)
    default = "{name}_{label}_{form}" if metric in SEGMENTATION_METRICS else "{name}"
    raw_keys = table.get("key", (str, dict), default)
    templates = {form: raw_keys for form in forms} if isinstance(raw_keys, str) else raw_keys
    if set(templates) != set(forms):
        table.fail("key", f"a table of key templates needs exactly the forms {', '.join(forms)}")
    for form, template in templates.items():
        try:
            rendered = [str(template).format(name=name, label=label, form=form) for label in labels or ("",)]
        except (KeyError, IndexError, ValueError):
            table.fail("key", f"{template!r} may use only {{name}}, {{label}} and {{form}}")
        if not all(KEY.fullmatch(key) for key in rendered):
            table.fail("key", f"{template!r} gives a key with characters other than letters, digits, '_', '-'")
    table.done()
    keys = tuple((form, str(templates[form])) for form in forms)
    return MetricSpec(name, metric, slug, labels, aggregates, bootstrap, tuple(params.items()), group, keys)


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
        for key, value in [("default", default)] + [("choices", choice) for choice in choices or []]:
            if type(value) is not type(default):
                table.fail(key, f"{value!r} is not of the default's type ({type(default).__name__})")
            try:
                parse_data(_overridden(data, targets, value), top.file, check_options=False)
            except ConfigurationError as error:
                table.fail(key, f"{value!r} does not give a valid declaration ({error})")
        help_text = table.get("help", str, f"sets {', '.join(sets)}")
        table.done()
        options.append(OptionSpec(name, default, help_text, tuple(choices) if choices else None, targets, tuple(sets)))
    return tuple(options)


def with_options(declaration: Declaration, values: Mapping[str, Any]) -> Declaration:
    """The declaration with the option ``values`` in force (itself when all are the defaults)."""
    changed = [o for o in declaration.options if values.get(o.name, o.default) != o.default]
    if not changed:
        return declaration
    data: Mapping[str, Any] = declaration.raw
    for option in changed:
        data = _overridden(data, option.targets, values[option.name])
    return parse_data(data, declaration.source)


def parse(text: str, file: str) -> Declaration:
    """A validated declaration from TOML ``text``; ``file`` names it in error messages."""
    try:
        data = tomllib.loads(text)
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
    inputs = []
    for table in top.items("inputs"):
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
    cases = Cases(
        input=cases_table.get("input", str, input_slugs[0]),
        strip_suffixes=cases_table.strings("strip_suffixes", list(IMAGE_NAME_SUFFIXES)),
        strip=cases_table.strings("strip", []),
        id_column=cases_table.get("id_column", str, "case"),
    )
    if cases.input not in input_slugs:
        cases_table.fail("input", f"{cases.input!r} is not a declared input ({', '.join(input_slugs)})")
    cases_table.done()
    outputs: dict[str, OutputSpec] = {}
    for table in top.items("outputs"):
        output = _output(table)
        if output.slug in outputs or output.slug in input_slugs:
            table.fail("slug", f"{output.slug!r} is declared twice")
        outputs[output.slug] = output
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
    top.read.add("options")
    options = _options(top, data) if check_options and "options" in data else ()
    top.done()
    return Declaration(file, name, title, cases, tuple(inputs), tuple(outputs.values()), tuple(metrics),
                       leaderboard, resamples, seed, level, options, data)  # fmt: skip


def load(path: Path) -> Declaration:
    """The validated declaration in ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{path.name}: cannot be read ({error.__class__.__name__}).") from None
    return parse(text, path.name)
