"""The per-case work of a declared challenge in a worker: a case's payload and result, and its segmentations.

``score_segmentation`` reads each label image pair once (``platform.images.read_label_pair``: the HECKTOR
geometry rules; "nonzero" 2D masks: ``read_nonzero_mask``, same size in pixels) and reduces it with
``metrics.segmentation.summarise_label_maps`` (the scoring function HECKTOR 2026 shares) to small numbers per
label, only those its metrics request: voxel counts, HD95 / HD / MASD / NSD from one surface computation, volume
differences, lesion TP / FP / FN per IoU threshold and matching, panoptic quality. ``check_segmentation`` makes
the same checks of a submitted segmentation for ``check_job``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.declarative.output_kinds import OutputSpec, region_of
from evaluation.declarative.python_metric import CaseCall, CaseContext, ValueCase, case_calls
from evaluation.declarative.schema import Declaration, MetricSpec
from evaluation.platform.images import (
    read_input_image,
    read_label_pair,
    read_nonzero_mask,
    read_submitted_labels,
    same_size,
    sitk,
)

if TYPE_CHECKING:  # (metrics.segmentation, with every metric module it calls, is imported where a case is scored)
    from evaluation.metrics.segmentation import CaseSegmentation, LabelRequest, LesionVolumeForm, LesionWiseForm


@dataclass(frozen=True, eq=False)
class SegmentationTask:
    """One segmentation output of one case, as a worker needs it."""

    slug: str
    reference: Path
    prediction: Path | None  # None: the empty-mask policy of a missing output
    labels: tuple[tuple[str, int | str | tuple[int, ...]], ...]
    voxel_values: tuple[int, ...]  # every value its label images may hold besides 0
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
    python: tuple[CaseCall, ...] = ()  # the per-case python metrics of this output, on the arrays read here

    def score(self, case: str) -> CaseSegmentation:
        return score_segmentation(self, case)[0]

    def score_with_python(self, case: str) -> tuple[CaseSegmentation, dict[str, dict[str, float]]]:
        """The case's numbers, and its python metrics' values (metric -> name -> value)."""
        return score_segmentation(self, case)


@dataclass(frozen=True, eq=False)
class CasePayload:
    """What a worker gets: segmentations to score, parsed values (after the missing policies), and
    which outputs the participant submitted."""

    segmentations: tuple[SegmentationTask, ...]
    values: Mapping[str, Any]
    submitted: Mapping[str, bool]
    python: tuple[ValueCase, ...] = ()  # the per-case python metrics of its value outputs


@dataclass(frozen=True, eq=False)
class CaseResult:
    segmentations: Mapping[str, CaseSegmentation]
    values: Mapping[str, Any]
    submitted: Mapping[str, bool]
    python: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # python metric -> name -> value


def submitted_labels(
    output: SegmentationTask | OutputSpec, path: Path, grid: sitk.Image | None, case: str, hint: str = ""
) -> tuple[sitk.Image, np.ndarray]:
    """The submitted label image of ``output`` as ``platform.images.read_submitted_labels`` reads it."""
    return read_submitted_labels(
        path, grid, case, output.voxel_values, what=output.noun or f"'{output.slug}' segmentation",
        dimension=output.dimension, policy=output.geometry, tolerance=output.tolerance, grid_name=output.grid,
        hint=hint,
    )  # fmt: skip


def score_segmentation(task: SegmentationTask, case: str) -> tuple[CaseSegmentation, dict[str, dict[str, float]]]:
    """Read the reference and prediction once, check them, and compute every requested number
    (``metrics.segmentation.summarise_label_maps``; a 2D non-zero mask gives voxel counts only) and the
    python metrics' values on the same arrays."""
    from evaluation.metrics.segmentation import summarise_label_maps

    what = task.noun or f"'{task.slug}' segmentation"
    if task.nonzero:
        named = task.named or case
        prediction = None
        if task.prediction is not None:
            prediction = read_nonzero_mask(task.prediction, case, "predicted", named, what)
        reference = read_nonzero_mask(task.reference, case, "reference", named, what, task.shown)
        prediction = np.zeros_like(reference) if prediction is None else prediction
        same_size(prediction, reference, case, named, what)
        context = CaseContext(case, task.slug, (1.0, 1.0), None, dict(task.labels))
        python = {call.metric: call.run(case, prediction, reference, context) for call in task.python}
        return summarise_label_maps(reference, prediction, (1.0, 1.0), dict(task.requests)), python
    pair = read_label_pair(
        task.reference, task.prediction, case, task.voxel_values, what=what,
        dimension=task.dimension, policy=task.geometry, tolerance=task.tolerance, grid_name=task.grid,
        hint=task.hint, fix=f"; replace {task.shown} in the phase's ground truth" if task.shown else "",
    )  # fmt: skip
    origin = tuple(reversed(pair.images[0].GetOrigin()))  # (z, y, x), as the arrays and the spacing
    context = CaseContext(case, task.slug, tuple(pair.spacing), origin, dict(task.labels))
    python = {call.metric: call.run(case, pair.prediction, pair.reference, context) for call in task.python}
    return summarise_label_maps(pair.reference, pair.prediction, pair.spacing, dict(task.requests)), python


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


