"""The open interface: a declared metric computed by the organizer's own Python function (``metric = "python"``).

For a rule the catalogue lacks, a ``[[metrics]]`` entry names a function in a Python file kept beside the
declaration (``function = "rules.py:lesion_count_difference"``). Everything else stays declared and applies
as to a catalogue metric: the output and its missing policy, the aggregate forms and key templates, the
bootstrap, the groups, the edge value of a NaN, the limits and timeouts of the workers, the one-line errors,
the provenance record (the file's SHA-256). The README section "Your own metric in Python" documents it.

- ``over = "case"`` (the default): ``function(prediction, reference, context)`` per case, ``context`` a
  ``CaseContext``; on a segmentation output it runs in the worker that reads the case's images (numpy
  arrays, z y x), on a value output where the case is scored. Its values are then aggregated over the cases
  (``CASE_FORMS``; a bootstrap resamples the per-case values).
- ``over = "set"`` (value outputs): ``function(predictions, references, context)`` once on every scored
  case's value (numpy arrays in case order; probabilities: a cases x classes matrix; boxes / points: arrays
  of objects, each case's parsed answer and reference objects), ``context`` a ``SetContext``; a bootstrap
  calls it again on each resample's drawn cases.

It returns one number, or (``returns = ["a", "b"]``) a mapping with exactly those names, each then a
``{label}`` of the key templates; over the set also a text or a list of texts (written as returned, never
resampled). The code is the organizer's, loaded once per process from the
declaration's folder (never a participant's) and run with the evaluation's rights.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import inspect
import math
import numbers
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.declarative.tables import KEY, Table, type_of
from evaluation.errors import ConfigurationError, EvaluationError
from evaluation.metrics.bootstrap import drawn_cases

if TYPE_CHECKING:
    from evaluation.declarative.output_kinds import OutputSpec

PYTHON = "python"
OVER = ("case", "set")
CASE_FORMS = ("mean", "median")  # over the per-case values (NaN, "exclude": left out)
NAN_WORDS = {"case": ("error", "exclude"), "set": ("error",)}
SIGNATURES = {"case": ("prediction", "reference", "context"), "set": ("predictions", "references", "context"),
              "reader": ("context",)}  # fmt: skip
SCORED = ("segmentation", "values", "probabilities", "detection")  # the output kinds' ``scoring`` it may score


@dataclass(frozen=True, eq=False)
class CaseContext:
    """What a per-case function knows of its case beside the two values: the case id, the output's slug,
    and for a segmentation the voxel spacing and origin (mm, in the arrays' axis order z y x) and the
    declared labels (name -> voxel value); ``classes``: a choice or probabilities output's classes;
    ``options``: the declared options' values in force (``--set``), by name."""

    case: str
    output: str
    spacing: tuple[float, ...] | None = None
    origin: tuple[float, ...] | None = None
    labels: Mapping[str, Any] | None = None
    classes: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class SetContext:
    """What a whole-set function knows beside the arrays: the cases (in the arrays' order), the output's
    slug and classes, ``resample``: None for the observed set, else the bootstrap resample's index,
    ``options``: the declared options' values in force, by name; ``fields``: the frame record fields of
    listed stacks (``[cases] fields``), ``params``: the metric's ``params`` table; ``weights``: its declared
    ``sample_weights`` columns by name, each case's weight in the arrays' order; ``aggregates``: the values of
    the metrics declared before it on the same output, by aggregate path (``group.key`` in a group), computed on
    the same cases (a bootstrap resample: their value on that resample, NaN when not bootstrapped; a metric
    scored per group: none)."""

    cases: tuple[str, ...]
    output: str
    classes: tuple[str, ...] = ()
    resample: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # [cases] fields, per case in order
    params: Mapping[str, Any] = field(default_factory=dict)  # the metric's declared params (options may set them)
    weights: Mapping[str, np.ndarray] = field(default_factory=dict)  # sample_weights: column -> each case's weight
    aggregates: Mapping[str, float] = field(default_factory=dict)  # earlier metrics' values: ISIC's overall


@dataclass(frozen=True, eq=False)
class ReaderContext:
    """What a prediction-file phase's own reader (``[submission] reader``) knows: the file's name and size in
    bytes (nothing read yet; the engine found it and checked that it is a regular file in the input), the
    largest size accepted (``[submission] max_mb``), the case column and the columns the outputs read, the
    reference's cases (None: a check without the ground truth); ``text()`` opens it as UTF-8 text with universal
    newlines, ``data()`` reads its bytes (both safely, at most the size it had). It returns
    ``{case: {column: value}}`` (a number, a text or None: no value), or ``(cases, values)``: the cases and a
    numeric numpy matrix, a row per case and a column per ``columns`` (read as columns, no object per row; a
    case given twice: its last row), or raises a ``SubmissionError``."""

    file: str
    size: int
    max_mb: float
    id_column: str
    columns: tuple[str, ...]
    cases: tuple[str, ...] | None
    text: Callable[[], Any] = field(repr=False, default=lambda: None)
    data: Callable[[], bytes] = field(repr=False, default=lambda: b"")


@dataclass(frozen=True, eq=False)
class Function:
    """An organizer's function: ``path`` (absolute) and ``name``; ``shown``: the file as declared."""

    path: str
    name: str
    shown: str

    def load(self) -> Callable[..., Any]:
        return getattr(_module(self.path, self.shown), self.name)

    def problem(self, where: str, text: str) -> ConfigurationError:
        """The one-line error of a run: ``rules.py: lesion_count_difference: case X: problem``."""
        return ConfigurationError(f"{self.shown}: {self.name}: {where}: {text}")

    def call(self, where: str, *arguments: Any) -> Any:
        """The function's return; anything it raises is one line naming ``where`` (no traceback), but
        the worker's limits (a case's deadline, memory) stay theirs."""
        function = self.load()
        try:
            return function(*arguments)
        except (EvaluationError, MemoryError):
            raise
        except (Exception, SystemExit) as error:  # the organizer's code: any failure is one line
            raise self.problem(where, f"{type(error).__name__}: {error}") from None


_MODULES: dict[tuple[str, tuple[int, ...]], ModuleType] = {}


def _module(path: str, shown: str) -> ModuleType:
    """The module of ``path``, executed once per process and version of the file (``importlib.util.
    spec_from_file_location``): a process that evaluates again after the file changed (a replay, a batch),
    and the workers it forks (evaluation/runner.py), run the new code."""
    try:
        found = os.stat(path)
        version: tuple[int, ...] = (found.st_mtime_ns, found.st_size, found.st_ino)
    except OSError:
        version = ()
    key = (path, version)
    if key not in _MODULES:
        name = "declared_rules_" + path.encode().hex()  # (one name per path, the same in every process)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigurationError(f"{shown}: cannot be loaded as a Python module.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # (dataclasses and pickling look their module up there)
        try:
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as error:  # the organizer's code
            del sys.modules[name]
            raise ConfigurationError(f"{shown}: cannot be imported ({type(error).__name__}: {error}).") from None
        _MODULES[key] = module
    return _MODULES[key]


# -------------------------------------------------------------------------------------- declaration


def parse(
    table: Table, outputs: Mapping[str, OutputSpec], folder: str
) -> tuple[OutputSpec, tuple[str, ...], tuple[str, ...], dict[str, Any]]:
    """A ``metric = "python"`` entry's output, names (``returns``), aggregate forms and parameters
    (echoed in the settings): the function is loaded and its signature checked here, when the
    declaration loads."""
    slug = table.get("output", str)
    if slug not in outputs:
        table.fail("output", f"{slug!r} is not a declared output ({', '.join(outputs)})")
    output = outputs[slug]
    if output.type.scoring not in SCORED:
        table.fail("output", f"python scores a segmentation, number, boolean, choice, probabilities, boxes or "
                   f"points output; {slug!r} is a {output.kind}")  # fmt: skip
    over = table.get("over", str, "case", OVER)
    if over == "set" and output.type.image:
        table.fail("over", f"'set' needs a value output ({slug!r} is a segmentation: declare over = 'case')")
    text = table.get("function", str)
    function(table, text, folder, over)
    returns = table.strings("returns", [])
    if any(not KEY.fullmatch(name) for name in returns) or len(set(returns)) != len(returns):
        table.fail("returns", "must be distinct names of letters, digits, '_' and '-'")
    forms: tuple[str, ...] = ()
    if over == "case":  # [] : the per-case values only
        forms = table.strings("aggregates", ["mean"])
        if len(set(forms)) != len(forms) or not set(forms) <= set(CASE_FORMS):
            table.fail("aggregates", f"needs none or more of {', '.join(CASE_FORMS)}, each once")
    elif "aggregates" in table.data:
        table.fail("aggregates", "over = 'set' gives one value (its function sees every case at once)")
    nan = table.get("nan", (float, str), "error")
    if isinstance(nan, str) and nan not in NAN_WORDS[over]:
        table.fail("nan", f"must be a number or {' or '.join(map(repr, NAN_WORDS[over]))}, not {nan!r}")
    if isinstance(nan, float) and not math.isfinite(nan):
        table.fail("nan", f"must be a finite number, not {nan}")
    own = table.get("params", dict, {})
    if over == "case" and own:
        table.fail("params", "is given to a whole-set function (over = 'set')")
    for key, value in own.items():
        if not KEY.fullmatch(key) or not isinstance(value, (str, int, float, bool)):
            table.fail(f"params.{key}", "must be a string, number or boolean under a key of letters, digits, '_', '-'")
    params: dict[str, Any] = {"function": text, "over": over, **({"returns": list(returns)} if returns else {}),
                              "nan": nan, **({"params": dict(own)} if own else {})}  # fmt: skip
    return output, returns, forms, params


def function(table: Table, text: str, folder: str, over: str, key: str = "function") -> Function:
    """``file.py:name`` beside the declaration, loaded and its signature checked (``over``: "case", "set" or
    "reader"; ``key``: the declared key messages name)."""
    file, _, name = text.rpartition(":")
    if not file.endswith(".py") or not name.isidentifier():
        table.fail(key, f"{text!r} is not 'file.py:function' (a Python file beside the declaration)")
    if not folder:
        table.fail(key, "needs the declaration's folder (load the declaration from its file)")
    base = Path(folder).resolve()
    path = (base / file).resolve()
    if not path.is_relative_to(base):
        table.fail(key, f"{file!r} leaves the declaration's folder")
    if not path.is_file():
        table.fail(key, f"{file} is not a file beside the declaration")
    try:
        module = _module(str(path), file)
    except ConfigurationError as error:
        table.fail(key, str(error).rstrip("."))
    found = getattr(module, name, None)
    if not callable(found):
        table.fail(key, f"{file} has no function {name!r}")
    wanted = SIGNATURES[over]
    try:
        inspect.signature(found).bind(*wanted)
    except TypeError:
        during = f" (over = {over!r})" if over in OVER else ""
        table.fail(key, f"{file}: {name} must accept ({', '.join(wanted)}){during}")
    except ValueError:
        pass  # a builtin without a signature: its call says
    return Function(str(path), name, file)


@dataclass(frozen=True, eq=False)
class ReadColumns:
    """What a reader returned as columns: its ``cases`` and ``values``, a float matrix with a row per case and a
    column per ``columns`` (``ReaderContext.columns``)."""

    cases: tuple[str, ...]
    values: np.ndarray
    columns: tuple[str, ...]

    def rows(self) -> dict[str, dict[str, Any]]:
        """Each case's row, as a reader returning ``{case: {column: value}}`` would give it."""
        return {case: dict(zip(self.columns, row, strict=True))
                for case, row in zip(self.cases, self.values.tolist(), strict=True)}  # fmt: skip


def read_rows(text: str, folder: str, context: ReaderContext) -> dict[str, dict[str, Any]] | ReadColumns:
    """A prediction-file phase's own reader (``[submission] reader``) run on ``context``: each case's row, checked
    as a mapping of mappings, or its columns (``ReadColumns``; anything else is the organizer's one-line error);
    the reader's ``SubmissionError`` stays the participant's."""
    fn = _function_at(text, folder)
    rows = fn.call(f"the prediction file {context.file}", context)
    if _is_columns(rows, len(context.columns)):
        return ReadColumns(tuple(map(str, rows[0])), np.asarray(rows[1], dtype=np.float64), context.columns)
    if not isinstance(rows, Mapping) or not all(isinstance(row, Mapping) for row in rows.values()):
        raise fn.problem(f"the prediction file {context.file}", f"returned {type_of(rows)}, not {{case: {{column: "
                         "value}} or (cases, a numeric matrix with a column per column read)")  # fmt: skip
    return {str(case): dict(row) for case, row in rows.items()}


def _is_columns(found: Any, width: int) -> bool:
    """Whether a reader returned ``(cases, values)``: a sequence of cases and a numeric matrix of a row each and
    ``width`` columns."""
    if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[1], np.ndarray)):
        return False
    cases, values = found
    return (isinstance(cases, Sequence) and not isinstance(cases, str) and values.dtype.kind in "fiu"
            and values.shape == (len(cases), width))  # fmt: skip


