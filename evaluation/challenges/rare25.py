"""RARE25: early neoplasia in Barrett's esophagus, PPV at 90% recall under a 1:100 prevalence.

Reference: TUE-VCA/Grand-Challenge-RARE25, open-development-phase/example-evaluation-method/
evaluate.py (``bootstrap_metrics``); choices and options: ../shared/spec/challenges.md (RARE25).

The bootstrap itself (both protocols, the legacy draws, the counting at the patient level) is the pure
function ``prevalence_bootstrap`` of evaluation/metrics/prevalence_bootstrap.py; here: the files, the
checks and messages, the options and the metrics.json layout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.contract import CaseTask, Challenge, Checked, Option, Phase, Prepared, input_image
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.precision_recall import PPV_METHODS
from evaluation.metrics.prevalence_bootstrap import PROTOCOLS, RNGS, prevalence_bootstrap
from evaluation.platform.files import MAX_JSON_BYTES, read_bytes
from evaluation.platform.predictions import Job, Socket
from evaluation.platform.sockets import finite_number, output_file, parse_json_bytes

INPUT = Socket(
    "stacked-barretts-esophagus-endoscopy-images",
    "images/stacked-barretts-esophagus-endoscopy",
    "Image",
    "Image",
)
OUTPUT = Socket(
    "stacked-neoplastic-lesion-likelihoods",
    "stacked-neoplastic-lesion-likelihoods.json",
    "Anything",
    "File",
)
METADATA_FILE = "val_metadata.json"
TARGET_RECALL = 0.9
BOOTSTRAP_OPTIONS = ("protocol", "iterations", "sample_size", "imbalance_ratio", "rng", "seed", "ppv_at_recall")


@dataclass(frozen=True)
class Stack:
    """One ground-truth stack: frame labels (1 = neo) and patients, in frame-index order."""

    labels: np.ndarray
    patients: tuple[str, ...]


def _load_metadata(ground_truth: Path) -> dict[str, Stack]:
    path = ground_truth / METADATA_FILE
    if not path.is_file():
        raise ConfigurationError(f"The RARE25 ground truth has no {METADATA_FILE}.")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        stacks = {}
        for name, frames in document.items():
            frames = sorted(frames, key=lambda frame: int(frame["index"]))
            classes = [frame["class"] for frame in frames]
            if set(classes) - {"ndbe", "neo"}:
                raise ValueError("class is not 'ndbe' or 'neo'")
            stacks[name] = Stack(
                labels=np.array([c == "neo" for c in classes], dtype=np.int8),
                patients=tuple(str(frame["patient_id"]) for frame in frames),
            )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise ConfigurationError(
            f"The RARE25 ground truth {METADATA_FILE} is malformed ({type(error).__name__}): fix it in the "
            "phase's ground truth (see the documentation's RARE25 page for its format)."
        ) from None
    if not stacks:
        raise ConfigurationError(f"The RARE25 ground truth {METADATA_FILE} lists no stack.")
    return dict(sorted(stacks.items()))


def read_likelihoods(path: Path, n_frames: int | None, stack: str) -> np.ndarray:
    """The stack's likelihoods: a JSON list of finite numbers, exactly one per frame (any number of
    them when ``n_frames`` is ``None``: the pre-flight check without the input stack)."""
    what = f"The likelihoods of stack {stack}"
    data = read_bytes(path, what, stack, MAX_JSON_BYTES)
    values = parse_json_bytes(data, what, stack, constants=True)  # a NaN is named by its frame below
    if not isinstance(values, list):
        raise SubmissionError(f"The likelihoods of stack {stack} are not a JSON list of numbers.", stack)
    for position, value in enumerate(values):  # a value that is no number is named before a wrong count
        finite_number(value, f"Likelihood {position} of stack {stack}", stack)
    if n_frames is not None and len(values) != n_frames:
        raise SubmissionError(f"Stack {stack} has {n_frames} frames but {len(values)} likelihoods were given.", stack)
    return np.asarray(values, dtype=float)


def _likelihoods_file(input_dir: Path, job: Job, stack: str) -> Path:
    path = output_file(input_dir, job, OUTPUT.slug, stack)
    if path is None:
        raise SubmissionError(f"Stack {stack} has no output file {OUTPUT.relative_path}.", stack)
    return path


def frames(stack: Path) -> int:
    """The frames of an input stack (a multi-page TIFF), from its header alone."""
    import SimpleITK as sitk

    reader = sitk.ImageFileReader()
    reader.SetFileName(str(stack))
    try:
        reader.ReadImageInformation()
    except RuntimeError:
        raise ConfigurationError(f"The input stack {stack.name} cannot be read as an image.") from None
    return reader.GetSize()[2] if reader.GetDimension() > 2 else 1


class Rare25(Challenge):
    name = "rare25"
    cases_in_process = True
    title = "RARE25: early neoplasia in Barrett's esophagus (PPV at 90% recall)"
    phase = Phase(
        inputs=(INPUT,),
        outputs=(OUTPUT,),
        score_title="PPV@90 recall (median over 1000 bootstrap samples at 1:100 prevalence)",
        score_jsonpath="Score",
        score_default_sort="desc",
        score_decimal_places=4,
        extra_results_columns=(
            {"title": "AUROC", "path": "AUROC", "order": "desc", "exclude_from_ranking": True},
            {"title": "AUPRC", "path": "AUPRC", "order": "desc", "exclude_from_ranking": True},
        ),
    )
    options = (
        Option(
            "protocol",
            "official",
            "bootstrap protocol: the official code's patient-level bootstrap, or the website's frame-level one",
            PROTOCOLS,
        ),
        Option("seed", 0, "bootstrap seed"),
        Option(
            "rng",
            "legacy",
            "legacy: np.random.seed(seed) and the official loop's draws (reproducible "
            "with the official code); generator: numpy.random.default_rng(seed)",
            RNGS,
        ),
        Option("iterations", 1000, "bootstrap iterations"),
        Option("sample_size", 10, "neoplastic patients drawn per iteration (official protocol)"),
        Option("imbalance_ratio", 100, "NDBE draws per neoplastic draw (prevalence 1:ratio)"),
        Option(
            "ppv_at_recall",
            "interp",
            "interp: np.interp on the PR curve as the official code "
            "(quirks kept); max_precision: best precision with recall >= 0.9",
            PPV_METHODS,
        ),
    )

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> dict[str, Stack]:
        for key in ("iterations", "sample_size", "imbalance_ratio"):
            if settings[key] < 1:
                raise ConfigurationError(f"Option {key} must be at least 1.")
        return _load_metadata(ground_truth)

    def prepare(self, input_dir: Path, reference: Mapping[str, Stack], settings: Mapping[str, Any]) -> Prepared:
        jobs = self.jobs_by_case(input_dir, reference, same_stem=True, every="stack").jobs
        tasks = [CaseTask(stack, (_likelihoods_file(input_dir, job, stack), reference[stack].labels.size))
                 for stack, job in jobs.items()]  # fmt: skip
        return Prepared(tasks)

    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        """The likelihoods as ``score_case`` reads them; one per frame when the input stack is at hand
        (its frames counted from the TIFF's header)."""
        path, stack = _likelihoods_file(input_dir, job, case), input_image(images, job, INPUT.slug)
        n_frames = None if stack is None else frames(stack)
        return Checked(
            unchecked=[] if stack else ["one likelihood per frame (give --images to count the frames)"],
            later=[lambda: read_likelihoods(path, n_frames, case)],
        )

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> np.ndarray:
        path, n_frames = task.payload
        return read_likelihoods(path, n_frames, task.case)

    def aggregate(
        self,
        results: Mapping[str, np.ndarray],
        missing: Sequence[str],
        reference: Mapping[str, Stack],
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        stacks = sorted(results)  # jobs by input image name, frames by index (challenges.md)
        labels = np.concatenate([reference[s].labels for s in stacks])
        patients = [p for s in stacks for p in reference[s].patients]
        options = {key: settings[key] for key in BOOTSTRAP_OPTIONS}
        try:
            numbers = prevalence_bootstrap(labels, np.concatenate([results[s] for s in stacks]), patients,
                                           recall=TARGET_RECALL, **options)  # fmt: skip
        except ValueError:
            which = "patients" if settings["protocol"] == "official" else "frames"
            raise ConfigurationError(f"The RARE25 ground truth needs both neoplastic and NDBE {which}.") from None
        return {
            **numbers,
            "settings": self.settings_echo(settings, before={"target_recall": TARGET_RECALL}),
            "dataset": {
                "stacks": len(stacks),
                "frames": int(labels.size),
                "neoplastic_frames": int(labels.sum()),
                "patients": len(set(patients)),
            },
        }
