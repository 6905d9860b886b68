"""Evaluation regions as unions of label values ("hierarchical evaluation classes"), and the surface
metrics of each region.

A region is one label value or a set of them, scored as one binary mask: KiTS23 scores "kidney and
masses" {1, 2, 3}, "masses" {2, 3} and "tumour" {2} (github neheller/kits23,
``kits23/configuration/labels.py`` ``KITS_HEC_LABEL_MAPPING``, masks built by
``kits23/evaluation/generate_bool_masks_for_hec.py``); BraTS 2023 "whole tumour" {1, 2, 3}, "tumour
core" {1, 3} and "enhancing tumour" {3} (github rachitsaluja/BraTS-2023-Metrics, ``metrics.py``
``get_TissueWiseSeg``). Dice and IoU per region: :func:`evaluation.metrics.overlap.dice_per_label`,
which takes regions as well as single labels.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from numbers import Real

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.surface import hausdorff_distance, normalised_surface_dice

Region = int | Sequence[int]


def region_values(region: Region) -> tuple[int, ...]:
    """The label values of ``region`` (one integer or a non-empty sequence of distinct integers)."""
    values = (region,) if np.ndim(region) == 0 else tuple(region)  # type: ignore[arg-type]
    if not values:
        raise ValueError("a region needs at least one label value")
    if not all(isinstance(v, Real) and not isinstance(v, bool) and float(v).is_integer() for v in values):
        raise ValueError(f"region label values must be integers, got {values}")
    if len(set(values)) != len(values):
        raise ValueError(f"region label values repeat: {values}")
    return tuple(int(v) for v in values)


def region_mask(label_map: np.ndarray, region: Region) -> np.ndarray:
    """Boolean mask of the voxels of ``label_map`` whose value is in ``region``."""
    values = region_values(region)
    label_map = np.asarray(label_map)
    if len(values) == 1:
        return label_map == values[0]
    return np.isin(label_map, values)


def region_pairs(
    reference: np.ndarray, prediction: np.ndarray, regions: Sequence[Region]
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (reference, prediction) masks of each region of two label maps of one shape, one region
    at a time (checked when the first is asked for)."""
    checks.same_shape(reference, prediction)
    if len(regions) == 0:
        raise ValueError("regions is empty")
    for region in regions:
        yield region_mask(reference, region), region_mask(prediction, region)


def nsd_per_region(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    regions: Sequence[Region],
    tolerances: Sequence[float],
    both_empty: float = 1.0,
) -> np.ndarray:
    """Normalised surface Dice (:func:`~evaluation.metrics.surface.normalised_surface_dice`) of each
    region of two (z, y, x) label maps, each at its own tolerance in mm.

    KiTS23 scores each region at its own tolerance (``HEC_SD_TOLERANCES_MM``; ``compute_metrics_for_label``
    in ``kits23/evaluation/metrics.py``: both masks empty 1, exactly one empty 0). Returns a
    (len(regions),) float array.
    """
    if len(tolerances) != len(regions):
        raise ValueError(f"{len(tolerances)} tolerances for {len(regions)} regions")
    pairs = region_pairs(reference, prediction, regions)
    return np.array(
        [normalised_surface_dice(r, p, spacing, t, both_empty) for (r, p), t in zip(pairs, tolerances, strict=True)]
    )


def hausdorff_per_region(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    regions: Sequence[Region],
    percent: float = 95.0,
    both_empty: float = 0.0,
    one_empty: float | None = None,
) -> np.ndarray:
    """(Robust) Hausdorff distance (:func:`~evaluation.metrics.surface.hausdorff_distance`, HD95 by
    default) of each region of two (z, y, x) label maps; a (len(regions),) float array in mm."""
    pairs = region_pairs(reference, prediction, regions)
    return np.array([hausdorff_distance(r, p, spacing, percent, both_empty, one_empty) for r, p in pairs])