def function_of(metric_params: Mapping[str, Any], folder: str) -> Function:
    """The function of a parsed python metric (validated when its declaration loaded)."""
    return _function_at(metric_params["function"], folder)


@cache
def _function_at(text: str, folder: str) -> Function:
    """``file.py:name`` of ``folder`` (resolved once per process: each case's calls name it)."""
    file, _, name = text.rpartition(":")
    return Function(str((Path(folder).resolve() / file).resolve()), name, file)


def code_files(metrics: Sequence[Any], folder: str, reader: str = "") -> tuple[Path, ...]:
    """The Python files a declaration's metrics and ``reader`` name (the provenance record hashes them)."""
    found = {function_of(dict(m.params), folder).path for m in metrics if m.metric == PYTHON}
    found |= {_function_at(reader, folder).path} if reader else set()
    return tuple(Path(path) for path in sorted(found))


def default_keys(over: str, returns: tuple[str, ...]) -> str:
    """The default aggregate key template: per case with the form, over the set without."""
    parts = ["{name}", *(["{label}"] if returns else []), *(["{form}"] if over == "case" else [])]
    return "_".join(parts)


def default_case_key(returns: tuple[str, ...]) -> str:
    return "{name}_{label}" if returns else "{name}"


# -------------------------------------------------------------------------------------------- values


