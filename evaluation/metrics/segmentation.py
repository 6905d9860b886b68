"""Everything a case contributes to segmentation scores, from two label maps in one pass.

A bootstrap resamples cases, never images: each case is reduced once to small numbers per label
(voxel counts of the reference, the prediction and their intersection, which give per-case and
aggregated Dice with :mod:`evaluation.metrics.overlap`; HD95 and NSD from one surface-distance
computation, :mod:`evaluation.metrics.surface`; lesion TP/FP/FN, :mod:`evaluation.metrics.lesions`).
Both maps are cropped to the padded bounding box of their union first (what changes no number and
saves most of the work on head-and-neck volumes). Reference for the HECKTOR use: BioMedIA-MBZUAI/
HECKTOR2025 ``Task1/utils/metrics.py`` (aggregated Dice from per-case volumes, GTVn detection F1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.lesions import LesionCounts, match_lesions
from evaluation.metrics.surface import bounding_box, crop_padded, image_diagonal, surface_distances


@dataclass(frozen=True)
class LabelCounts:
    """One label of one case: voxel counts and surface metrics (NaN where not computed)."""

    reference_voxels: int  # |G|
    prediction_voxels: int  # |P|
    intersection_voxels: int  # |G ∩ P|
    hd95: float  # mm
    nsd: tuple[float, ...]  # one per tolerance


@dataclass(frozen=True)
class CaseSegmentation:
    """One case's numbers: the voxel volume (product of the spacing), each label's counts and the
    lesion counts of the labels matched lesion-wise."""

    voxel_volume: float
    labels: Mapping[int, LabelCounts]
    lesions: Mapping[int, LesionCounts]


def summarise_label_maps(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    labels: Sequence[int],
    nsd_tolerances: Sequence[float] = (),
    surface: bool = True,
    lesion_labels: Sequence[int] = (),
) -> CaseSegmentation:
    """Per-label counts, HD95, NSD at each tolerance (mm) and lesion counts of two label maps.

    Parameters
    ----------
    reference, prediction : (z, y, x) integer label maps of one shape.
    spacing : (3,) voxel size in mm along (z, y, x).
    labels : the label values to score; ``lesion_labels`` (a subset) are also matched lesion-wise
        (connected components, IoU > 0.3, :func:`evaluation.metrics.lesions.match_lesions`).
    nsd_tolerances : the NSD tolerances in mm.
    surface : compute HD95 and NSD (else NaN, except that both maps empty everywhere give the values
        of two empty surfaces: HD95 0.0, NSD 1.0).

    A mask compared with an empty one has the grid diagonal as its distances (HD95 = diagonal).
    """
    checks.same_shape(reference, prediction)
    spacing = tuple(float(s) for s in spacing)
    voxel_volume = float(np.prod(spacing))
    box = bounding_box(reference, prediction)
    if box is None:
        empty = LabelCounts(0, 0, 0, 0.0, tuple(1.0 for _ in nsd_tolerances))
        return CaseSegmentation(
            voxel_volume, {label: empty for label in labels}, {label: LesionCounts(0, 0, 0) for label in lesion_labels}
        )
    diagonal = image_diagonal(reference.shape, spacing)
    ref, pred = crop_padded(reference, box), crop_padded(prediction, box)
    counts: dict[int, LabelCounts] = {}
    lesions: dict[int, LesionCounts] = {}
    for label in labels:
        r, p = ref == label, pred == label
        hd95, nsd = float("nan"), tuple(float("nan") for _ in nsd_tolerances)
        if surface:
            distances = surface_distances(r, p, spacing, empty_distance=diagonal)
            hd95, nsd = distances.hd(95.0), tuple(distances.nsd(t) for t in nsd_tolerances)
        n_ref, n_pred = int(np.count_nonzero(r)), int(np.count_nonzero(p))
        counts[label] = LabelCounts(n_ref, n_pred, int(np.count_nonzero(r & p)), hd95, nsd)
        if label in lesion_labels:
            lesions[label] = match_lesions(r, p)
    return CaseSegmentation(voxel_volume, counts, lesions)
