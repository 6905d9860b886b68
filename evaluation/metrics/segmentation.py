"""Everything a case contributes to segmentation scores, from two label maps in one pass: the one
per-case label-map scoring function of the project (HECKTOR 2026 and every declared challenge).

A bootstrap resamples cases, never images: each case is reduced once to small numbers per label
(voxel counts of the reference, the prediction and their intersection, which give per-case and
aggregated Dice with :mod:`evaluation.metrics.overlap`; HD95, HD, MASD and NSD from one surface-distance
computation per label, :mod:`evaluation.metrics.surface`; volume differences; lesion TP / FP / FN,
greedy or Hungarian, and panoptic quality, :mod:`evaluation.metrics.lesions`), each only where a
:class:`LabelRequest` asks for it. Both maps are cropped to the padded bounding box of their union
first (what changes no number and saves most of the work on head-and-neck volumes). Reference for the
HECKTOR use: BioMedIA-MBZUAI/HECKTOR2025 ``Task1/utils/metrics.py`` (aggregated Dice from per-case
volumes, GTVn detection F1).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.boxes import bounding_box, crop_padded, cropped_pair
from evaluation.metrics.lesion_detection import OverlapDetection, overlap_detection
from evaluation.metrics.lesion_wise import LesionWiseScores, lesion_wise_scores
from evaluation.metrics.lesions import LesionCounts, PanopticQuality, pair_lesions, panoptic_from_matches
from evaluation.metrics.overlap import volume_difference
from evaluation.metrics.regions import region_mask
from evaluation.metrics.surface import image_diagonal, pair_surface_distances
from evaluation.metrics.volumes import false_negative_volume, false_positive_volume, mask_volume
from evaluation.metrics.volumes import voxel_volume as volume_of_one_voxel

VolumeForm = tuple[bool, bool, bool]  # (relative, absolute, in the spacing's volume unit rather than voxels)
# autoPET's volumes: (what: "false_positive", "false_negative" or "reference", connectivity, unit, precision)
LesionVolumeForm = tuple[str, int, str, str]
# BraTS 2023's lesion-wise scores: (dilation, minimum_volume, volume_unit, connectivity, penalty)
LesionWiseForm = tuple[int, float, str, int, float]


@dataclass(frozen=True)
class LabelRequest:
    """What to compute for one label beyond its voxel counts: the surface distances (``nsd``: the
    tolerances in mm), lesion counts at each IoU threshold (``lesions`` greedy, ``hungarian``),
    panoptic quality at each threshold, and volume differences in each ``VolumeForm``."""

    value: int | tuple[int, ...]  # the label's voxel value, or a region's values (a label union)
    hd95: bool = False
    hausdorff: bool = False
    masd: bool = False
    nsd: tuple[float, ...] = ()
    lesions: tuple[float, ...] = ()
    hungarian: tuple[float, ...] = ()
    panoptic: tuple[float, ...] = ()
    volumes: tuple[VolumeForm, ...] = ()
    lesion_volumes: tuple[LesionVolumeForm, ...] = ()
    lesion_wise: tuple[LesionWiseForm, ...] = ()
    overlap_lesions: tuple[int, ...] = ()  # lesions detected by any overlap, at each connectivity (ISLES 2022)


@dataclass(frozen=True)
class LabelNumbers:
    """One label of one case: voxel counts and what its request asked for (NaN / absent otherwise)."""

    reference: int  # |G|
    prediction: int  # |P|
    intersection: int  # |G ∩ P|
    hd95: float = math.nan  # mm
    nsd: tuple[tuple[float, float], ...] = ()  # (tolerance mm, NSD)
    lesions: tuple[tuple[float, LesionCounts], ...] = ()  # (IoU threshold, greedy counts)
    hausdorff: float = math.nan
    masd: float = math.nan
    volumes: tuple[tuple[VolumeForm, float], ...] = ()  # NaN: empty reference, relative form
    hungarian: tuple[tuple[float, LesionCounts], ...] = ()
    panoptic: tuple[tuple[float, PanopticQuality], ...] = ()  # NaN qualities: no instance in either map
    lesion_volumes: tuple[tuple[LesionVolumeForm, float], ...] = ()  # NaN: false negatives of an empty reference
    lesion_wise: tuple[tuple[LesionWiseForm, LesionWiseScores], ...] = ()
    overlap_lesions: tuple[tuple[int, OverlapDetection], ...] = ()  # (connectivity, counts)


@dataclass(frozen=True)
class CaseSegmentation:
    """One case's numbers: the voxel volume (product of the spacing), each label's numbers, and
    whether neither map holds any label (``empty``), and the maps' number of voxels (``size``: the
    negatives of a voxel-wise specificity)."""

    voxel_volume: float
    labels: Mapping[Hashable, LabelNumbers]
    empty: bool = False
    size: int = 0


def summarise_label_maps(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    requests: Mapping[Hashable, LabelRequest],
) -> CaseSegmentation:
    """Per-label counts and the requested surface, volume, lesion and panoptic numbers of two label maps.

    Parameters
    ----------
    reference, prediction : integer (or boolean) label maps of one shape, (z, y, x) in 3D.
    spacing : the voxel size along the maps' axes (mm).
    requests : what to compute, per label key (a name or the value itself); a request's value may be
        a region, scored as one mask (:mod:`evaluation.metrics.regions`).

    Edge values: a mask compared with an empty one has the grid diagonal as its distances (HD95 =
    diagonal, NSD 0); both maps empty everywhere give the requested values of two empty surfaces
    (HD 0, MASD 0, NSD 1), no lesion, panoptic qualities NaN with zero counts; the relative volume
    difference of an empty reference is NaN.
    """
    checks.same_shape(reference, prediction)
    spacing = tuple(float(s) for s in checks.spacing(spacing, np.ndim(reference)))
    voxel_volume = volume_of_one_voxel(spacing, "mm3")
    box = bounding_box(reference, prediction)
    size = int(np.size(reference))
    diagonal = image_diagonal(reference.shape, spacing)
    if box is not None:
        reference, prediction = crop_padded(reference, box), crop_padded(prediction, box)
    labels = {}
    for key, request in requests.items():
        r, p = region_mask(reference, request.value), region_mask(prediction, request.value)
        numbers: dict[str, object] = {}
        surfaces = request.hd95 or request.nsd or request.hausdorff or request.masd
        lesions = request.lesions or request.hungarian or request.panoptic
        crop = cropped_pair(r, p) if box is not None and (surfaces or lesions) else None  # one crop serves both
        if surfaces:
            if box is None:  # the values of two empty surfaces
                numbers.update(nsd=tuple((t, 1.0) for t in request.nsd))
                numbers.update({name: 0.0 for name in ("hd95", "hausdorff", "masd") if getattr(request, name)})
            else:  # one surface computation serves every distance of the label
                distances = pair_surface_distances(crop, spacing, empty_distance=diagonal)
                numbers["nsd"] = tuple((t, distances.nsd(t)) for t in request.nsd)
                if request.hd95:
                    numbers["hd95"] = distances.hd(95.0)
                if request.hausdorff:
                    numbers["hausdorff"] = distances.hd(100.0)
                if request.masd:
                    numbers["masd"] = distances.masd()
        none = LesionCounts(0, 0, 0)
        # one component labelling serves every threshold and method of the label
        pairs = pair_lesions(crop) if box is not None and lesions else None
        numbers["lesions"] = tuple((t, pairs.match(t).counts if pairs is not None else none) for t in request.lesions)
        numbers["hungarian"] = tuple(
            (t, pairs.match(t, "hungarian").counts if pairs is not None else none) for t in request.hungarian
        )
        numbers["panoptic"] = tuple(
            (t, panoptic_from_matches(pairs.match(t), empty=math.nan) if pairs is not None
             else PanopticQuality(math.nan, math.nan, math.nan, 0, 0, 0))
            for t in request.panoptic
        )  # fmt: skip
        numbers["volumes"] = tuple((form, _volume_difference(r, p, voxel_volume, form)) for form in request.volumes)
        numbers["lesion_volumes"] = tuple(
            (form, _lesion_volume(r, p, spacing, form)) for form in request.lesion_volumes
        )
        numbers["lesion_wise"] = tuple(
            (form, lesion_wise_scores(r, p, spacing, form[0], form[1], form[2], form[3], penalty=form[4]))
            for form in request.lesion_wise
        )
        numbers["overlap_lesions"] = tuple((c, overlap_detection(r, p, c)) for c in request.overlap_lesions)
        counts = (int(np.count_nonzero(r)), int(np.count_nonzero(p)), int(np.count_nonzero(r & p)))
        labels[key] = LabelNumbers(*counts, **numbers)  # type: ignore[arg-type]
    return CaseSegmentation(voxel_volume, labels, box is None, size)


def _volume_difference(reference: np.ndarray, prediction: np.ndarray, voxel_volume: float, form: VolumeForm) -> float:
    """:func:`evaluation.metrics.overlap.volume_difference` in one ``VolumeForm`` (NaN: an empty
    reference in a relative form)."""
    relative, absolute, in_volume = form
    return volume_difference(
        reference, prediction, voxel_volume if in_volume else 1.0, relative, absolute, empty_reference=math.nan
    )


def _lesion_volume(
    reference: np.ndarray, prediction: np.ndarray, spacing: Sequence[float], form: LesionVolumeForm
) -> float:
    """One of autoPET's volumes (:mod:`evaluation.metrics.volumes`) in one ``LesionVolumeForm`` (NaN: the
    false-negative volume of an empty reference)."""
    what, connectivity, unit, precision = form
    if what == "reference":
        return mask_volume(reference, spacing, unit, precision)
    volume = false_positive_volume if what == "false_positive" else false_negative_volume
    return volume(reference, prediction, spacing, connectivity, unit, precision)