def returned(
    fn: Function,
    where: str,
    value: Any,
    names: tuple[str, ...],
    nan: float | str,
    per_case: bool = False,
    flags: bool = False,
    texts: bool = False,
) -> dict[str, Any]:
    """A return checked: one number (or, with ``names``, a mapping of exactly those) per name ("" for one
    number); NaN becomes the declared ``nan`` value ("exclude": NaN, left out; "error": the one-line error).
    An integer stays an integer (a count is written as one); per case, None is no value (the case's entry
    leaves the key out, its aggregates leave the case out); with ``flags`` (values written per case only,
    never aggregated) a boolean stays a boolean; with ``texts`` (a whole-set value, not resampled) a text or a
    list of texts stays one (ISIC's categories without positives)."""
    if names:
        if not isinstance(value, Mapping):
            raise fn.problem(where, f"returned {type_of(value)}, not a mapping of {', '.join(names)} (returns)")
        if set(value) != set(names):
            raise fn.problem(where, f"returned the names {', '.join(map(str, value))}, not {', '.join(names)} "
                             "(returns)")  # fmt: skip
        pairs = [(name, value[name]) for name in names]
    else:
        pairs = [("", value)]
    found: dict[str, Any] = {}
    for name, number in pairs:
        named = f"{name!r}: " if name else ""
        if number is None and per_case:
            found[name] = None
            continue
        if isinstance(number, (bool, np.bool_)) and flags:
            found[name] = bool(number)
            continue
        if texts and (isinstance(number, str) or (isinstance(number, (list, tuple))
                                                   and all(isinstance(item, str) for item in number))):  # fmt: skip
            found[name] = number if isinstance(number, str) else list(number)
            continue
        if isinstance(number, (bool, np.bool_)) or not isinstance(number, numbers.Real):
            shown = type(number).__name__
            raise fn.problem(where, f"returned {named}{shown} {str(number)[:40]!r}, not a number")
        if isinstance(number, numbers.Integral):
            found[name] = int(number)
            continue
        number = float(number)
        if math.isnan(number):
            if nan == "error":
                raise fn.problem(where, f"returned {named}NaN (declare nan = <number> or 'exclude' for a value)")
            number = math.nan if isinstance(nan, str) else float(nan)
        elif not math.isfinite(number):
            raise fn.problem(where, f"returned {named}{number}, not a finite number")
        found[name] = number
    return found


