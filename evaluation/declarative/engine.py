"""The engine of declared challenges: a ``Challenge`` built from a parsed declaration (``schema``).

- ``load_reference`` lists the cases (from the first output whose reference lists them) and reads
  every reference: path patterns resolve to one file per case (``{stem}`` / ``.*`` patterns case by
  case), CSV columns to one value per case (c_index: with the ``event`` column), boxes / points
  references to one JSON file per image (``platform.detections``), all checked;
- ``prepare`` reads predictions.json once and matches jobs to cases by their input image names
  (``Challenge.jobs_by_case``), parses value outputs (``platform.sockets``; boxes and points:
  ``platform.detections``; class probabilities: ``_probabilities``) and applies each output's missing policy;
- a prediction-file phase (``[submission] kind = "csv"``): ``prepare`` reads the participant's one CSV
  instead (``platform.prediction_file``: a row per case, each value output one column, a probabilities
  output one column per class), checks each cell as a job's value would be checked and applies the
  same missing policies (no row, a blank cell, a row of blank class cells);
- ``score_case`` (a worker) reads each label image pair once (``platform.images.read_label_pair``:
  the HECKTOR geometry rules; "nonzero" 2D masks: ``read_nonzero_mask``, same size in pixels) and
  reduces it with ``metrics.segmentation.summarise_label_maps`` (the scoring function HECKTOR 2026
  shares) to small numbers per label, only those its metrics request: voxel counts, HD95 / HD /
  MASD / NSD from one surface computation, volume differences, lesion TP / FP / FN per IoU
  threshold and matching, panoptic quality;
- ``aggregate`` turns those numbers into every declared metric, per case and over cases, with
  percentile bootstrap CIs over cases (the numbers are resampled, never the images; detection
  metrics resample the images' parsed objects and match them again), through the
  adapters of ``measures`` onto the metric catalogue (``evaluation.metrics``), laid out as the
  declaration's ``[report]`` table says.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import json
import math
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import SimpleITK as sitk

from evaluation.challenges.base import CaseTask, Challenge, Checked, Option, Phase, Prepared, input_image
from evaluation.declarative import measures
from evaluation.declarative.schema import (
    BINARY_REFERENCE_METRICS,
    COMBINED,
    COUNT_FORMS,
    NONZERO,
    OBJECT_KINDS,
    SEGMENTATION_METRICS,
    SURVIVAL_MISSING,
    Cases,
    Declaration,
    MetricSpec,
    OutputSpec,
    load,
    metric_keys,
    with_options,
)
from evaluation.errors import ConfigurationError, EvaluationError, SubmissionError
from evaluation.metrics.bootstrap import percentile_interval, resample_weights
from evaluation.metrics.detection import ImageDetections
from evaluation.metrics.segmentation import CaseSegmentation, LabelRequest, summarise_label_maps
from evaluation.platform.detections import parse_detections, parse_points
from evaluation.platform.files import read_bytes
from evaluation.platform.images import (
    read_input_image,
    read_label_pair,
    read_nonzero_mask,
    read_submitted_labels,
    same_size,
)
from evaluation.platform.matching import stem
from evaluation.platform.prediction_file import PredictionTable, find_prediction_file, read_prediction_table, shown
from evaluation.platform.predictions import Job, Socket
from evaluation.platform.sockets import finite_number, image_output_file, parse_json_bytes, read_json_output

NEEDS_TRUTH_ROWS = "which cases the test set holds (a case without a row, a row for an unknown case)"
MISCLASSIFIED = "<missing>"  # a class no reference holds: a missing answer is always wrong


# ------------------------------------------------------------------------------ per-case scoring


@dataclass(frozen=True)
class SegmentationTask:
    """One segmentation output of one case, as a worker needs it."""

    slug: str
    reference: Path
    prediction: Path | None  # None: the empty-mask policy of a missing output
    labels: tuple[tuple[str, int], ...]
    geometry: str
    tolerance: float
    dimension: int
    requests: tuple[tuple[str, LabelRequest], ...]  # per label: only the numbers its metrics need
    nonzero: bool = False  # a 2D mask where any non-zero pixel is the one label
    named: str = ""  # the case as messages name it ("image a.png")
    noun: str = ""  # the output as messages name it ("mask")
    shown: str = ""  # the reference's path in the ground truth, for the organizer's messages
    grid: str = "reference grid"  # how messages name the grid the prediction must share
    hint: str = ""  # ends the message of a prediction of another size (how to ask for resampling)


@dataclass(frozen=True)
class CasePayload:
    """What a worker gets: segmentations to score, parsed values (after the missing policies), and
    which outputs the participant submitted."""

    segmentations: tuple[SegmentationTask, ...]
    values: Mapping[str, Any]
    submitted: Mapping[str, bool]


@dataclass(frozen=True)
class CaseResult:
    segmentations: Mapping[str, CaseSegmentation]
    values: Mapping[str, Any]
    submitted: Mapping[str, bool]


def submitted_labels(
    output: SegmentationTask | OutputSpec, path: Path, grid: sitk.Image | None, case: str, hint: str = ""
) -> tuple[sitk.Image, np.ndarray]:
    """The submitted label image of ``output`` as ``platform.images.read_submitted_labels`` reads it."""
    return read_submitted_labels(
        path, grid, case, [value for _, value in output.labels], what=output.noun or f"'{output.slug}' segmentation",
        dimension=output.dimension, policy=output.geometry, tolerance=output.tolerance, grid_name=output.grid,
        hint=hint,
    )  # fmt: skip


def score_segmentation(task: SegmentationTask, case: str) -> CaseSegmentation:
    """Read the reference and prediction once, check them, and compute every requested number
    (``metrics.segmentation.summarise_label_maps``); a 2D non-zero mask gives voxel counts only."""
    what = task.noun or f"'{task.slug}' segmentation"
    if task.nonzero:
        named = task.named or case
        prediction = None
        if task.prediction is not None:
            prediction = read_nonzero_mask(task.prediction, case, "predicted", named, what)
        reference = read_nonzero_mask(task.reference, case, "reference", named, what, task.shown)
        prediction = np.zeros_like(reference) if prediction is None else prediction
        same_size(prediction, reference, case, named, what)
        return summarise_label_maps(reference, prediction, (1.0, 1.0), dict(task.requests))
    pair = read_label_pair(
        task.reference, task.prediction, case, [value for _, value in task.labels], what=what,
        dimension=task.dimension, policy=task.geometry, tolerance=task.tolerance, grid_name=task.grid,
        hint=task.hint, fix=f"; replace {task.shown} in the phase's ground truth" if task.shown else "",
    )  # fmt: skip
    return summarise_label_maps(pair.reference, pair.prediction, pair.spacing, dict(task.requests))


# ------------------------------------------------------------------------------------- reference


@dataclass(frozen=True)
class DeclaredReference:
    """The cases (sorted) and, per output, the reference file or value of every case."""

    cases: tuple[str, ...]
    files: Mapping[str, Mapping[str, Path]]
    values: Mapping[str, Mapping[str, Any]]
    root: Path  # the ground-truth folder
    events: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)  # c_index: output -> case -> event


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
    whose = f"The {cases.ground_truth_name} ground truth" if cases.ground_truth_name else "The ground truth"
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


def _csv_rows(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and the rows of a UTF-8 CSV (a BOM allowed, blank lines skipped), strictly: no
    quote left open, every row as many cells as the header (a short row is not a blank cell); each
    row with its line (1 = the header; a row with a quoted line break: its last line)."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise EmptyDataError()
            rows = []
            for cells in reader:
                if cells and len(cells) != len(header):
                    raise ParserError()
                if cells:
                    rows.append((reader.line_num, dict(zip(header, cells, strict=True))))
        except (EmptyDataError, ParserError):
            raise
        except csv.Error:  # the csv module's own: a quote left open
            raise ParserError() from None
    return header, rows


def _csv_column(ground_truth: Path, file: str, column: str, declaration: Declaration, binary: bool) -> dict[str, str]:
    """One column of a CSV reference by case (stripped)."""
    cells = _csv_cells(ground_truth, file, (column,), declaration, binary)
    return {case: texts[0] for case, (_, texts) in cells.items()}


def _csv_cells(
    ground_truth: Path, file: str, columns: tuple[str, ...], declaration: Declaration, binary: bool
) -> dict[str, tuple[int, tuple[str, ...]]]:
    """The cells of ``columns`` of a CSV reference (stripped) by case, with the row's line; the file
    must hold every column the declaration reads from it (all absent ones named at once)."""
    path, cases = ground_truth / file, declaration.cases
    id_column = cases.id_column
    named = f"The {cases.ground_truth_name} ground truth" if cases.ground_truth_name else "The ground truth"
    if not path.is_file():
        raise ConfigurationError(f"{named} has no {file}.")
    try:
        header, rows = _csv_rows(path)
    except (UnicodeDecodeError, csv.Error) as error:
        what = (
            f"{named} {file} cannot be parsed as UTF-8 CSV"
            if cases.ground_truth_name
            else f"{file} must be UTF-8 CSV with columns {','.join((id_column, *columns))}"
            f"{' and 0/1 labels' if binary else ''}"
        )
        raise ConfigurationError(f"{what} ({type(error).__name__}): fix it in the phase's ground truth.") from None
    read = [column for o in declaration.outputs for ref in (o.reference, o.event) if ref and ref.csv_file == file
            for column in ref.read_columns]  # fmt: skip
    absent = [c for c in dict.fromkeys((id_column, *read)) if c not in header]
    if absent:
        raise ConfigurationError(f"{file} lacks the column(s) {', '.join(absent)}.")
    values: dict[str, tuple[int, tuple[str, ...]]] = {}
    for line, row in rows:
        case = row[id_column].strip()
        if case in values:
            raise ConfigurationError(f"{file} lists case {case} twice.")
        values[case] = (line, tuple(row[column].strip() for column in columns))
    return values


def _one_hot(ground_truth: Path, output: OutputSpec, declaration: Declaration) -> dict[str, str | None]:
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
    found: dict[str, str | None] = {}
    for case, (line, cells) in _csv_cells(ground_truth, file, ref.read_columns, declaration, True).items():
        where, who = f"Line {line} of {source}", f"{cases.word or 'case'} {case}"
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


def _reference_value(text: str, output: OutputSpec, binary: bool, case: str, where: str) -> Any:
    """A CSV cell as the output's kind; problems are the organizer's (never echo the value)."""
    lowered = text.lower()
    if output.kind == "boolean":
        if lowered not in output.true_values + output.false_values:
            spellings = "/".join(output.true_values + output.false_values)
            raise ConfigurationError(f"{where}: the value of case {case} is not a boolean ({spellings}).")
        return lowered in output.true_values
    if output.kind in ("choice", "probabilities"):
        if text not in output.classes:
            raise ConfigurationError(f"{where}: the value of case {case} is not one of the declared classes.")
        return text
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or (binary and number not in (0.0, 1.0)):
        wanted = "0 or 1 (the metrics of this output need a binary reference)" if binary else "a finite number"
        raise ConfigurationError(f"{where}: the value of case {case} is not {wanted}.")
    return number


def _binary(declaration: Declaration, output: OutputSpec) -> bool:
    return output.kind == "number" and any(
        m.output == output.slug and m.metric in BINARY_REFERENCE_METRICS for m in declaration.metrics
    )


def load_declared_reference(ground_truth: Path, declaration: Declaration) -> DeclaredReference:
    """Every output's reference for the cases of the first output whose reference lists cases (a
    ``{case}`` pattern or a CSV column): the same cases everywhere; ``{stem}`` / ``.*`` patterns are
    looked up case by case."""
    files: dict[str, dict[str, Path]] = {}
    texts: dict[str, dict[str, str]] = {}
    classes: dict[str, dict[str, str | None]] = {}  # one-hot references: the class of each case (None: blank)
    listing = [output for output in declaration.outputs if not output.reference.per_case]
    for output in listing:
        ref = output.reference
        if ref.lists_suffixes:
            files[output.slug] = _listed_cases(ground_truth, output, declaration.cases)
        elif ref.pattern is not None:
            files[output.slug] = _pattern_cases(ground_truth, ref.pattern)
        elif ref.one_hot:
            classes[output.slug] = _one_hot(ground_truth, output, declaration)
        else:
            texts[output.slug] = _csv_column(
                ground_truth, ref.csv_file, ref.column, declaration, _binary(declaration, output)
            )
    first = listing[0]
    cases = tuple(sorted(files.get(first.slug) or texts.get(first.slug) or classes.get(first.slug) or {}))
    if not cases:
        raise ConfigurationError(f"The ground truth holds no case for {first.reference.text}.")
    for output in declaration.outputs:
        if output.reference.per_case:
            files[output.slug] = _per_case_files(ground_truth, output, cases)
    values: dict[str, dict[str, Any]] = {}
    for output in declaration.outputs:
        found = files.get(output.slug) or texts.get(output.slug) or classes.get(output.slug) or {}
        extra, lacking = sorted(set(found) - set(cases)), [c for c in cases if c not in found]
        if extra or lacking:
            which = f"has no reference for case {lacking[0]}" if lacking else f"has case {extra[0]}"
            raise ConfigurationError(
                f"The ground truth of output '{output.slug}' ({output.reference.text}) {which}, unlike "
                f"{first.reference.text}: every output needs a reference for the same cases."
            )
        if output.slug in texts:
            binary = _binary(declaration, output)
            values[output.slug] = {
                c: _reference_value(texts[output.slug][c], output, binary, c, output.reference.text)
                for c in cases
                if texts[output.slug][c].lower() not in output.blank_values or output.blank == "error"
            }
        if output.slug in classes:
            values[output.slug] = {c: classes[output.slug][c] for c in cases if classes[output.slug][c] is not None}
    if all(o.slug in texts or o.slug in classes for o in declaration.outputs):  # a case blank (skipped) everywhere
        cases = tuple(c for c in cases if any(c in found for found in values.values()))
        if not cases:
            raise ConfigurationError(f"The ground truth holds no case for {first.reference.text}.")
    events = {o.slug: _events(ground_truth, declaration, o, values[o.slug]) for o in declaration.outputs if o.event}
    for output in declaration.outputs:
        if output.kind in OBJECT_KINDS:
            values[output.slug] = {c: _reference_objects(files[output.slug][c], c, output.kind) for c in cases}
    return DeclaredReference(cases, files, values, ground_truth, events)


def _reference_objects(path: Path, case: str, kind: str) -> np.ndarray:
    """A case's reference boxes (n, 4) or points (n, 3) from its JSON file (the platform's JSON, or
    [[x1, y1, x2, y2], ...] / [[x, y(, z)], ...]); a malformed file is the organizer's, named without its content."""
    parse = parse_detections if kind == "boxes" else parse_points
    try:
        document = parse_json_bytes(read_bytes(path, f"reference {kind}", case), f"reference {kind}", case)
        return parse(document, case, scored=False)[0]
    except SubmissionError as error:
        raise ConfigurationError(f"The reference {kind} of case {case} ({path.name}): {error}") from None


