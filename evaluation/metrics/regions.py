"""Evaluation regions as unions of label values ("hierarchical evaluation classes").

A region is one label value or a set of them, scored as one binary mask: KiTS23 scores "kidney and
masses" {1, 2, 3}, "masses" {2, 3} and "tumour" {2} (github neheller/kits23,
``kits23/configuration/labels.py`` ``KITS_HEC_LABEL_MAPPING``, masks built by
``kits23/evaluation/generate_bool_masks_for_hec.py``); BraTS 2023 "whole tumour" {1, 2, 3}, "tumour
core" {1, 3} and "enhancing tumour" {3} (github rachitsaluja/BraTS-2023-Metrics, ``metrics.py``
``get_TissueWiseSeg``). Dice and IoU per region: :func:`evaluation.metrics.overlap.dice_per_label`,
which takes regions as well as single labels; the surface metrics of a region: a
:class:`evaluation.metrics.segmentation.LabelRequest` whose value is the region.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from numbers import Real

import numpy as np

from evaluation.metrics import checks

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
