"""RARE25: early neoplasia in Barrett's esophagus, PPV at 90% recall under a 1:100 prevalence.

Reference: TUE-VCA/Grand-Challenge-RARE25, open-development-phase/example-evaluation-method/
evaluate.py (``bootstrap_metrics``); choices and options: ../shared/spec/challenges.md (RARE25).

- ``protocol=official``: per iteration draw 10 neoplastic and 10 * 100 NDBE patients with
  replacement (neoplastic first), take every frame of every drawn patient, and compute AUROC, AUPRC
  and PPV@90; 1000 iterations; medians and 2.5/97.5 percentiles. With ``rng=legacy`` the draws are
  those of ``np.random.seed(seed)`` followed by the official loop (``np.random.choice`` is
  ``RandomState.randint`` over the patient list), patients listed in order of first appearance,
  frames concatenated by stack name, then by frame index.
- ``protocol=website``: every NDBE frame once plus ``max(1, round(n_ndbe / 100))`` neoplastic frames
  drawn with replacement, 1000 iterations (the challenge website's description).

The iterations are computed at once from how often each patient (each neoplastic frame and the
NDBE frames as one group, for the website protocol) is drawn: one matrix product of the draw counts
with per-patient counts at the distinct neoplastic scores (evaluation/metrics/precision_recall.py),
not 3000 scikit-learn calls; the full-dataset values come from the same code, equal to
scikit-learn's in the tests.
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
from evaluation.metrics.bootstrap import row_counts
from evaluation.metrics.precision_recall import PPV_METHODS, CurveMetrics, curve_metrics, grouped_curve_metrics
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
            "phase's ground truth (see the README's RARE25 section for its format)."
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


def _draw_counts(neo: int, ndbe: int, iterations: int, sample_size: int, ratio: int, rng: str, seed: int) -> np.ndarray:
    """How often each patient is drawn per iteration, neoplastic then NDBE draws in each iteration:
    (iterations, neo + ndbe), the neoplastic list's patients first."""
    n_ndbe_draws = sample_size * ratio
    if rng == "legacy":
        # np.random.choice(population, size, replace=True) draws RandomState.randint(0, len, size);
        # the two calls per iteration interleave, so the stream is consumed in the official order.
        state = np.random.RandomState(seed)
        counts = np.empty((iterations, neo + ndbe), dtype=np.int64)
        for iteration in range(iterations):
            counts[iteration, :neo] = np.bincount(state.randint(0, neo, size=sample_size), minlength=neo)
            counts[iteration, neo:] = np.bincount(state.randint(0, ndbe, size=n_ndbe_draws), minlength=ndbe)
        return counts
    generator = np.random.default_rng(seed)
    neo_draws = generator.integers(0, neo, size=(iterations, sample_size))
    ndbe_draws = generator.integers(0, ndbe, size=(iterations, n_ndbe_draws))
    return np.hstack([row_counts(neo_draws, neo), row_counts(ndbe_draws, ndbe)])


def official_bootstrap_counts(
    labels: np.ndarray,
    patients: Sequence[str],
    *,
    iterations: int,
    sample_size: int,
    imbalance_ratio: int,
    rng: str,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(patient of each frame, draws: iterations x patients): how often each patient, numbered in
    order of first appearance, is in each iteration's sample of ``sample_size`` neoplastic and
    ``sample_size * imbalance_ratio`` NDBE patients (``rng``, ``seed``: the options of that name)."""
    first_seen: dict[str, int] = {}
    for patient in patients:
        first_seen.setdefault(patient, len(first_seen))
    patient_index = np.array([first_seen[p] for p in patients], dtype=np.int64)
    neoplastic = np.zeros(len(first_seen), dtype=bool)
    np.logical_or.at(neoplastic, patient_index, labels.astype(bool))
    neo_patients, ndbe_patients = np.flatnonzero(neoplastic), np.flatnonzero(~neoplastic)
    if neo_patients.size == 0 or ndbe_patients.size == 0:
        raise ConfigurationError("The RARE25 ground truth needs both neoplastic and NDBE patients.")
    drawn = _draw_counts(neo_patients.size, ndbe_patients.size, iterations, sample_size, imbalance_ratio, rng, seed)
    counts = np.empty_like(drawn)
    counts[:, np.concatenate([neo_patients, ndbe_patients])] = drawn
    return patient_index, counts


def website_bootstrap_counts(
    labels: np.ndarray, *, iterations: int, imbalance_ratio: int, rng: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(group of each frame, draws: iterations x groups) for the website protocol: each neoplastic
    frame is a group drawn with replacement (``round(NDBE frames / imbalance_ratio)`` draws, at least
    one); the NDBE frames are one last group, taken once."""
    neo_frames = np.flatnonzero(labels == 1)
    n_ndbe = int(np.count_nonzero(labels == 0))
    if neo_frames.size == 0 or n_ndbe == 0:
        raise ConfigurationError("The RARE25 ground truth needs both neoplastic and NDBE frames.")
    size = max(1, round(n_ndbe / imbalance_ratio))
    if rng == "legacy":
        state = np.random.RandomState(seed)
        draws = np.stack([state.randint(0, neo_frames.size, size=size) for _ in range(iterations)])
    else:
        draws = np.random.default_rng(seed).integers(0, neo_frames.size, size=(iterations, size))
    group = np.full(labels.size, neo_frames.size, dtype=np.int64)
    group[neo_frames] = np.arange(neo_frames.size)
    counts = np.hstack([row_counts(draws, neo_frames.size), np.ones((iterations, 1), dtype=np.int64)])
    return group, counts


def _summary(name: str, values: np.ndarray) -> dict[str, float]:
    low, high = np.percentile(values, [2.5, 97.5])
    return {
        name: float(np.median(values)),
        f"{name} 95% CI Lower Bound": float(low),
        f"{name} 95% CI Upper Bound": float(high),
    }


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
            ("official", "website"),
        ),
        Option("seed", 0, "bootstrap seed"),
        Option(
            "rng",
            "legacy",
            "legacy: np.random.seed(seed) and the official loop's draws (reproducible "
            "with the official code); generator: numpy.random.default_rng(seed)",
            ("legacy", "generator"),
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
        scores = np.concatenate([results[s] for s in stacks])
        patients = [p for s in stacks for p in reference[s].patients]
        method = settings["ppv_at_recall"]
        full = curve_metrics(labels, scores, TARGET_RECALL, method)
        draws = {key: settings[key] for key in ("iterations", "imbalance_ratio", "rng", "seed")}
        if settings["protocol"] == "official":
            group, counts = official_bootstrap_counts(labels, patients, sample_size=settings["sample_size"], **draws)
        else:
            group, counts = website_bootstrap_counts(labels, **draws)
        boot: CurveMetrics = grouped_curve_metrics(labels, scores, group, counts, TARGET_RECALL, method)
        ppv = _summary("PPV@90RECALL", boot.ppv)
        return {
            "Score": ppv["PPV@90RECALL"],
            **ppv,
            **_summary("AUROC", boot.auroc),
            **_summary("AUPRC", boot.auprc),
            "AUROC Full Dataset": float(full.auroc[0]),
            "AUPRC Full Dataset": float(full.auprc[0]),
            "PPV@90RECALL Full Dataset": float(full.ppv[0]),
            "settings": self.settings_echo(settings, before={"target_recall": TARGET_RECALL}),
            "dataset": {
                "stacks": len(stacks),
                "frames": int(labels.size),
                "neoplastic_frames": int(labels.sum()),
                "patients": len(set(patients)),
            },
        }
