"""HECKTOR 2026: PET/CT head and neck tumour segmentation, GTVn detection, TN staging and
recurrence-free survival. HECKTOR 2025 tasks 1 (segmentation, detection), 2 (RFS) and 3 (HPV status)
are declarations: ``evaluation/declarations/hecktor2025-task1.toml``, ``-task2.toml`` and ``-task3.toml``.

Choices and options: ../shared/spec/challenges.md (HECKTOR); the seed ../shared/seeds/001_*.
References: BioMedIA-MBZUAI/HECKTOR2025 ``Task1/utils/metrics.py`` (aggregated Dice in mm³, 1.0 for a
label absent everywhere), BioMedIA-MBZUAI/HECKTOR2026 README and ``Task/inference.py`` (sockets, stage
strings, RFS in days), voreille/hecktor ``notebooks/evaluate_segmentation2022.ipynb`` (aggregated
Dice) and ``src/aicrowd_evaluator/survival_metrics.py`` (C-index, missing predictions as ties).

The images are HECKTOR 2025 task 1's: segmentation (aggregated and per-patient Dice, HD95, NSD) and
GTVn detection are that declaration on the 2026 socket (``IMAGES``), so the declared engine reads and
checks each image once in ``score_case``, reduces it to small numbers and aggregates them with their
bootstrap CIs, with the same options. What stays here, HECKTOR 2026's own: the T/N stage strings and
the RFS output (``parse_stage``, ``parse_rfs``), clinical.csv, staging (balanced accuracy over the
patients with both stages known), prognosis (C-index over the patients with a known RFS) and the
metrics.json assembly.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.contract import DECLARATIONS, CaseTask, Challenge, Checked, Option, Phase, Prepared, input_image
from evaluation.declarative.engine import DeclaredChallenge
from evaluation.declarative.reference import DeclaredReference
from evaluation.declarative.schema import Declaration, parse_data
from evaluation.declarative.segmentation import CasePayload, CaseResult, check_segmentation, segmentation_task
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.bootstrap import percentile_interval, resample_weights
from evaluation.metrics.survival import MISSING_POLICIES, concordance_index
from evaluation.platform.predictions import Job, Socket
from evaluation.platform.sockets import finite_number, image_output_file, read_json_output

CT = Socket("ct-image", "images/ct", "Image", "Image")
PET = Socket("pet-image", "images/pet", "Image", "Image")
SEGMENTATION_2026 = Socket(
    "head-neck-tumor-segmentation", "images/head-neck-tumor-segmentation", "Segmentation", "Image"
)
T_STAGE = Socket("t-stage", "t-stage.json", "String", "Value")
N_STAGE = Socket("n-stage", "n-stage.json", "String", "Value")
RFS = Socket("rfs", "rfs.json", "Float", "Value")

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
    """The patients (sorted), their label images (the declared engine's reference) and clinical data."""

    patients: tuple[str, ...]
    images: DeclaredReference
    clinical: Mapping[str, Clinical] = field(default_factory=dict)


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


# ------------------------------------------------------------------ segmentation and detection


def _renamed(data: Any, old: str, new: str) -> Any:
    """``data`` (parsed TOML) with ``old`` replaced by ``new`` in every key and string."""
    if isinstance(data, dict):
        return {key.replace(old, new): _renamed(value, old, new) for key, value in data.items()}
    if isinstance(data, list):
        return [_renamed(value, old, new) for value in data]
    return data.replace(old, new) if isinstance(data, str) else data


def _images_declaration() -> Declaration:
    """HECKTOR 2025 task 1's declaration on the 2026 segmentation socket: 2026 scores its images as
    task 1 does (aggregated and per-patient Dice, HD95, NSD, GTVn detection F1, the same options), so
    the declared engine reads, scores and aggregates them; this module adds staging and prognosis."""
    file = "hecktor2025-task1.toml"
    data = tomllib.loads((DECLARATIONS / file).read_text(encoding="utf-8"))
    (segmentation,) = data["outputs"]
    data = _renamed(data, segmentation["slug"], SEGMENTATION_2026.slug)
    return parse_data({**data, "name": "hecktor2026"}, file)  # settings name the 2026 challenge


IMAGES = DeclaredChallenge(_images_declaration())


# -------------------------------------------------------------------------------- staging, prognosis


def _with_ci(name: str, value: float, resamples: np.ndarray, level: float = 0.95) -> dict[str, float]:
    low, high = percentile_interval(resamples, level)
    return {name: float(value), f"{name}_ci_low": low, f"{name}_ci_high": high}


def _ranked(value: float, what: str) -> float:
    if not np.isfinite(value):
        raise ConfigurationError(f"The {what} is undefined for this ground truth; check the reference data.")
    return float(value)


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
        predicted = [results[c].values.get(socket.slug, INVALID) for c in cases]
        name = f"balanced_accuracy_{column[0]}"
        value = _ranked(balanced_accuracy(truth, predicted), f"{column[0].upper()} balanced accuracy")
        boots.append(balanced_accuracy(truth, predicted, weights))
        aggregates.update(_with_ci(name, value, boots[-1]))
        missing[column] = [c for c in cases if socket.slug not in results[c].values]
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
    risk = np.array([results[c].values.get(RFS.slug, np.nan) for c in cases], dtype=float)
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
        images = IMAGES.load_reference(ground_truth, settings)
        clinical = _clinical(ground_truth)
        lacking = [p for p in images.cases if p not in clinical]
        if lacking:
            raise ConfigurationError(f"{CLINICAL_FILE} has no row for {lacking[0]}, which has a label image.")
        return Reference(images.cases, images, clinical)

    def _parsers(self, settings: Mapping[str, Any]) -> dict[str, Callable[[Any, str], Any]]:
        """The parser of each value output (``VALUE_OUTPUTS`` order), the options that shape it bound once."""
        return {
            T_STAGE.slug: partial(parse_stage, axis="T", invalid=settings["invalid_stage"]),
            N_STAGE.slug: partial(parse_stage, axis="N", invalid=settings["invalid_stage"]),
            RFS.slug: partial(parse_rfs, output=settings["rfs_output"]),
        }

    def prepare(self, input_dir: Path, reference: Reference, settings: Mapping[str, Any]) -> Prepared:
        matched = self.jobs_by_case(input_dir, reference.patients)
        parsers = self._parsers(settings)
        declaration = IMAGES.in_force(settings)
        tasks = []
        for case in reference.patients:
            job = matched.jobs.get(case)
            prediction, outputs = None, {}
            if job is not None:
                prediction = image_output_file(input_dir, job, SEGMENTATION_2026.slug, case)
                outputs = _value_outputs(input_dir, job, case, parsers)
            file = reference.images.files[SEGMENTATION_2026.slug][case]
            shown = file.relative_to(reference.images.root).as_posix()
            image = segmentation_task(
                declaration, declaration.output(SEGMENTATION_2026.slug), case, file, shown, prediction
            )
            submitted = {SEGMENTATION_2026.slug: prediction is not None}
            tasks.append(CaseTask(case, CasePayload((image,), outputs, submitted)))
        return Prepared(tasks, matched.missing)

    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        """What ``prepare`` reads and what ``score_case`` checks of the submitted segmentation (pixel
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
        declaration = IMAGES.in_force(settings)
        checked.later.append(
            partial(check_segmentation, declaration, declaration.output(SEGMENTATION_2026.slug), path, ct, case, case)
        )
        return checked

    score_case = staticmethod(DeclaredChallenge.score_case)  # the segmentation numbers; values pass through

    def aggregate(
        self,
        results: Mapping[str, CaseResult],
        missing: Sequence[str],
        reference: Reference,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Every subtask of the phase, with CIs and missing lists."""
        resamples, seed = settings["bootstrap_resamples"], settings["seed"]
        # segmentation and detection aggregates, the per-patient values, missing lists and settings (the
        # options after the declared constants); staging and prognosis are added to them
        result = IMAGES.aggregate(results, missing, reference.images, settings)
        aggregates, lists = result["aggregates"], result["missing"]
        aggregates["staging"], staging_missing = staging(results, reference, resamples=resamples, seed=seed)
        lists.update(staging_missing)
        aggregates["prognosis"], lists["prognosis"] = prognosis(
            results, reference, policy=settings["missing_prognosis"], resamples=resamples, seed=seed
        )
        return result
