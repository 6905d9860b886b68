"""The detection maps of a declared challenge (PI-CAI style), for the ``heat_map`` output kind.

A worker reads one case's map and reference lesion mask and matches the map's lesion candidates to
the reference lesions (``metrics.detection_maps.case_lesions``: PI-CAI's ``evaluate_case``), keeping
only each case's lesion entries and its case score; over the cases, the declared metric is pure
arithmetic on those entries (``lesion_average_precision``, ``lesion_sensitivity_at_fp``,
``case_auroc``, ``picai_score``). This module imports neither the schema nor the output kinds (they
import it): a declaration, an output and a metric are passed in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.bootstrap import drawn_cases, resample_weights
from evaluation.platform.images import (
    GEOMETRY_TOLERANCE,
    on_reference_grid,
    read_image,
    read_input_image,
    read_label_image,
    sitk,
)

if TYPE_CHECKING:  # metrics.detection_maps (with the lesion matching) is imported where a map is scored
    from evaluation.metrics.detection_maps import CaseLesions


@dataclass(frozen=True)
class HeatMapTask:
    """One heat-map output of one case, as a worker needs it: ``matching`` holds the keywords of
    ``case_lesions`` (the output's declared keys)."""

    slug: str
    reference: Path
    prediction: Path | None  # None: the "empty-map" policy of a missing output
    dimension: int
    matching: tuple[tuple[str, Any], ...]
    named: str = ""
    noun: str = ""
    shown: str = ""
    geometry: str = "error"  # as a segmentation's: "error" (the reference grid within tolerance) or "nearest"
    tolerance: float = GEOMETRY_TOLERANCE
    grid: str = "reference grid"

    def score(self, case: str) -> CaseLesions:
        """The case's lesion entries and case score; a map that is not on the reference grid (``geometry``
        "error": size, spacing, origin, direction as a segmentation's) or holds a negative, non-finite or
        too large value is the participant's error; "nearest" resamples it onto the grid."""
        fix = f"; replace {self.shown} in the phase's ground truth" if self.shown else ""
        image = read_label_image(self.reference, case, "reference", "lesion mask", self.dimension, fix)
        reference = sitk.GetArrayFromImage(image)
        if reference.size and reference.min() < 0:
            raise ConfigurationError(f"The reference lesion mask of {case} has a negative label{fix}.", case)
        what, named = self.noun or f"{self.slug!r} map", self.named or case
        if self.prediction is None:
            prediction = np.zeros(reference.shape)
        else:
            submitted = read_map_image(self.prediction, case, named, what, self.dimension)
            prediction = map_values(submitted, case, named, what)
            if self.geometry == "error" and prediction.shape != reference.shape:
                raise SubmissionError(
                    f"The {what} of {named} has size {_size(prediction)}; the reference has {_size(reference)}.", case
                )
            on_grid = on_reference_grid(
                submitted, image, case, self.geometry, self.tolerance, what, self.grid, named=named
            )
            if on_grid is not submitted:  # resampled ("nearest")
                prediction = sitk.GetArrayFromImage(on_grid).astype(np.float64)
        from evaluation.metrics.detection_maps import case_lesions

        try:
            return case_lesions(prediction, reference, **dict(self.matching))
        except ValueError as error:  # e.g. a heat map where a detection map is expected (candidates = "given")
            raise SubmissionError(f"The {what} of {named} cannot be scored: {error}.", case) from None


def _size(array: np.ndarray) -> str:
    return " x ".join(str(n) for n in array.shape[::-1])


def read_map_image(path: Path, case: str, named: str, what: str, dimension: int | None = None) -> sitk.Image:
    """A submitted map as read: one channel (of ``dimension`` dimensions when given)."""
    try:
        image = read_image(path)
    except RuntimeError:
        raise SubmissionError(f"The {what} of {named} could not be read as an image file.", case) from None
    if image.GetNumberOfComponentsPerPixel() != 1:
        raise SubmissionError(
            f"The {what} of {named} has {image.GetNumberOfComponentsPerPixel()} components per pixel; a "
            "single-channel map is expected.",
            case,
        )
    if dimension is not None and image.GetDimension() != dimension:
        raise SubmissionError(
            f"The {what} of {named} is a {image.GetDimension()}D image; a {dimension}D map is expected.", case
        )
    return image


def map_values(image: sitk.Image, case: str, named: str, what: str) -> np.ndarray:
    """A map's values (z, y, x) as float64: finite, non-negative and within the float32 range scored in."""
    from evaluation.metrics.detection_maps import LARGEST

    array = sitk.GetArrayFromImage(image).astype(np.float64)
    if not np.isfinite(array).all():
        raise SubmissionError(f"The {what} of {named} holds a non-finite value.", case)
    if (array < 0).any():
        raise SubmissionError(f"The {what} of {named} holds a negative value ({array.min():g}).", case)
    if array.size and array.max() > LARGEST:
        raise SubmissionError(
            f"The {what} of {named} holds a value too large to score ({array.max():g}; at most {LARGEST:.4g}, "
            "the float32 range maps are scored in).",
            case,
        )
    return array


def heat_map_task(
    declaration: Any, output: Any, case: str, reference: Path, shown: str, prediction: Path | None
) -> HeatMapTask:
    """What a worker needs to score ``output`` (a ``schema.Declaration``'s ``OutputSpec``) of one case."""
    return HeatMapTask(
        slug=output.slug, reference=reference, prediction=prediction, dimension=output.dimension,
        matching=output.options, named=declaration.cases.named(case), noun=output.noun, shown=shown,
        geometry=output.geometry, tolerance=output.tolerance, grid=output.grid,
    )  # fmt: skip


def check_heat_map(declaration: Any, output: Any, path: Path, grid: Path | None, case: str, named: str) -> None:
    """``check_job``'s check of a submitted map: readable, one channel, finite, non-negative, and on the
    input image's grid (the output's ``geometry`` policy) when at hand."""
    what = output.noun or f"'{output.slug}' map"
    image = read_map_image(path, case, named, what, output.dimension)
    array = map_values(image, case, named, what)
    if grid is not None:
        grid_image = read_input_image(grid)
        size = grid_image.GetSize()
        if output.geometry == "error" and tuple(array.shape[::-1]) != tuple(size):
            raise SubmissionError(
                f"The {what} of {named} has size {_size(array)}; the input image has {' x '.join(map(str, size))}.",
                case,
            )
        on_reference_grid(image, grid_image, case, output.geometry, output.tolerance, what, "input image", named=named)


def heat_map_metric(
    metric: Any,
    name: str,
    output: Any,
    cases: list[str],
    results: Mapping[str, Any],
    settings: Mapping[str, Any],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A declared metric (a ``schema.MetricSpec``) of a heat-map output over the scored cases: its
    catalogue entry ``name`` on the cases' lesion entries; an edge value declared "error" refuses a reference
    where the metric is undefined; a bootstrap recomputes it on each resample's drawn cases."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    entries = [results[c].segmentations[output.slug] for c in cases]
    params = dict(metric.params)
    errors = [key for key, value in params.items() if value == "error"]
    keywords = {key: math.nan if key in errors else value for key, value in params.items()}
    key = metric.key("", "value")
    value = float(catalogue.compute(name, entries, **keywords)) if entries else math.nan
    if entries and math.isnan(value) and errors:
        raise ConfigurationError(
            f"The reference of output '{output.slug}' makes {metric.metric} undefined over the scored cases "
            f"(declare {errors[0]} = <number> to give it a value)."
        )
    boot = np.array([np.nan])
    if metric.bootstrap and entries:
        weights = resample_weights(len(entries), settings["bootstrap_resamples"], settings["seed"])
        boot = np.array([catalogue.compute(name, [entries[i] for i in drawn], **keywords)
                         for drawn in drawn_cases(weights)], dtype=float)  # fmt: skip
    return {key: value}, {key: boot}


def heat_map_case_values(metric: Any, output: Any, cases: list[str], results: Mapping[str, Any]) -> dict[str, dict]:
    """The per-case entries of ``lesion_count`` (a ``schema.MetricSpec``): each case's count at
    ``<name>``, and with ``case_entries`` its lesion entries ``[score, lesion]`` at ``<name>_entries``
    in ``picai_eval``'s order (``evaluate_case``'s lesion_results without the overlap: matched lesions,
    missed lesions with score 0, false positives)."""
    from evaluation.metrics.detection_maps import case_lesion_counts

    params = dict(metric.params)
    entries = [results[c].segmentations[output.slug] for c in cases]
    counts = case_lesion_counts(entries, params["count"]) if entries else []
    found: dict[str, dict] = {}
    for case, lesions, count in zip(cases, entries, counts, strict=True):
        found[case] = {metric.name: int(count)}
        if params["case_entries"]:
            pairs = zip(lesions.confidence.tolist(), lesions.is_lesion.tolist(), strict=True)
            found[case][f"{metric.name}_entries"] = [[score, bool(hit)] for score, hit in pairs]
    return found