def _events(ground_truth: Path, declaration: Declaration, output: OutputSpec, times: Mapping[str, Any]) -> dict:
    """The event indicator of every case with a time (c_index's censoring), spelled as a boolean reference."""
    event = output.event
    texts = _csv_column(ground_truth, event.csv_file, event.column, declaration, True)
    found = {}
    for case in times:
        lowered = texts.get(case, "").lower()
        if lowered not in output.true_values + output.false_values:
            spellings = "/".join(output.true_values + output.false_values)
            raise ConfigurationError(f"{event.text}: the event of case {case} is not a boolean ({spellings}).")
        found[case] = lowered in output.true_values
    return found


# ------------------------------------------------------------------------------------- challenge


def _phase(declaration: Declaration) -> Phase:
    """The phase settings; a prediction-file phase has no sockets (the platform's "CSV" submission kind)."""
    board = declaration.leaderboard
    csv_phase = declaration.submission.csv
    return Phase(
        inputs=tuple(Socket(i.slug, i.relative_path, i.kind, "Image") for i in declaration.inputs),
        outputs=()
        if csv_phase
        else tuple(Socket(o.slug, o.relative_path, o.platform_kind, o.super_kind) for o in declaration.outputs),
        score_title=board.title,
        score_jsonpath=board.score,
        score_default_sort=board.sort,
        score_decimal_places=board.decimal_places,
        extra_results_columns=tuple(
            {
                "title": c.title,
                "path": c.path,
                "order": c.order,
                **({"exclude_from_ranking": True} if c.exclude_from_ranking else {}),
            }
            for c in board.columns
        ),
        scoring_method_choice=board.scoring_method,
        prediction_file=csv_phase,
    )


