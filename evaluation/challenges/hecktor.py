"""HECKTOR 2026: PET/CT head and neck tumour segmentation, GTVn detection, TN staging and
recurrence-free survival. HECKTOR 2025 tasks 1 (segmentation, detection), 2 (RFS) and 3 (HPV status)
are declarations: ``evaluation/declarations/hecktor2025-task1.toml``, ``-task2.toml`` and ``-task3.toml``.

Choices and options: ../shared/spec/challenges.md (HECKTOR); the seed ../shared/seeds/001_*.
References: BioMedIA-MBZUAI/HECKTOR2025 ``Task1/utils/metrics.py`` (aggregated Dice in mm³, 1.0 for a
label absent everywhere), BioMedIA-MBZUAI/HECKTOR2026 README and ``Task/inference.py`` (sockets, stage
strings, RFS in days), voreille/hecktor ``notebooks/evaluate_segmentation2022.ipynb`` (aggregated
Dice) and ``src/aicrowd_evaluator/survival_metrics.py`` (C-index, missing predictions as ties).

Each image is read once in ``score_case`` and checked (pixel type, labels, geometry) by
``evaluation/platform/images.py`` (``read_label_pair``); ``evaluation/metrics/segmentation.py``
(``summarise_label_maps``, the declared engine's too) reduces the pair to small numbers (volumes,
intersections, surface distances, lesion counts). ``aggregate`` unpacks the
options once and computes every score and its bootstrap CI from those numbers with the metrics
package: no image metric is recomputed per resample. What stays here: sockets, options, parsing of
the value outputs, the reference (labels/ and clinical.csv) and the metrics.json assembly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.challenges.base import Challenge, Checked, Option, Phase, Prepared, input_image
from evaluation.errors import ConfigurationError, EvaluationError, SubmissionError
from evaluation.metrics.bootstrap import percentile_interval, resample_weights
from evaluation.metrics.lesions import IOU_THRESHOLD, f1_score
from evaluation.metrics.overlap import aggregated_dice, dice_from_counts
from evaluation.metrics.segmentation import CaseSegmentation, LabelRequest, summarise_label_maps
from evaluation.metrics.survival import MISSING_POLICIES, concordance_index
from evaluation.platform.images import read_input_image, read_label_pair, read_submitted_labels
from evaluation.platform.matching import match_jobs
from evaluation.platform.predictions import Job, Socket, load_jobs
from evaluation.platform.sockets import finite_number, image_output_file, read_json_output
from evaluation.runner import CaseTask

if TYPE_CHECKING:  # annotations only: SimpleITK is imported by the platform layer where it reads
    import SimpleITK as sitk

CT = Socket("ct-image", "images/ct", "Image", "Image")
PET = Socket("pet-image", "images/pet", "Image", "Image")
SEGMENTATION_2026 = Socket(
    "head-neck-tumor-segmentation", "images/head-neck-tumor-segmentation", "Segmentation", "Image"
)
T_STAGE = Socket("t-stage", "t-stage.json", "String", "Value")
N_STAGE = Socket("n-stage", "n-stage.json", "String", "Value")
RFS = Socket("rfs", "rfs.json", "Float", "Value")

LABELS = {1: "gtvp", 2: "gtvn"}
GTVN = 2  # the label detected lesion-wise
NSD_TOLERANCES_MM = (1.0, 2.0)
T_CLASSES, N_CLASSES = ("T1", "T2", "T3", "T4"), ("N0", "N1", "N2", "N3")
UNSCORED_STAGES = {"T": ("T0", "TX", "TIS"), "N": ("NX",)}
INVALID = "invalid"  # a stage answer that can never be right: a misclassification
IMAGE_SUFFIXES = (".nii.gz", ".nii", ".mha")
CLINICAL_FILE = "clinical.csv"
CLINICAL_COLUMNS = ("PatientID", "RFS", "Relapse", "T-stage", "N-stage", "HPV Status")


def patient_of_image(name: str) -> str:
    """The patient id of an input image name: extension and a ``__CT`` suffix removed."""
    lowered = name.lower()
    stem = next((name[: -len(s)] for s in IMAGE_SUFFIXES if lowered.endswith(s)), name)
    return stem[: -len("__CT")] if stem.upper().endswith("__CT") else stem


# ----------------------------------------------------------------------------------------- values


def parse_stage(value: Any, axis: str, case: str | None, invalid: str = "error") -> str:
    """A T or N stage as a scored class (``T1``..``T4``, ``N0``..``N3``; a subcategory letter such as
    ``N2b`` or ``T4a`` folds into its stage), ``INVALID`` for a recognised but unscored answer
    (``Tx``, ``T0``, ``Tis``, ``Nx``: always a misclassification), or, for anything else, an error
    (``invalid="error"``) or ``INVALID`` (``invalid="misclassification"``)."""
    text = value.strip().upper() if isinstance(value, str) else None
    if text is not None:
        match = re.fullmatch(rf"({axis}[0-4])[ABC]?", text)
        classes = T_CLASSES if axis == "T" else N_CLASSES
        if match and match.group(1) in classes:
            return match.group(1)
        if text in UNSCORED_STAGES[axis]:
            return INVALID
    if invalid == "misclassification":
        return INVALID
    shown = repr(value)[:40]
    expected = "T1..T4" if axis == "T" else "N0..N3"
    raise SubmissionError(f"The {axis} stage of {case} is {shown}; expected a string {expected}.", case)


def parse_rfs(value: Any, case: str, output: str) -> float:
    """The RFS output as a risk (higher = earlier recurrence): ``output="risk"`` as given, ``"time"``
    (predicted days, non-negative) negated."""
    number = finite_number(value, f"The RFS output of {case}", case)
    if output == "time" and number < 0:
        raise SubmissionError(
            f"The RFS output of {case} is {number:g} days; a predicted time cannot be negative.", case
        )
    return number if output == "risk" else -number


# ---------------------------------------------------------------------------------- ground truth


@dataclass(frozen=True)
class Clinical:
    """One patient's clinical ground truth; ``None`` where unknown (the patient is then left out of
    that subtask)."""

    rfs: float | None = None
    relapse: bool | None = None
    t_stage: str | None = None
    n_stage: str | None = None


@dataclass(frozen=True)
class Reference:
    """The patients (sorted), their label images and clinical data."""

    patients: tuple[str, ...]
    labels: Mapping[str, Path] = field(default_factory=dict)
    clinical: Mapping[str, Clinical] = field(default_factory=dict)


def _label_files(ground_truth: Path) -> dict[str, Path]:
    folder = ground_truth / "labels"
    if not folder.is_dir():
        raise ConfigurationError("The HECKTOR ground truth has no labels/ folder.")
    files: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if not path.name.lower().endswith(IMAGE_SUFFIXES):
            continue
        patient = patient_of_image(path.name)
        if patient in files:
            raise ConfigurationError(f"The HECKTOR ground truth has two label files for {patient}.")
        files[patient] = path
    if not files:
        raise ConfigurationError("The HECKTOR ground truth labels/ folder holds no label image.")
    return files


def _blank(text: str) -> bool:
    return text.strip().lower() in ("", "nan", "na", "none")


def _clinical_row(row: Mapping[str, str]) -> Clinical:
    patient = row["PatientID"]
    try:
        rfs = None if _blank(row["RFS"]) else float(row["RFS"])
        relapse = None if _blank(row["Relapse"]) else bool(int(float(row["Relapse"])))
        hpv_text = row["HPV Status"].strip().lower()  # checked in every phase; scored by the declared task 3
        hpv = None if _blank(hpv_text) else hpv_text in ("1", "1.0", "true", "positive", "yes", "+")
        if not _blank(hpv_text) and not hpv and hpv_text not in ("0", "0.0", "false", "negative", "no", "-"):
            raise ValueError(f"HPV Status {row['HPV Status']!r}")
        stages = [None if _blank(row[c]) else parse_stage(row[c], c[0], patient) for c in ("T-stage", "N-stage")]
    except (ValueError, SubmissionError) as error:
        raise ConfigurationError(f"clinical.csv: the row of {patient} is malformed ({error}).") from None
    if rfs is not None and (not np.isfinite(rfs) or relapse is None):
        raise ConfigurationError(f"clinical.csv: the RFS of {patient} needs a finite time and a Relapse flag.")
    if INVALID in stages:
        raise ConfigurationError(f"clinical.csv: the stage of {patient} is not a scored class.")
    return Clinical(rfs, relapse, stages[0], stages[1])


def _clinical(ground_truth: Path) -> dict[str, Clinical]:
    path = ground_truth / CLINICAL_FILE
    if not path.is_file():
        raise ConfigurationError(f"The HECKTOR ground truth has no {CLINICAL_FILE}.")
    import pandas as pd  # main process only: workers (score_case) never pay for this import

    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise ConfigurationError(
            f"The HECKTOR ground truth {CLINICAL_FILE} cannot be parsed as UTF-8 CSV ({type(error).__name__}): "
            "fix it in the phase's ground truth."
        ) from None
    absent = [c for c in CLINICAL_COLUMNS if c not in table.columns]
    if absent:
        raise ConfigurationError(f"{CLINICAL_FILE} lacks the column(s) {', '.join(absent)}.")
    if table["PatientID"].duplicated().any():
        raise ConfigurationError(f"{CLINICAL_FILE} lists a patient twice.")
    return {row["PatientID"]: _clinical_row(row) for row in table.to_dict("records")}


# ------------------------------------------------------------------------------ per-case scoring


@dataclass(frozen=True)
class CasePayload:
    """What a worker needs for one patient; clinical outputs were parsed in ``prepare``."""

    reference: Path
    prediction: Path | None
    outputs: Mapping[str, Any]


@dataclass(frozen=True)
class CaseResult:
    """One patient's segmentation numbers and parsed value outputs (risk sign applied)."""

    segmentation: CaseSegmentation
    outputs: Mapping[str, Any]
    segmentation_submitted: bool