@dataclass(frozen=True, eq=False)
class CaseCall:
    """One per-case python metric of one output, as a worker runs it."""

    metric: str
    function: Function
    names: tuple[str, ...]
    nan: float | str
    options: tuple[tuple[str, Any], ...] = ()
    flags: bool = False  # its values are written per case only (aggregates = []): a boolean is kept

    def run(self, case: str, prediction: Any, reference: Any, context: CaseContext) -> dict[str, float]:
        """The function on the case's values (read-only arrays, copies of anything else: what it changes
        changes nothing of the evaluation)."""
        where = f"case {case}"
        context = dataclasses.replace(context, options=dict(self.options))
        found = self.function.call(where, _untouchable(prediction), _untouchable(reference), context)
        return returned(self.function, where, found, self.names, self.nan, per_case=True, flags=self.flags)


def _untouchable(value: Any) -> Any:
    """An array of numbers as a read-only view; an array of objects or a tuple anew, of untouchable items;
    anything else a deep copy."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        view = value.view()
        view.flags.writeable = False
        return view
    if isinstance(value, np.ndarray):
        items = np.empty(value.shape, dtype=object)
        for index, item in enumerate(value.flat):
            items.flat[index] = _untouchable(item)
        return items
    if isinstance(value, tuple):
        return tuple(_untouchable(item) for item in value)
    return copy.deepcopy(value)


@dataclass(frozen=True, eq=False)
class ValueCase:
    """A per-case python metric of a value output with the case's value and reference (``CasePayload``)."""

    call: CaseCall
    prediction: Any
    reference: Any
    context: CaseContext

    def run(self) -> dict[str, float]:
        return self.call.run(self.context.case, self.prediction, self.reference, self.context)


