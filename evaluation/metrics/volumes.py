"""Volumes of masks and of their unmatched lesions: false-positive and false-negative volume, the
reference volume, in ml (or mm³ or voxels) from the voxel spacing.

autoPET definitions (github lab-midas/autoPET ``val_script.py``, autoPET I;
ClinicalDataScience/autoPETIII ``evaluation-metrics/evaluation_metrics.py``; the newest,
lab-midas/autoPETCTIV ``evaluation_metrics/evaluation_metrics.py``, "similar to autoPET I - III"):
lesions are the 18-connected components of a binary mask; the false-positive volume is the volume of
the predicted components that share no voxel with the reference (touching without overlap does not
count), the false-negative volume that of the reference components that share no voxel with the
prediction. autoPET III and IV return NaN for the false-negative volume of an empty reference
(autoPET I: 0; ``empty_reference``); an empty prediction has false-positive volume 0 in all.

The official code reads the voxel volume from the NIfTI header in float32 (``pixdim[1] * pixdim[2]
* pixdim[3] / 1000``, all float32): ``precision="nifti"`` reproduces that rounding (up to ~1e-7
relative apart from float64); autoPET III multiplies a Python float by it, which NumPy >= 2 keeps in
float32: ``precision="nifti-float32"`` rounds the volume to float32 as well. ``"float64"`` (the
default) computes everything in float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.boxes import bounding_box
from evaluation.metrics.lesions import connected_components
from evaluation.metrics.options import PRECISIONS, UNITS, VOLUME_UNITS


def voxel_volume(spacing: Sequence[float], unit: str = "ml", precision: str = "float64") -> float:
    """Volume of one voxel of ``spacing`` (mm, in array order (z, y, x)) in ``unit``.

    ``unit``: ``"ml"``, ``"mm3"`` or ``"voxels"`` (1). ``precision``: ``"float64"``, or ``"nifti"`` and
    ``"nifti-float32"``: the product of the float32 spacing taken as a NIfTI header's ``pixdim[1] *
    pixdim[2] * pixdim[3]`` (x * y * z), divided by 1000 for ml, all in float32, as autoPET's
    ``nii2numpy``.
    """
    if unit not in VOLUME_UNITS:
        raise ValueError(f"unit must be one of {VOLUME_UNITS}, got {unit!r}")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    step = checks.spacing(spacing, len(spacing))
    if unit == "voxels":
        return 1.0
    if precision == "float64":
        return float(np.prod(step)) / UNITS[unit]
    product = np.float32(1.0)
    for size in step[::-1].astype(np.float32):  # header order x, y, z
        product = np.float32(product * size)
    return float(np.float32(product / np.float32(UNITS[unit])))


def _volume(voxels: int, spacing: Sequence[float], unit: str, precision: str) -> float:
    """``voxels`` times the voxel volume; rounded to float32 for ``"nifti-float32"`` (float64 holds the
    product of an integer below 2**24 and a float32 exactly, so this is float32's own product)."""
    volume = voxels * voxel_volume(spacing, unit, precision)
    return float(np.float32(volume)) if precision == "nifti-float32" else volume


def _mask_pair(
    reference: np.ndarray, prediction: np.ndarray, spacing: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Validated boolean masks cropped to the bounding box of their union (no component changes)."""
    reference, prediction = checks.binary_pair(reference, prediction, (2, 3))
    checks.nonempty("masks", reference.size)
    checks.spacing(spacing, reference.ndim)
    box = bounding_box(reference, prediction)
    if box is None:
        return reference[:0], prediction[:0]
    return reference[box], prediction[box]


def untouched_voxels(mask: np.ndarray, other: np.ndarray, connectivity: int = 18) -> int:
    """Number of voxels of the connected components of ``mask`` that share no voxel with ``other``."""
    labels, count = connected_components(mask, connectivity)
    if count == 0:
        return 0
    sizes = np.bincount(labels.ravel(), minlength=count + 1)
    touched = np.zeros(count + 1, dtype=bool)
    touched[labels.reshape(np.shape(other))[other]] = True
    touched[0] = True  # the background
    return int(sizes[~touched].sum())


def false_positive_volume(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    connectivity: int = 18,
    unit: str = "ml",
    precision: str = "float64",
) -> float:
    """Volume of the predicted lesions (connected components) that overlap no reference voxel.

    autoPET (module docstring; ``false_pos_pix``). Parameters: ``reference``, ``prediction``: (z, y, x)
    (or 2D) binary masks of one shape; ``spacing``: voxel size in mm in the same order;
    ``connectivity``: 6, 18 (autoPET) or 26; ``unit`` and ``precision``: as :func:`voxel_volume` (the
    module docstring says which autoPET edition takes which). Returns a float >= 0 (0.0 for an empty
    prediction).
    """
    reference, prediction = _mask_pair(reference, prediction, spacing)
    voxels = untouched_voxels(prediction, reference, connectivity)
    return _volume(voxels, spacing, unit, precision)


def false_negative_volume(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    connectivity: int = 18,
    unit: str = "ml",
    precision: str = "float64",
    empty_reference: float = float("nan"),
) -> float:
    """Volume of the reference lesions (connected components) that overlap no predicted voxel.

    autoPET (module docstring; ``false_neg_pix``); parameters as :func:`false_positive_volume`;
    ``empty_reference``: the value of an empty reference (autoPET III and IV NaN, autoPET I 0.0).
    """
    reference, prediction = _mask_pair(reference, prediction, spacing)
    if not reference.any():
        return float(empty_reference)
    voxels = untouched_voxels(reference, prediction, connectivity)
    return _volume(voxels, spacing, unit, precision)


def mask_volume(mask: np.ndarray, spacing: Sequence[float], unit: str = "ml", precision: str = "float64") -> float:
    """Volume of a binary mask (e.g. the reference: BraTS 2023's ``GT_Complete_Volume`` in mm³,
    rachitsaluja/BraTS-2023-Metrics ``metrics.py``); ``unit`` and ``precision`` as :func:`voxel_volume`."""
    mask = checks.binary("mask", mask)
    checks.spacing(spacing, mask.ndim)
    return _volume(int(np.count_nonzero(mask)), spacing, unit, precision)