def _request(metrics: Sequence[MetricSpec], label: str, value: int | str | tuple[int, ...]) -> LabelRequest:
    """What the ``metrics`` (of one output) need of ``label`` beyond its voxel counts."""
    from evaluation.metrics.segmentation import LabelRequest

    mine = [m for m in metrics if label in m.labels]

    def thresholds(metric: str, matching: str | None = None) -> tuple[float, ...]:
        return tuple(m.param("iou_threshold") for m in mine
                     if m.metric == metric and (matching is None or m.param("matching") == matching))  # fmt: skip

    return LabelRequest(
        value=value if isinstance(value, tuple) else region_of(value)[0],
        hd95=any(m.metric == "hd95" for m in mine),
        hausdorff=any(m.metric == "hausdorff" for m in mine),
        masd=any(m.metric == "masd" for m in mine),
        nsd=tuple(m.param("tolerance_mm") for m in mine if m.metric == "nsd"),
        lesions=thresholds("lesion_f1", "greedy"),
        hungarian=thresholds("lesion_f1", "hungarian"),
        panoptic=thresholds("panoptic_quality"),
        volumes=tuple(volume_key(m) for m in mine if m.metric == "volume_difference"),
        lesion_volumes=tuple(dict.fromkeys(lesion_volume_key(m) for m in mine if m.metric in LESION_VOLUMES)),
        lesion_wise=tuple(dict.fromkeys(lesion_wise_key(m) for m in mine if m.metric in LESION_WISE)),
        overlap_lesions=tuple(dict.fromkeys(m.param("connectivity") for m in mine if m.metric in OVERLAP_LESIONS)),
    )


def segmentation_task(
    declaration: Declaration, output: OutputSpec, case: str, reference: Path, shown: str, prediction: Path | None
) -> SegmentationTask:
    """What a worker needs to score ``output`` of one case: only the numbers the metrics ask for."""
    metrics = [m for m in declaration.metrics if m.output == output.slug and dict(m.params).get("compute", True)]
    return SegmentationTask(
        slug=output.slug, reference=reference, prediction=prediction, labels=output.labels,
        voxel_values=output.voxel_values,
        geometry=output.geometry, tolerance=output.tolerance, dimension=output.dimension,
        nonzero=output.nonzero, named=declaration.cases.named(case), noun=output.noun, shown=shown,
        grid=output.grid, hint=_resample_hint(declaration, output) if output.geometry == "error" else "",
        requests=tuple((name, _request(metrics, name, value)) for name, value in output.labels),
        python=case_calls(declaration.metrics, output.slug, declaration.folder, declaration.option_values()),
    )  # fmt: skip


def volume_key(metric: MetricSpec) -> tuple[bool, bool, bool]:
    """How a worker keys one declared volume difference: (relative, absolute, in mm³; ml is mm³ / 1000)."""
    return metric.param("relative"), metric.param("absolute"), metric.param("volume") != "voxels"


LESION_VOLUMES = {  # autoPET's volumes: declared metric -> what ``summarise_label_maps`` measures
    "false_positive_volume": "false_positive",
    "false_negative_volume": "false_negative",
    "reference_volume": "reference",
}
LESION_WISE = ("lesion_wise_dice", "lesion_wise_hd95")
OVERLAP_LESIONS = ("overlap_lesion_f1", "lesion_count_difference")  # lesions detected by any overlap (ISLES 2022)


def lesion_volume_key(metric: MetricSpec) -> LesionVolumeForm:
    """How a worker keys one declared autoPET volume (the reference volume has no connectivity: 18)."""
    params = dict(metric.params)
    return LESION_VOLUMES[metric.metric], params.get("connectivity", 18), params["unit"], params["precision"]


def lesion_wise_key(metric: MetricSpec) -> LesionWiseForm:
    """How a worker keys one declared BraTS 2023 lesion-wise evaluation (Dice and HD95 share it)."""
    return (metric.param("dilation"), float(metric.param("minimum_volume")), metric.param("volume_unit"),
            metric.param("connectivity"), float(metric.param("penalty")))  # fmt: skip


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