def _options(declaration: Declaration) -> tuple[Option, ...]:
    """The declared options, and the bootstrap's seed and resamples when a metric is bootstrapped."""
    bootstrap = (
        Option("seed", declaration.seed, "bootstrap seed (numpy.random.default_rng)"),
        Option("bootstrap_resamples", declaration.resamples, "bootstrap resamples of the cases for the CIs"),
    )
    declared = tuple(Option(o.name, o.default, o.help, o.choices) for o in declaration.options)
    return declared + bootstrap if any(m.bootstrap for m in declaration.metrics) else declared


def _resample_hint(declaration: Declaration, output: OutputSpec) -> str:
    """How a participant's size message says to resample: the option that sets this output's
    geometry to "nearest", if one does (" (or evaluate with --set resample=nearest)")."""
    index = declaration.outputs.index(output)
    for option in declaration.options:
        if ("outputs", index, "geometry") in option.targets:
            choice = next((c for c in option.choices or () if option.declared(c) == "nearest"), None)
            if choice is not None:
                return f" (or evaluate with --set {option.name}={choice})"
    return ""


def _request(metrics: Sequence[MetricSpec], label: str, value: int | str) -> LabelRequest:
    """What the ``metrics`` (of one output) need of ``label`` beyond its voxel counts."""
    mine = [m for m in metrics if label in m.labels]

    def thresholds(metric: str, matching: str | None = None) -> tuple[float, ...]:
        return tuple(m.param("iou_threshold") for m in mine
                     if m.metric == metric and (matching is None or m.param("matching") == matching))  # fmt: skip

    return LabelRequest(
        value=1 if value == NONZERO else int(value),
        hd95=any(m.metric == "hd95" for m in mine),
        hausdorff=any(m.metric == "hausdorff" for m in mine),
        masd=any(m.metric == "masd" for m in mine),
        nsd=tuple(m.param("tolerance_mm") for m in mine if m.metric == "nsd"),
        lesions=thresholds("lesion_f1", "greedy"),
        hungarian=thresholds("lesion_f1", "hungarian"),
        panoptic=thresholds("panoptic_quality"),
        volumes=tuple(_volume_key(m) for m in mine if m.metric == "volume_difference"),
    )


def segmentation_task(
    declaration: Declaration, output: OutputSpec, case: str, reference: Path, shown: str, prediction: Path | None
) -> SegmentationTask:
    """What a worker needs to score ``output`` of one case: only the numbers the metrics ask for."""
    metrics = [m for m in declaration.metrics if m.output == output.slug and dict(m.params).get("compute", True)]
    return SegmentationTask(
        slug=output.slug, reference=reference, prediction=prediction, labels=output.labels,
        geometry=output.geometry, tolerance=output.tolerance, dimension=output.dimension,
        nonzero=output.nonzero, named=declaration.cases.named(case), noun=output.noun, shown=shown,
        grid=output.grid, hint=_resample_hint(declaration, output) if output.geometry == "error" else "",
        requests=tuple((name, _request(metrics, name, value)) for name, value in output.labels),
    )  # fmt: skip