def case_calls(
    metrics: Sequence[Any], output: str, folder: str, options: Mapping[str, Any] | None = None
) -> tuple[CaseCall, ...]:
    """The per-case python metrics of ``output`` (``options``: the declared options' values in force)."""
    given = tuple((options or {}).items())
    return tuple(
        CaseCall(m.name, function_of(dict(m.params), folder), tuple(m.labels), m.param("nan"), given, not m.aggregates)
        for m in metrics
        if m.metric == PYTHON and m.output == output and m.param("over") == "case"
    )


def value_cases(
    metrics: Sequence[Any],
    output: OutputSpec,
    case: str,
    values: Mapping[str, Any],
    truth: Any,
    folder: str,
    options: Mapping[str, Any] | None = None,
) -> tuple[ValueCase, ...]:
    """A scored value's per-case python metrics (none when the case's value is excluded or unscored)."""
    if output.slug not in values:
        return ()
    context = CaseContext(case, output.slug, classes=output.classes)
    calls = case_calls(metrics, output.slug, folder, options)
    return tuple(ValueCase(c, values[output.slug], truth, context) for c in calls)


# -------------------------------------------------------------------------------------- aggregation


def case_aggregates(
    metric: Any, per: dict[str, np.ndarray], weights: np.ndarray | None
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The declared forms of per-case values (label -> the scored cases' values, NaN left out); with
    ``weights`` one value per resample."""
    values: dict[str, float] = {}
    resamples: dict[str, np.ndarray] = {}
    for label in metric.labels or ("",):
        column = per[label]
        for form in metric.aggregates:
            key = metric.key(label, form)
            values[key] = _form(form, column)
            boot = np.array([np.nan])
            if weights is not None:
                boot = np.array([_form(form, column[rows]) for rows in drawn_cases(weights)], dtype=float)
            resamples[key] = boot
    return values, resamples


def _form(form: str, column: np.ndarray) -> float:
    kept = column[np.isfinite(column)]
    if not kept.size:
        return math.nan
    return float(kept.mean() if form == "mean" else np.median(kept))


def set_value(
    metric: Any, fn: Function, predictions: np.ndarray, references: np.ndarray, context: SetContext, nan: float | str
) -> dict[str, float]:
    """The whole-set function on these cases (label -> value)."""
    where = "the set of cases" if context.resample is None else f"bootstrap resample {context.resample}"
    found = fn.call(where, _untouchable(predictions), _untouchable(references), context)
    return returned(fn, where, found, tuple(metric.labels), nan, texts=context.resample is None)


def set_aggregates(
    metric: Any,
    fn: Function,
    predictions: np.ndarray,
    references: np.ndarray,
    context: SetContext,
    weights: np.ndarray | None,
    earlier: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A whole-set metric's values (``nan`` as declared) and, with ``weights``, one value per resample of
    its drawn cases (NaN stays NaN there: left out of the percentile interval); ``earlier``: the resamples of
    ``context.aggregates`` (a single NaN: not bootstrapped)."""
    labels = metric.labels or ("",)
    found = set_value(metric, fn, predictions, references, context, metric.param("nan"))
    values = {metric.key(label, "value"): found[label] for label in labels}
    resamples = {metric.key(label, "value"): np.array([np.nan]) for label in labels}
    if weights is not None:
        drawn = []
        for index, rows in enumerate(drawn_cases(weights)):
            fields = {name: tuple(np.asarray(values)[rows]) for name, values in context.fields.items()}
            drawn_earlier = {path: float(boot[index]) if len(boot) > index else math.nan
                             for path, boot in (earlier or {}).items()}  # fmt: skip
            own = replace(context, cases=tuple(np.asarray(context.cases)[rows]), resample=index, fields=fields,
                          aggregates=drawn_earlier)  # fmt: skip
            drawn.append(set_value(metric, fn, predictions[rows], references[rows], own, "exclude"))
        resamples = {metric.key(label, "value"): np.array([d[label] for d in drawn], float) for label in labels}
    return values, resamples