GEOMETRY = {"none": "error", "nearest": "nearest"}  # the option resample -> the geometry policy
ON_CT_GRID = {"grid_name": "CT grid", "hint": " (or evaluate with --set resample=nearest)"}  # messages


def read_submitted(path: Path, grid: sitk.Image | None, case: str, *, resample: str) -> tuple[sitk.Image, np.ndarray]:
    """A submitted label map read and checked (pixel type, labels) on the CT ``grid`` (unless
    ``None``: the pre-flight check without the CT); with its voxels, a view into the image, which
    the caller keeps while it uses them."""
    return read_submitted_labels(path, grid, case, LABELS, policy=GEOMETRY[resample], **ON_CT_GRID)


def score_patient(payload: CasePayload, case: str, *, resample: str, surface: bool) -> CaseSegmentation:
    """Read the reference (and prediction, if any) once and score them; a missing prediction is an
    empty mask on the reference grid; ``resample``: "none" (off the CT grid is an error) or "nearest";
    ``surface``: HD95 and NSD computed (else NaN)."""
    pair = read_label_pair(
        payload.reference, payload.prediction, case, LABELS, policy=GEOMETRY[resample], **ON_CT_GRID,
        fix=f"; replace labels/{payload.reference.name} in the phase's ground truth",
    )  # fmt: skip
    requests = {
        label: LabelRequest(label, hd95=surface, nsd=NSD_TOLERANCES_MM if surface else (),
                            lesions=(IOU_THRESHOLD,) if label == GTVN else ())
        for label in LABELS
    }  # fmt: skip
    return summarise_label_maps(pair.reference, pair.prediction, pair.spacing, requests)