class DeclaredChallenge(Challenge):
    """A challenge defined by a declaration: ``DeclaredChallenge(declaration)``, or a subclass with
    the class attribute ``declaration`` (how the registry exposes packaged declarations)."""

    declaration: ClassVar[Declaration]

    def __init__(self, declaration: Declaration | None = None) -> None:
        if declaration is not None:
            self.declaration = declaration  # type: ignore[misc]
            self.name, self.title = declaration.name, declaration.title  # type: ignore[misc]
            self.phase, self.options = _phase(declaration), _options(declaration)  # type: ignore[misc]
            self.cases_in_process = _in_process(declaration)  # type: ignore[misc]

    def case_of_job(self, job: Job) -> str:
        cases = self.declaration.cases
        return strip_marker(stem(job.input_name(cases.input), cases.strip_suffixes), cases.strip)

    def job_inputs(self, case: str) -> dict[Socket, str]:
        names = {i.slug: i.name.replace("{case}", case) for i in self.declaration.inputs}
        return {socket: names[socket.slug] for socket in self.phase.inputs}

    def in_force(self, settings: Mapping[str, Any]) -> Declaration:
        """The declaration with the declared options of ``settings`` applied."""
        return with_options(self.declaration, settings)

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> DeclaredReference:
        if settings.get("bootstrap_resamples", 1) < 1:
            raise ConfigurationError("Option bootstrap_resamples must be at least 1.")
        return load_declared_reference(ground_truth, self.in_force(settings))

    def _value(self, output: OutputSpec, raw: Any, case: str, named: str, declaration: Declaration) -> Any:
        what = f"The {output.noun or f'output {output.slug!r}'} of {named}"
        if output.kind == "number":
            number = finite_number(raw, what, case)
            if number < 0 and _predicted_time(declaration, output):
                unit = f" {output.unit}" if output.unit else ""
                raise SubmissionError(f"{what} is {number:g}{unit}; a predicted time cannot be negative.", case)
            if output.range is not None and not output.range[0] <= number <= output.range[1]:
                low, high = output.range
                raise SubmissionError(f"{what} is {number:g}, outside [{low:g}, {high:g}].", case)
            return number
        if output.kind in OBJECT_KINDS:
            return (parse_detections if output.kind == "boxes" else parse_points)(raw, case)
        if output.kind == "probabilities":
            return _probabilities(output, raw, case, what)
        if output.kind == "boolean":
            if not isinstance(raw, bool):
                raise SubmissionError(f"{what} is not a JSON boolean (true or false).", case)
            return raw
        if not isinstance(raw, str) or raw not in output.classes:
            raise SubmissionError(f"{what} is not one of the strings {', '.join(output.classes)}.", case)
        return raw

    def _missing_value(self, output: OutputSpec, truth: Any, case: str) -> Any:
        if output.missing == "empty":  # an image without detections: its reference objects are false negatives
            return (parse_detections if output.kind == "boxes" else parse_points)([], case)
        if output.kind == "probabilities":  # uniform, or all mass on the first declared class that is not the truth
            if output.missing == "uniform":
                return dict.fromkeys(output.classes, 1.0 / len(output.classes))
            wrong = next(c for c in output.classes if c != truth)
            return {c: float(c == wrong) for c in output.classes}
        if output.missing == "misclassification":
            return MISCLASSIFIED
        if output.missing in SURVIVAL_MISSING:  # c_index's missing risk: a pair non-concordant or tied
            return math.nan
        low, high = output.range  # worst-value: the end of the range farthest from the reference
        return low if abs(low - truth) >= abs(high - truth) else high

    def prepare(self, input_dir: Path, reference: DeclaredReference, settings: Mapping[str, Any]) -> Prepared:
        declaration = self.in_force(settings)
        if declaration.submission.csv:
            return self._prepare_rows(input_dir, reference, declaration)
        matched = self.jobs_by_case(input_dir, reference.cases, same_stem=declaration.cases.same_stem)
        needs_job = [o.slug for o in declaration.outputs if o.missing == "error"]
        word = declaration.cases.word or "case"
        if matched.missing and needs_job:
            raise SubmissionError(
                f"No algorithm job for {word} {', '.join(matched.missing)}; every {word} needs the output "
                f"'{needs_job[0]}'.",
                matched.missing[0],
            )
        tasks = []
        for case in reference.cases:
            job = matched.jobs.get(case)
            segmentations, values, submitted = [], {}, {}
            for output in declaration.outputs:
                if output.kind == "segmentation":
                    path = image_output_file(input_dir, job, output.slug, case) if job else None
                    if path is None and output.missing == "error":
                        raise _no_output(output, case)
                    if path is not None or output.missing == "empty-mask":
                        file = reference.files[output.slug][case]
                        shown = file.relative_to(reference.root).as_posix()
                        segmentations.append(segmentation_task(declaration, output, case, file, shown, path))
                    submitted[output.slug] = path is not None
                    continue
                raw = read_json_output(input_dir, job, output.slug, case) if job else None
                named = declaration.cases.named(case)
                absent = partial(_no_output, output, case)
                self._add_value(declaration, output, case, named, raw, absent, reference, values, submitted)
            tasks.append(CaseTask(case, CasePayload(tuple(segmentations), values, submitted)))
        return Prepared(tasks, matched.missing)

    def _add_value(
        self,
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
        value = None if raw is None else self._value(output, raw, case, named, declaration)
        if case not in reference.values[output.slug]:
            return  # a blank reference cell under blank = "skip": not scored, not missing
        if raw is None and output.missing == "error":
            raise absent()
        if raw is not None:
            values[output.slug] = value
        elif output.missing != "exclude":
            values[output.slug] = self._missing_value(output, reference.values[output.slug][case], case)
        submitted[output.slug] = raw is not None

    # ------------------------------------------------------------------------ prediction-file phases

    def _table(self, input_dir: Path, declaration: Declaration) -> PredictionTable:
        """The participant's CSV read and checked for every output's column (extra columns are ignored)."""
        submission = declaration.submission
        path = find_prediction_file(input_dir, submission.file)
        word = declaration.cases.word or "case"
        table = read_prediction_table(path, submission.id_column, submission.max_mb, word)
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

    def _cell(self, declaration: Declaration, output: OutputSpec, table: PredictionTable, case: str) -> tuple[Any, str]:
        """The output's cell of the case's row as the JSON value a job would hold (``None``: blank; a
        probabilities output: its class cells, checked, as {class: probability}), and how messages
        name the case there ("c2 (line 3 of predictions.csv, column 'p')")."""
        row = table.rows[case]
        place = f"{declaration.cases.named(case)} (line {row.line} of {table.file}"
        named = f"{place}, {_columns_named(output)})"
        if output.columns:
            return _row_probabilities(output, table, case, place, declaration.cases.word or "case"), named
        text = row.cells[output.column]
        if not text:
            return None, named
        what = f"The {output.noun or f'output {output.slug!r}'} of {named}"
        if output.kind == "boolean":
            if text.lower() not in output.true_values + output.false_values:
                spellings = f"{', '.join(output.true_values)} / {', '.join(output.false_values)}"
                raise SubmissionError(f"{what} is {shown(text)}, not a boolean ({spellings}).", case)
            return text.lower() in output.true_values, named
        if output.kind == "choice":
            return text, named  # checked against the classes by _value
        return _cell_number(text, what, case), named

    def _prepare_rows(self, input_dir: Path, reference: DeclaredReference, declaration: Declaration) -> Prepared:
        """A prediction-file phase: one row per reference case (an unknown case is an error, a case
        without a row gets each output's missing policy, a blank cell is that output missing)."""
        table = self._table(input_dir, declaration)
        word = declaration.cases.word or "case"
        known = set(reference.cases)
        unknown = next((case for case in table.rows if case not in known), None)
        if unknown is not None:
            raise SubmissionError(
                f"Line {table.rows[unknown].line} of the prediction file {table.file} is for {word} {unknown}, "
                "which is not in the test set.",
                unknown,
            )
        missing = [case for case in reference.cases if case not in table.rows]
        needs_row = [o.slug for o in declaration.outputs if o.missing == "error"]
        if missing and needs_row:
            listed = ", ".join(missing[:10]) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
            raise SubmissionError(
                f"The prediction file {table.file} has no row for {word} {listed}; every {word} needs the output "
                f"'{needs_row[0]}'.",
                missing[0],
            )
        tasks = []
        for case in reference.cases:
            values: dict[str, Any] = {}
            submitted: dict[str, bool] = {}
            for output in declaration.outputs:
                raw, named = (None, declaration.cases.named(case))
                if case in table.rows:
                    raw, named = self._cell(declaration, output, table, case)
                absent = partial(_no_cell, table, output, case, word)
                self._add_value(declaration, output, case, named, raw, absent, reference, values, submitted)
            tasks.append(CaseTask(case, CasePayload((), values, submitted)))
        return Prepared(tasks, missing)

    def write_prediction_file(self, outputs_dir: Path, output_dir: Path) -> list[str]:
        """The CSV of a prediction-file phase from ``outputs_dir/<case>/<slug>.json`` (what an algorithm
        would write): a row per case folder, a column per output (a probabilities output: a column per
        class, from its JSON object or list), a blank cell for an absent file."""
        declaration = self.declaration
        if not declaration.submission.csv:
            return super().write_prediction_file(outputs_dir, output_dir)
        if not outputs_dir.is_dir():
            raise ConfigurationError(f"The outputs folder {outputs_dir} does not exist.")
        case_dirs = sorted(p for p in outputs_dir.iterdir() if p.is_dir())
        if not case_dirs:
            raise ConfigurationError(f"The outputs folder {outputs_dir} holds no case folder.")
        rows = []
        for case_dir in case_dirs:
            files = {p.relative_to(case_dir).as_posix(): p for p in case_dir.rglob("*") if p.is_file()}
            known = {f"{o.slug}.json": o for o in declaration.outputs}
            unknown = sorted(set(files) - set(known))
            if unknown:
                raise SubmissionError(f"{', '.join(unknown)} is not an output of {self.name}.", case_dir.name)
            cells = [case_dir.name]
            for name, output in known.items():
                value = None
                if name in files:
                    value = parse_json_bytes(files[name].read_bytes(), name, case_dir.name)
                if output.columns:
                    cells += _class_cell_texts(output, value, case_dir.name)
                else:
                    cells.append(_cell_text(output, value))
            rows.append(cells)
        if output_dir.exists():
            shutil.rmtree(output_dir)
        output_dir.mkdir(parents=True)
        with (output_dir / declaration.submission.file).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(
                [declaration.submission.id_column, *(c for o in declaration.outputs for c in o.csv_columns)]
            )
            writer.writerows(rows)
        return [cells[0] for cells in rows]

    def check_submission(self, input_dir: Path, settings: Mapping[str, Any], images: Path | None = None) -> Checked:
        """A prediction-file phase: every row as ``prepare`` reads it (columns, cells, kinds, ranges; a
        blank cell fails under the policy "error", unless the reference is blank there: unknown here)."""
        declaration = self.in_force(settings)
        if not declaration.submission.csv:
            return super().check_submission(input_dir, settings, images)
        table = self._table(input_dir, declaration)
        word = declaration.cases.word or "case"
        checked = Checked(cases=len(table.rows))
        for case in table.rows:
            for output in declaration.outputs:
                raw, named = self._cell(declaration, output, table, case)
                if raw is not None:
                    self._value(output, raw, case, named, declaration)
                elif output.missing == "error":
                    raise _no_cell(table, output, case, word)
                else:
                    checked.warnings.append(
                        f"{named}: no value; the evaluation applies the missing policy '{output.missing}'."
                    )
        checked.unchecked.append(NEEDS_TRUTH_ROWS)
        return checked

    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        """Every output as ``prepare`` reads it (kind, range) and each segmentation as ``score_case``
        checks it, on the grid of the case's input image when ``images`` holds it. A missing output
        fails under the policy "error" (unless the reference is blank there: unknown here) and is a
        warning under any other policy."""
        declaration = self.in_force(settings)
        checked = Checked()
        named = declaration.cases.named(case)
        for output in declaration.outputs:
            if output.kind == "segmentation":
                found = image_output_file(input_dir, job, output.slug, case)
                if found is not None:
                    grid = input_image(images, job, declaration.cases.input)
                    if grid is None:
                        checked.unchecked.append("the segmentations' grid against the input image (give --images)")
                    checked.later.append(partial(check_segmentation, declaration, output, found, grid, case, named))
            elif (found := read_json_output(input_dir, job, output.slug, case)) is not None:
                self._value(output, found, case, named, declaration)
            if found is None and output.missing == "error":
                raise _no_output(output, case)
            if found is None:
                checked.warnings.append(
                    f"Case {case} has no output '{output.slug}'; the evaluation applies its missing policy "
                    f"'{output.missing}'."
                )
        return checked

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> CaseResult:
        numbers = {}
        for segmentation in task.payload.segmentations:
            try:
                numbers[segmentation.slug] = score_segmentation(segmentation, task.case)
            except EvaluationError:
                raise
            except RuntimeError as error:  # SimpleITK failures on a submitted file
                what = segmentation.noun or f"output '{segmentation.slug}'"
                raise SubmissionError(
                    f"The {what} of {task.case} could not be evaluated ({error.__class__.__name__}).", task.case
                ) from None
        return CaseResult(numbers, dict(task.payload.values), dict(task.payload.submitted))

    # ---------------------------------------------------------------------------------- aggregation

    def aggregate(
        self,
        results: Mapping[str, CaseResult],
        missing: Sequence[str],
        reference: DeclaredReference,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        declaration = self.in_force(settings)
        level = declaration.level
        aggregates: dict[str, Any] = {}
        per_case: dict[str, dict[str, Any]] = {case: {} for case in reference.cases}
        computed: dict[str, tuple[float, np.ndarray]] = {}  # aggregate path -> value, resamples
        counted: dict[str, int] = {}  # mean aggregate path -> the cases it averaged
        slots: dict[str, tuple[int, ...]] = {}  # per-case key -> its place label by label
        for position, metric in enumerate(declaration.metrics):
            if metric.metric == COMBINED:  # the mean of earlier aggregates, resample by resample
                parts = [computed[path] for path in metric.param("of")]
                key = metric.key("", "value")
                values = {key: float(np.mean([value for value, _ in parts]))}
                resamples = {key: np.mean([boot for _, boot in parts], axis=0)}
            elif (output := declaration.output(metric.output)).kind == "segmentation":
                cases = [c for c in reference.cases if output.slug in results[c].segmentations]
                place = (declaration.outputs.index(output), position)
                values, resamples = self._segmentation_metric(
                    metric, cases, results, settings, per_case, counted, place, slots
                )
            elif output.kind in OBJECT_KINDS:
                cases = [c for c in reference.cases if output.slug in results[c].values]
                values, resamples = self._detection_metric(metric, output, cases, results, reference, settings)
            elif output.kind == "probabilities":
                cases = [c for c in reference.cases if output.slug in results[c].values]
                values, resamples = self._probability_metric(metric, output, cases, results, reference, settings)
            else:
                cases = [c for c in reference.cases if output.slug in results[c].values]
                values, resamples = self._value_metric(metric, output, cases, results, reference, settings)
            for _, _, key in metric_keys(metric):
                computed[f"{metric.group}.{key}" if metric.group else key] = (values[key], resamples[key])
        for metric, form, key in _written(declaration):
            target = aggregates.setdefault(metric.group, {}) if metric.group else aggregates
            value, resamples_of_key = computed[f"{metric.group}.{key}" if metric.group else key]
            target[key] = value
            if metric.bootstrap and form not in COUNT_FORMS:
                low, high = percentile_interval(resamples_of_key, level)
                target[f"{key}_ci_low"], target[f"{key}_ci_high"] = low, high
        report = declaration.report
        if report.absent_labels is not None:
            path, slug = report.absent_labels
            scored = [results[c].segmentations[slug] for c in reference.cases if slug in results[c].segmentations]
            group, _, key = path.rpartition(".")
            (aggregates.setdefault(group, {}) if group else aggregates)[key] = [
                label for label, _ in declaration.output(slug).labels
                if sum(n.labels[label].reference + n.labels[label].prediction for n in scored) == 0
            ]  # fmt: skip
        if report.order == "label":  # segmentation keys label by label, then the others as written
            for case, entries in per_case.items():
                ordered = sorted(entries, key=lambda k: (0, *slots[k]) if k in slots else (1,))
                per_case[case] = {k: entries[k] for k in ordered}
        for key, what in report.counts:
            aggregates[key] = len(reference.cases) if what == "cases" else counted[what]
        lists: dict[str, list[str]] = {declaration.submission.missing_key: list(missing)}
        names = dict(report.missing_names)
        for output in declaration.outputs:  # (cases skipped for a blank reference have no entry)
            scored = [c for c in reference.cases if output.slug in results[c].submitted]
            lists[names.get(output.slug, output.slug)] = [c for c in scored if not results[c].submitted[output.slug]]
            if output.kind == "segmentation" and report.label_presence:
                for case in (c for c in reference.cases if output.slug in results[c].segmentations):
                    for label, numbers in results[case].segmentations[output.slug].labels.items():
                        per_case[case][f"{label}_in_reference"] = numbers.reference > 0
            if output.kind not in ("segmentation", *OBJECT_KINDS) and report.case_values:  # (detections: none)
                for case in scored:  # the participant's own value, never an imputed one (it would reveal the
                    submitted = results[case].submitted[output.slug]  # reference)
                    per_case[case][output.slug] = results[case].values[output.slug] if submitted else None
        return {
            "aggregates": aggregates,
            "case": per_case if report.per_case else {},
            **({"missing": lists} if report.missing else {}),
            "settings": self._settings(declaration, settings),
        }

    def _weights(self, n_cases: int, settings: Mapping[str, Any], metric: MetricSpec) -> np.ndarray | None:
        if not metric.bootstrap or n_cases == 0:
            return None
        return resample_weights(n_cases, settings["bootstrap_resamples"], settings["seed"])

    def _segmentation_metric(
        self,
        metric: MetricSpec,
        cases: list[str],
        results: Mapping[str, CaseResult],
        settings: Mapping[str, Any],
        per_case: dict[str, dict[str, Any]],
        counted: dict[str, int],
        place: tuple[int, int],
        slots: dict[str, tuple[int, ...]],
    ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        """The aggregates of one segmentation metric (and its resamples); writes the per-case values
        to ``per_case``, per mean aggregate path how many cases it averaged to ``counted``, and each
        per-case key's place label by label (output, label, metric, entry; ``place``: the first and
        third) to ``slots``."""
        weights = self._weights(len(cases), settings, metric)
        numbers = [results[c].segmentations[metric.output] for c in cases]
        values: dict[str, float] = {}
        resamples: dict[str, np.ndarray] = {}
        label_names = [name for name, _ in self.declaration.output(metric.output).labels]
        for label in metric.labels:
            rows = [n.labels[label] for n in numbers]
            ref, pred, inter = (np.array([getattr(r, f) for r in rows], dtype=float)
                                for f in ("reference", "prediction", "intersection"))  # fmt: skip
            counts = np.zeros((len(rows), 3))
            if not dict(metric.params).get("compute", True):  # not computed: null, but where both maps are empty
                both_empty = metric.param("both_empty")
                value = math.nan if isinstance(both_empty, str) else float(both_empty)
                per = np.where([n.empty for n in numbers], value, math.nan)
            elif metric.metric == "dice":
                per = measures.dice_values(inter, ref, pred, metric.param("both_empty"))
            elif metric.metric == "iou":
                per = measures.iou_values(inter, ref, pred, metric.param("both_empty"))
            elif metric.metric == "hd95":
                raw = np.array([r.hd95 for r in rows], dtype=float)
                per = measures.surface_values(raw, ref, pred, metric.param("both_empty"), metric.param("one_empty"))
            elif metric.metric == "nsd":
                raw = np.array([dict(r.nsd)[metric.param("tolerance_mm")] for r in rows], dtype=float)
                per = measures.surface_values(raw, ref, pred, metric.param("both_empty"), metric.param("one_empty"))
            elif metric.metric in ("hausdorff", "masd"):
                raw = np.array([getattr(r, metric.metric) for r in rows], dtype=float)
                per = measures.surface_values(raw, ref, pred, metric.param("both_empty"), metric.param("one_empty"))
            elif metric.metric == "volume_difference":
                raw = np.array([dict(r.volumes)[_volume_key(metric)] for r in rows], dtype=float)
                per = measures.volume_difference_values(raw, dict(metric.params).get("empty_reference", "exclude"))
            elif metric.metric == "panoptic_quality":
                found_pq = [dict(r.panoptic)[metric.param("iou_threshold")] for r in rows]
                raw = np.array([getattr(q, metric.param("quality")) for q in found_pq], dtype=float)
                per = measures.panoptic_values(raw, metric.param("no_instances"))
            else:
                source = "hungarian" if metric.param("matching") == "hungarian" else "lesions"
                found = [dict(getattr(r, source))[metric.param("iou_threshold")] for r in rows]
                counts = np.array([[c.tp, c.fp, c.fn] for c in found], dtype=float).reshape(-1, 3)
                per = measures.lesion_f1_values(*counts.T, metric.param("no_lesions"))
            keys = [metric.per_case_key(label)] if metric.case_key else []
            if metric.metric == "lesion_f1" and metric.case_count_key:
                keys += [metric.count_key(label, count) for count in COUNT_FORMS]
            for entry, key in enumerate(keys):
                slots[key] = (place[0], label_names.index(label), place[1], entry)
            for index, case in enumerate(cases):
                if metric.case_key:
                    per_case[case][keys[0]] = float(per[index])
                if len(keys) > 1:
                    per_case[case].update(zip(keys[-3:], (int(v) for v in counts[index]), strict=True))
            scale = 1.0
            if metric.metric in ("dice", "iou") and metric.param("volume") == "mm3":
                scale = np.array([n.voxel_volume for n in numbers])
            for form in metric.aggregates:
                key = metric.key(label, form)
                if form in COUNT_FORMS:  # the lesion counts summed over the cases
                    values[key] = int(counts[:, COUNT_FORMS.index(form)].sum())
                    resamples[key] = np.array([np.nan])
                    continue
                averaged = per
                mean_over = dict(metric.params).get("mean_over", "all") if form == "mean" else "all"
                if not dict(metric.params).get("compute", True):
                    averaged = np.full_like(per, np.nan)  # not computed: a null mean, never one of the empty cases only
                elif mean_over == "present":
                    averaged = np.where(ref + pred == 0, np.nan, per)  # the mean skips cases without the label
                elif mean_over == "positives":
                    averaged = np.where(ref == 0, np.nan, per)  # the mean of the cases with the label in the reference
                    if cases and not (ref > 0).any():
                        raise ConfigurationError(
                            f"No reference case has the label '{label}': aggregates.{key} (mean over positives) is "
                            "undefined."
                        )
                path = f"{metric.group}.{key}" if metric.group else key
                counted[path] = int(np.count_nonzero(np.isfinite(averaged)))
                arguments = (metric, form, averaged, counts, inter * scale, (ref + pred) * scale)
                values[key] = float(_form(*arguments, None)) if cases else float("nan")
                boot = _form(*arguments, weights) if weights is not None else np.array([np.nan])
                resamples[key] = np.asarray(boot, dtype=float)
        return values, resamples

    def _value_metric(
        self,
        metric: MetricSpec,
        output: OutputSpec,
        cases: list[str],
        results: Mapping[str, CaseResult],
        reference: DeclaredReference,
        settings: Mapping[str, Any],
    ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        kind = float if output.kind == "number" else str
        truth = np.array([kind(reference.values[output.slug][c]) for c in cases])
        predicted = np.array([kind(results[c].values[output.slug]) for c in cases])
        params = dict(metric.params)
        event = np.array([reference.events[output.slug][c] for c in cases], bool) if output.event else None
        if metric.metric == "cohen_kappa":  # the declared order; a missing answer is a class of its own (unweighted)
            classes = output.classes if output.kind == "choice" else ("False", "True")
            params["classes"] = classes + ((MISCLASSIFIED,) if output.missing == "misclassification" else ())
        value = (
            float(measures.value_metric(metric.metric, truth, predicted, params, event=event)) if cases else math.nan
        )
        for edge, what in measures.EDGE_CASES.items():
            if math.isnan(value) and params.get(edge) == "error":
                raise ConfigurationError(
                    f"The reference of output '{output.slug}' holds {what} over the scored cases: "
                    f"{metric.metric} is undefined (declare {edge} = <number> to give it a value)."
                )
        weights = self._weights(len(cases), settings, metric)
        boot = (
            np.array([np.nan])
            if weights is None
            else measures.value_metric(metric.metric, truth, predicted, params, weights, event)
        )
        key = metric.key("", "value")
        return {key: value}, {key: boot}

    def _probability_metric(
        self,
        metric: MetricSpec,
        output: OutputSpec,
        cases: list[str],
        results: Mapping[str, CaseResult],
        reference: DeclaredReference,
        settings: Mapping[str, Any],
    ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        """A metric of a probabilities output over the scored cases: per class and macro, or one value."""
        truth = np.array([reference.values[output.slug][c] for c in cases], dtype=str)
        matrix = np.array([[results[c].values[output.slug][k] for k in output.classes] for c in cases], float)
        matrix = matrix.reshape(len(cases), len(output.classes))
        params, classes = dict(metric.params), output.classes
        keys = metric_keys(metric)
        if not cases:  # every case excluded: no value (null; a ranked path fails the run)
            return {key: math.nan for _, _, key in keys}, {key: np.array([np.nan]) for _, _, key in keys}
        weights = self._weights(len(cases), settings, metric)
        if not metric.aggregates:  # one value: Brier, top-label calibration, the argmax metrics
            key = metric.key("", "value")
            value = float(measures.probability_metric(metric.metric, truth, matrix, classes, params))
            boot = np.array([np.nan])
            if weights is not None:
                boot = measures.probability_metric(metric.metric, truth, matrix, classes, params, weights)
            return {key: value}, {key: np.asarray(boot, dtype=float)}
        per_class, macro = measures.per_class_metric(metric.metric, truth, matrix, classes, params)
        edge = measures.PER_CLASS[metric.metric][2]
        if edge and params[edge] == "error" and np.isnan(per_class).any():
            undefined = classes[int(np.flatnonzero(np.isnan(per_class))[0])]
            holds = "no case" if not (truth == undefined).any() else "only cases"
            raise ConfigurationError(
                f"The reference of output '{output.slug}' holds {holds} of class '{undefined}' over the scored cases: "
                f"{metric.metric} is undefined for it (declare {edge} = <number> or 'exclude')."
            )
        if math.isnan(macro):
            raise ConfigurationError(
                f"The reference of output '{output.slug}' leaves no class for the macro {metric.metric}: every "
                f"class is excluded ({edge} = 'exclude')."
            )
        boot_classes, boot_macro = np.full((len(classes), 1), np.nan), np.array([np.nan])
        if weights is not None:
            boot_classes, boot_macro = measures.per_class_metric(metric.metric, truth, matrix, classes, params, weights)
        values: dict[str, float] = {}
        resamples: dict[str, np.ndarray] = {}
        for label, form, key in keys:
            if form == "macro":
                values[key], resamples[key] = float(macro), np.asarray(boot_macro, dtype=float)
            else:
                j = classes.index(label)
                values[key], resamples[key] = float(per_class[j]), np.asarray(boot_classes[j], dtype=float)
        return values, resamples

    def _detection_metric(
        self,
        metric: MetricSpec,
        output: OutputSpec,
        cases: list[str],
        results: Mapping[str, CaseResult],
        reference: DeclaredReference,
        settings: Mapping[str, Any],
    ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
        """A detection metric over the scored images (reference boxes, submitted boxes and scores)."""
        images = [ImageDetections(reference.values[output.slug][c], *results[c].values[output.slug]) for c in cases]
        params = dict(metric.params)
        if params.get("fp_images") == "negative" and all(len(image.reference) for image in images):
            raise ConfigurationError(
                f"The reference of output '{output.slug}' has no image without boxes: {metric.metric} with "
                "fp_images = 'negative' counts false positives on those images only."
            )
        value = measures.detection_metric(metric.metric, images, params) if images else math.nan
        if math.isnan(value) and params["no_reference"] == "error":
            raise ConfigurationError(
                f"The reference of output '{output.slug}' holds no reference box over the scored images: "
                f"{metric.metric} is undefined (declare no_reference = <number> to give it a value)."
            )
        weights = self._weights(len(cases), settings, metric)
        boot = (
            np.array([np.nan]) if weights is None else measures.detection_metric(metric.metric, images, params, weights)
        )
        key = metric.key("", "value")
        return {key: value}, {key: boot}

    def _settings(self, declaration: Declaration, settings: Mapping[str, Any]) -> dict[str, Any]:
        """What settings echo: the challenge, the options in force and (layout "full") the whole
        declaration, then the declared constants and notes (or, ``notes_first``, these after the challenge)."""
        notes = dict(declaration.report.notes)
        first, last = (notes, {}) if declaration.report.notes_first else ({}, notes)
        if declaration.report.settings == "options":
            return self.settings_echo(settings, before=first, after=last)
        return self.settings_echo(settings, before={**first, "declaration": declaration.source}, after={
            "ci_level": declaration.level,
            **({"submission": dataclasses.asdict(declaration.submission)} if declaration.submission.csv else {}),
            "outputs": {
                o.slug: {"kind": o.kind, "reference": o.reference.text, "missing": o.missing,
                         **({"geometry": o.geometry, "tolerance": o.tolerance, "labels": dict(o.labels)}
                            if o.kind == "segmentation" else {}),
                         **({"range": list(o.range)} if o.range else {}),
                         **({"classes": list(o.classes), "sum": o.sum_rule,
                             **({"sum_tolerance": o.sum_tolerance} if o.sum_rule == "one" else {})}
                            if o.kind == "probabilities" else {}),
                         **({"blank": o.blank} if o.reference.csv_file else {}),
                         **({"blank_values": list(o.blank_values)} if o.blank_values != ("",) else {}),
                         **({"event": o.event.text} if o.event else {}),
                         **({"column": o.column} if o.column else {}),
                         **({"columns": dict(o.columns)} if o.columns else {}),
                         **({"reference_columns": dict(o.reference.columns)} if o.reference.columns else {}),
                         **({"reference_none": o.reference.none} if o.reference.none != "error" else {}),
                         **({"true_values": list(o.true_values), "false_values": list(o.false_values)}
                            if o.kind == "boolean" or o.reference.one_hot else {})}
                for o in declaration.outputs
            },
            "metrics": {
                m.name: {"metric": m.metric, **({"output": m.output} if m.output else {}), "bootstrap": m.bootstrap,
                         **({"labels": list(m.labels), "aggregates": list(m.aggregates)}
                            if m.metric in SEGMENTATION_METRICS else {}),
                         **({"aggregates": list(m.aggregates)} if m.aggregates and m.metric not in SEGMENTATION_METRICS
                            else {}), **dict(m.params),
                         **({"group": m.group} if m.group else {}),
                         "keys": dict(m.keys)}
                for m in declaration.metrics
            },
            **last,
        })  # fmt: skip


def _written(declaration: Declaration) -> list[tuple[MetricSpec, str, str]]:
    """(metric, form, key) of every aggregate in the order metrics.json writes them: metric by
    metric, or (``[report] order = "label"``) each run of consecutive segmentation metrics of one
    output and group label by label."""
    if declaration.report.order == "metric":
        return [(m, form, key) for m in declaration.metrics for _, form, key in metric_keys(m)]
    order: list[tuple[MetricSpec, str, str]] = []
    run: list[MetricSpec] = []

    def flush() -> None:
        for label, _ in declaration.output(run[0].output).labels:
            order.extend((m, form, key) for m in run for name, form, key in metric_keys(m) if name == label)
        run.clear()

    for metric in declaration.metrics:
        segmentation = metric.metric in SEGMENTATION_METRICS
        if run and (not segmentation or (metric.output, metric.group) != (run[0].output, run[0].group)):
            flush()
        if segmentation:
            run.append(metric)
        else:
            order.extend((metric, form, key) for _, form, key in metric_keys(metric))
    if run:
        flush()
    return order


def _volume_key(metric: MetricSpec) -> tuple[bool, bool, bool]:
    """How a worker keys one declared volume difference: (relative, absolute, in mm³)."""
    return metric.param("relative"), metric.param("absolute"), metric.param("volume") == "mm3"


def check_segmentation(
    declaration: Declaration, output: OutputSpec, path: Path, grid: Path | None, case: str, named: str
) -> None:
    """``score_case``'s checks of a submitted segmentation, on the input image's grid (or, for a 2D
    non-zero mask, against the input image's size) when at hand."""
    if output.nonzero:
        noun = output.noun or f"'{output.slug}' segmentation"
        prediction = read_nonzero_mask(path, case, "predicted", named, noun)
        if grid is not None:
            same_size(prediction, read_nonzero_mask(grid, case, "input", named, "image"), case, named, noun)
        return
    hint = _resample_hint(declaration, output) if output.geometry == "error" else ""
    submitted_labels(output, path, None if grid is None else read_input_image(grid), case, hint)


def _class_items(output: OutputSpec, raw: Any, case: str, what: str) -> list[tuple[str, Any]]:
    """A probabilities answer's (class, value) pairs in the declared order: a JSON object with
    exactly the declared classes, or a list of as many values in the declared order."""
    classes = output.classes
    if isinstance(raw, dict):
        extra = next((k for k in raw if k not in classes), None)
        if extra is not None:
            shown = extra if len(extra) <= 40 else extra[:40] + "..."
            raise SubmissionError(
                f"{what} has a probability for {shown!r}, which is not a class ({', '.join(classes)}).", case
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


def _probabilities(
    output: OutputSpec, raw: Any, case: str, what: str, subject: Callable[[str], str] | None = None
) -> dict[str, float]:
    """A probabilities answer checked (``_class_items``): each value finite, in [0, 1]; summing to 1
    within the tolerance when ``sum = "one"``. Returned as {class: probability} in the declared order.
    ``subject(class)`` names one value in messages (default: "<what>, class 'mel',"; a prediction
    CSV: its cell's line and column)."""
    subject = subject or (lambda name: f"{what}, class {name!r},")
    found = {}
    for name, value in _class_items(output, raw, case, what):
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


def _cell_text(output: OutputSpec, value: Any) -> str:
    """A JSON value as a prediction CSV's cell: blank for none, a boolean in the output's first spellings."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return output.true_values[0] if value else output.false_values[0]
    return value if isinstance(value, str) else json.dumps(value)


def _class_cell_texts(output: OutputSpec, value: Any, case: str) -> list[str]:
    """A job-style probabilities answer (object or list; ``None``: absent) as the cells of its class
    columns, written as given (the evaluation checks them); a shape without those cells is refused."""
    if value is None:
        return [""] * len(output.classes)
    items = _class_items(output, value, case, f"{output.slug}.json")
    return ["" if v is None else json.dumps(v) for _, v in items]


def _columns_named(output: OutputSpec) -> str:
    """The output's CSV columns as messages name them: "column 'p'", "columns 'MEL', 'NV', 'BCC'"."""
    columns = ", ".join(f"'{column}'" for column in output.csv_columns)
    return f"column{'s' if len(output.csv_columns) > 1 else ''} {columns}"


def _no_cell(table: PredictionTable, output: OutputSpec, case: str, word: str) -> SubmissionError:
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
    ``place``: the case and its line, as ``_cell`` names them; ``word`` names a case."""
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

    numbers = {name: _cell_number(text, subject(name), case) for name, text in texts.items()}
    return _probabilities(output, numbers, case, f"The {noun} of {place}, {_columns_named(output)})", subject)


def _cell_number(text: str, what: str, case: str) -> float:
    """A prediction CSV's cell as a finite decimal number (``what`` names the cell in messages); not
    Python's digit separators, which ``float`` reads ("0.2_5" would be 0.25)."""
    try:
        if "_" in text:
            raise ValueError(text)
        number = float(text)
    except ValueError:
        raise SubmissionError(f"{what} is {shown(text)}, not a number.", case) from None
    if not math.isfinite(number):
        raise SubmissionError(f"{what} is {shown(text)}, not a finite number.", case)
    return number


def _no_output(output: OutputSpec, case: str) -> SubmissionError:
    """The error of a missing output under the policy "error"."""
    where = "" if output.kind == "segmentation" else f" ({output.relative_path})"
    return SubmissionError(f"Case {case} has no output '{output.slug}'{where}.", case)


def _form(
    metric: MetricSpec,
    form: str,
    per_case: np.ndarray,
    counts: np.ndarray,
    intersections: np.ndarray,
    totals: np.ndarray,
    weights: np.ndarray | None,
) -> Any:
    """One aggregate form of a segmentation metric over cases (per weight row when ``weights``)."""
    if form == "mean":
        return measures.mean_over_cases(per_case, weights)
    if metric.metric == "lesion_f1":
        return measures.lesion_f1_dataset(counts, metric.param("no_lesions"), weights)
    return measures.overlap_dataset(metric.metric, intersections, totals, metric.param("absent_everywhere"), weights)


def _predicted_time(declaration: Declaration, output: OutputSpec) -> bool:
    """Whether a c_index metric reads ``output`` as a predicted time (``sign = "time"``): never negative."""
    return any(m.output == output.slug and m.metric == "c_index" and m.param("sign") == "time"
               for m in declaration.metrics)  # fmt: skip


def _in_process(declaration: Declaration) -> bool:
    """Cases without a segmentation output are a few JSON values: scored in the main process."""
    return all(output.kind != "segmentation" for output in declaration.outputs)


def from_file(path: Path) -> DeclaredChallenge:
    """The challenge declared in the TOML file ``path``."""
    if not path.is_file():
        raise ConfigurationError(f"The declaration {path} does not exist.")
    return DeclaredChallenge(load(path))


def challenge_class(declaration: Declaration) -> type[DeclaredChallenge]:
    """A registry entry for a packaged declaration: a subclass carrying it as class attributes."""
    attributes = {
        "name": declaration.name,
        "title": declaration.title,
        "phase": _phase(declaration),
        "options": _options(declaration),
        "declaration": declaration,
        "cases_in_process": _in_process(declaration),
        "__module__": __name__,
    }
    class_name = "Declared_" + re.sub(r"\W", "_", declaration.name)
    return type(class_name, (DeclaredChallenge,), attributes)