# ------------------------------------------------------------------------------------ aggregation


def _with_ci(name: str, value: float, resamples: np.ndarray, level: float = 0.95) -> dict[str, float]:
    low, high = percentile_interval(resamples, level)
    return {name: float(value), f"{name}_ci_low": low, f"{name}_ci_high": high}


def _ranked(value: float, what: str) -> float:
    if not np.isfinite(value):
        raise ConfigurationError(f"The {what} is undefined for this ground truth; check the reference data.")
    return float(value)


def segmentation_aggregates(
    cases: Sequence[str],
    results: Sequence[CaseSegmentation],
    *,
    weights: np.ndarray,
    aggregate_volume: str,
    dice_both_empty: str,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Aggregated and per-patient segmentation metrics with bootstrap CIs (``weights``: the
    (resamples, patients) draw counts), and the per-case values."""
    scale = np.array([r.voxel_volume if aggregate_volume == "mm3" else 1.0 for r in results])
    aggregates: dict[str, Any] = {}
    per_case: dict[str, dict[str, Any]] = {case: {} for case in cases}
    aggregated, absent = [], []
    empty = np.array([r.empty for r in results])  # no label in either map: two empty surfaces, computed or not
    for label, name in LABELS.items():
        ref = np.array([r.labels[label].reference for r in results], dtype=float)
        pred = np.array([r.labels[label].prediction for r in results], dtype=float)
        inter = np.array([r.labels[label].intersection for r in results], dtype=float)
        value = aggregated_dice(inter * scale, (ref + pred) * scale)
        boot = aggregated_dice(inter * scale, (ref + pred) * scale, weights)
        aggregated.append((value, boot))
        if ref.sum() + pred.sum() == 0:
            absent.append(name)
        aggregates.update(_with_ci(f"dice_{name}", _ranked(value, f"aggregated Dice of {name}"), boot))
        per_patient = dice_from_counts(inter, ref + pred, empty=1.0 if dice_both_empty == "one" else float("nan"))
        counted = np.isfinite(per_patient)
        mean = float(per_patient[counted].mean()) if counted.any() else float("nan")
        sums, counts = weights[:, counted] @ per_patient[counted], weights[:, counted].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            aggregates.update(_with_ci(f"dice_{name}_mean", mean, np.where(counts > 0, sums / counts, np.nan)))
        present = ref + pred > 0  # surface means over the patients where the label is somewhere
        hd95 = np.where(empty, 0.0, [r.labels[label].hd95 for r in results])
        aggregates[f"hd95_{name}_mean"] = float(hd95[present].mean()) if present.any() else None
        nsd = {
            t: np.where(empty, 1.0, [dict(r.labels[label].nsd).get(t, np.nan) for r in results])
            for t in NSD_TOLERANCES_MM
        }
        for tolerance in NSD_TOLERANCES_MM:
            mean_nsd = float(nsd[tolerance][present].mean()) if present.any() else None
            aggregates[f"nsd_{tolerance:g}mm_{name}_mean"] = mean_nsd
        for index, case in enumerate(cases):
            per_case[case][f"dice_{name}"] = float(per_patient[index])
            per_case[case][f"hd95_{name}"] = float(hd95[index])
            for tolerance in NSD_TOLERANCES_MM:
                per_case[case][f"nsd_{tolerance:g}mm_{name}"] = float(nsd[tolerance][index])
    score = (aggregated[0][0] + aggregated[1][0]) / 2
    aggregates.update(_with_ci("score", score, (aggregated[0][1] + aggregated[1][1]) / 2))
    aggregates["labels_absent_everywhere"] = absent  # their aggregated Dice is 1.0 (2025 baseline rule)
    return aggregates, per_case


def detection_aggregates(
    cases: Sequence[str], results: Sequence[CaseSegmentation], *, weights: np.ndarray
) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """GTVn lesion TP/FP/FN summed over patients and the aggregated F1 with its CI."""
    lesions = [dict(r.labels[GTVN].lesions)[IOU_THRESHOLD] for r in results]
    counts = np.array([[c.tp, c.fp, c.fn] for c in lesions], dtype=float)
    tp, fp, fn = counts.sum(axis=0)
    boot = f1_score(*(weights @ counts).T)
    aggregates = {
        **_with_ci("f1_gtvn", _ranked(f1_score(tp, fp, fn), "GTVn F1"), boot),
        "tp_gtvn": int(tp), "fp_gtvn": int(fp), "fn_gtvn": int(fn),
    }  # fmt: skip
    per_case = {
        case: {"lesions_tp_gtvn": c.tp, "lesions_fp_gtvn": c.fp, "lesions_fn_gtvn": c.fn}
        for case, c in zip(cases, lesions, strict=True)
    }
    return aggregates, per_case


def staging(
    results: Mapping[str, CaseResult], reference: Reference, *, resamples: int, seed: int
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """T and N balanced accuracy over the patients with both stages known; score = their mean."""
    from evaluation.metrics.classification import balanced_accuracy  # main process only (scikit-learn)

    cases = [c for c in reference.patients if reference.clinical[c].t_stage and reference.clinical[c].n_stage]
    if not cases:
        raise ConfigurationError(f"{CLINICAL_FILE} gives no patient both a T and an N stage.")
    weights = resample_weights(len(cases), resamples, seed)
    aggregates: dict[str, Any] = {}
    missing: dict[str, list[str]] = {}
    boots = []
    for socket, column in ((T_STAGE, "t_stage"), (N_STAGE, "n_stage")):
        truth = [getattr(reference.clinical[c], column) for c in cases]
        predicted = [results[c].outputs.get(socket.slug, INVALID) for c in cases]
        name = f"balanced_accuracy_{column[0]}"
        value = _ranked(balanced_accuracy(truth, predicted), f"{column[0].upper()} balanced accuracy")
        boots.append(balanced_accuracy(truth, predicted, weights))
        aggregates.update(_with_ci(name, value, boots[-1]))
        missing[column] = [c for c in cases if socket.slug not in results[c].outputs]
    score = (aggregates["balanced_accuracy_t"] + aggregates["balanced_accuracy_n"]) / 2
    aggregates.update(_with_ci("score", score, (boots[0] + boots[1]) / 2))
    return aggregates, missing


def prognosis(
    results: Mapping[str, CaseResult], reference: Reference, *, policy: str, resamples: int, seed: int
) -> tuple[dict[str, Any], list[str]]:
    """Harrell's C-index over the patients with a known RFS (risk sign applied in ``prepare``);
    ``policy``: what a missing prediction counts (``MISSING_POLICIES``)."""
    cases = [c for c in reference.patients if reference.clinical[c].rfs is not None]
    if not cases:
        raise ConfigurationError(f"{CLINICAL_FILE} gives no patient an RFS.")
    time = np.array([reference.clinical[c].rfs for c in cases], dtype=float)
    event = np.array([reference.clinical[c].relapse for c in cases], dtype=bool)
    risk = np.array([results[c].outputs.get(RFS.slug, np.nan) for c in cases], dtype=float)
    missing = ~np.isfinite(risk)
    value = concordance_index(time, event, risk, missing, policy)
    weights = resample_weights(len(cases), resamples, seed)
    boot = concordance_index(time, event, risk, missing, policy, weights=weights)
    absent = [c for c, m in zip(cases, missing, strict=True) if m]
    return _with_ci("c_index", _ranked(value, "C-index"), boot), absent


# -------------------------------------------------------------------------------------- challenge

OPTIONS = (
    Option("aggregate_volume", "mm3", "aggregated Dice summed in mm³ (official) or in voxels", ("mm3", "voxels")),
    Option("dice_both_empty", "one", "per-patient Dice when both masks lack the label: 1.0, or exclude the "
           "patient from the mean", ("one", "exclude")),
    Option("resample", "none", "none: a prediction off the CT grid is an error; nearest: resample it onto the "
           "reference grid (nearest neighbour)", ("none", "nearest")),
    Option("surface_metrics", True, "compute HD95 and NSD at 1 and 2 mm (secondary, not ranked)"),
    Option("invalid_stage", "error", "a stage that is not T0-T4/Tx/Tis or N0-N3/Nx (e.g. 'T5'): an error, or a "
           "misclassification", ("error", "misclassification")),
    Option("rfs_output", "time", "what rfs.json holds: a risk (higher = earlier recurrence) or a predicted RFS "
           "time in days (higher = later)", ("risk", "time")),
    Option("missing_prognosis", "non-concordant", "a patient without an RFS output: every comparable pair with "
           "it counts 0 (the seed's rule) or 0.5 (tie, the 2021 official code)", MISSING_POLICIES),
    Option("seed", 0, "bootstrap seed (numpy.random.default_rng)"),
    Option("bootstrap_resamples", 1000, "bootstrap resamples of the patients for the 95% CIs"),
)  # fmt: skip
VALUE_OUTPUTS = (T_STAGE, N_STAGE, RFS)


def _value_outputs(input_dir: Path, job: Job, case: str, parsers: Mapping[str, Callable[..., Any]]) -> dict[str, Any]:
    """The job's value outputs parsed (``{slug: value}``); an absent output is left out (missing)."""
    outputs = {}
    for slug, parse in parsers.items():
        value = read_json_output(input_dir, job, slug, case)
        if value is not None:
            outputs[slug] = parse(value, case=case)
    return outputs


def _column(title: str, path: str, ranked: bool = True) -> dict[str, Any]:
    column: dict[str, Any] = {"title": title, "path": path, "order": "desc"}
    return column if ranked else {**column, "exclude_from_ranking": True}


class Hecktor2026(Challenge):
    """CT and PET in; segmentation, T and N stage and RFS out. Several ranked columns are averaged as
    ranks ("avg"), the 2026 weighted rank aggregate being the ranking tool's job."""

    name = "hecktor2026"
    title = "HECKTOR 2026: head and neck tumour segmentation, TN staging and prognosis (PET/CT)"
    phase = Phase(
        inputs=(CT, PET), outputs=(SEGMENTATION_2026, *VALUE_OUTPUTS),
        score_title="Segmentation score (mean aggregated Dice of GTVp and GTVn)",
        score_jsonpath="aggregates.segmentation.score", score_default_sort="desc", score_decimal_places=4,
        extra_results_columns=(
            _column("Staging score (mean balanced accuracy T, N)", "aggregates.staging.score"),
            _column("C-index (RFS)", "aggregates.prognosis.c_index"),
            _column("Aggregated Dice GTVp", "aggregates.segmentation.dice_gtvp", ranked=False),
            _column("Aggregated Dice GTVn", "aggregates.segmentation.dice_gtvn", ranked=False),
            _column("Balanced accuracy T", "aggregates.staging.balanced_accuracy_t", ranked=False),
            _column("Balanced accuracy N", "aggregates.staging.balanced_accuracy_n", ranked=False),
        ),
        scoring_method_choice="avg",
    )  # fmt: skip
    options = OPTIONS

    def case_of_job(self, job: Job) -> str:
        return patient_of_image(job.input_name(CT.slug))

    def job_inputs(self, case: str) -> dict[Socket, str]:
        return {CT: f"{case}__CT.mha", PET: f"{case}__PT.mha"}

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> Reference:
        if settings["bootstrap_resamples"] < 1:
            raise ConfigurationError("Option bootstrap_resamples must be at least 1.")
        labels = _label_files(ground_truth)
        clinical = _clinical(ground_truth)
        patients = tuple(labels)
        lacking = [p for p in patients if p not in clinical]
        if lacking:
            raise ConfigurationError(f"{CLINICAL_FILE} has no row for {lacking[0]}, which has a label image.")
        return Reference(patients, labels, clinical)

    def _parsers(self, settings: Mapping[str, Any]) -> dict[str, Callable[[Any, str], Any]]:
        """The parser of each value output, the options that shape it bound once."""
        parsers: dict[str, Callable[[Any, str], Any]] = {}
        for socket in VALUE_OUTPUTS:
            if socket is T_STAGE or socket is N_STAGE:
                axis = socket.slug[0].upper()
                parsers[socket.slug] = partial(parse_stage, axis=axis, invalid=settings["invalid_stage"])
            else:
                parsers[socket.slug] = partial(parse_rfs, output=settings["rfs_output"])
        return parsers

    def prepare(self, input_dir: Path, reference: Reference, settings: Mapping[str, Any]) -> Prepared:
        matched = match_jobs(load_jobs(input_dir), self.case_of_job, reference.patients)
        parsers = self._parsers(settings)
        tasks = []
        for case in reference.patients:
            job = matched.jobs.get(case)
            prediction, outputs = None, {}
            if job is not None:
                prediction = image_output_file(input_dir, job, SEGMENTATION_2026.slug, case)
                outputs = _value_outputs(input_dir, job, case, parsers)
            tasks.append(CaseTask(case, CasePayload(reference.labels[case], prediction, outputs)))
        return Prepared(tasks, matched.missing)

    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        """What ``prepare`` reads and what ``score_patient`` checks of the submitted segmentation (pixel
        type, labels and, with the CT at hand, its grid); a missing output is a warning: the
        evaluation counts it as an empty mask or a misclassification."""
        checked = Checked()
        path = image_output_file(input_dir, job, SEGMENTATION_2026.slug, case)  # prepare's order
        if path is None:
            checked.warnings.append(f"Case {case} has no segmentation; it will count as an empty mask.")
        outputs = _value_outputs(input_dir, job, case, self._parsers(settings))
        for socket in VALUE_OUTPUTS:
            if socket.slug not in outputs:
                checked.warnings.append(f"Case {case} has no output '{socket.slug}'; it will count as missing.")
        if path is None:
            return checked
        ct = input_image(images, job, CT.slug)
        if ct is None:
            checked.unchecked.append("the segmentations' grid against the CT (give --images)")

        def score_checks() -> None:
            read_submitted(path, None if ct is None else read_input_image(ct), case, resample=settings["resample"])

        checked.later.append(score_checks)
        return checked

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> CaseResult:
        try:
            segmentation = score_patient(
                task.payload, task.case, resample=settings["resample"], surface=settings["surface_metrics"]
            )
        except EvaluationError:
            raise
        except RuntimeError as error:  # SimpleITK failures on a submitted file
            raise SubmissionError(
                f"The segmentation of {task.case} could not be evaluated ({error.__class__.__name__}).", task.case
            ) from None
        return CaseResult(segmentation, dict(task.payload.outputs), task.payload.prediction is not None)

    def aggregate(
        self,
        results: Mapping[str, CaseResult],
        missing: Sequence[str],
        reference: Reference,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Every subtask of the phase, with CIs and missing lists."""
        resamples, seed = settings["bootstrap_resamples"], settings["seed"]
        aggregates: dict[str, Any] = {}
        per_case: dict[str, dict[str, Any]] = {}
        lists: dict[str, list[str]] = {"jobs": list(missing)}
        cases = list(reference.patients)
        segmentations = [results[c].segmentation for c in cases]
        weights = resample_weights(len(cases), resamples, seed)
        aggregates["segmentation"], per_case = segmentation_aggregates(
            cases, segmentations, weights=weights, aggregate_volume=settings["aggregate_volume"],
            dice_both_empty=settings["dice_both_empty"],
        )  # fmt: skip
        aggregates["detection"], lesions = detection_aggregates(cases, segmentations, weights=weights)
        for case in cases:
            per_case[case].update(lesions[case])
        lists["segmentation"] = [c for c in cases if not results[c].segmentation_submitted]
        aggregates["staging"], staging_missing = staging(results, reference, resamples=resamples, seed=seed)
        lists.update(staging_missing)
        aggregates["prognosis"], lists["prognosis"] = prognosis(
            results, reference, policy=settings["missing_prognosis"], resamples=resamples, seed=seed
        )
        return {
            "aggregates": aggregates,
            "case": per_case,
            "missing": lists,
            "settings": {"challenge": self.name, "ci_level": 0.95, "nsd_tolerances_mm": list(NSD_TOLERANCES_MM),
                         "iou_threshold_gtvn": 0.3, **settings},
        }  # fmt: skip
