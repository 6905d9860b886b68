"""Lesion-wise Dice and HD95 as BraTS 2023 defines them: reference lesions merged by a dilation,
predicted lesions matched many-to-one within the dilated reference lesion, each unmatched lesion
penalised.

Definition (github rachitsaluja/BraTS-2023-Metrics, ``metrics.py`` ``get_LesionWiseScores`` and
``get_LesionWiseResults``; its README):

- lesions are the connected components (26-connected in BraTS) of the reference and the prediction;
- the reference is dilated ``dilation`` times with the 18-neighbourhood (``generate_binary_structure(3,
  2)``); reference lesions whose dilations touch are one lesion (each reference voxel takes the label
  of its component of the dilated reference);
- a reference lesion is matched by every predicted component that overlaps the lesion's own
  dilation (several components may match one lesion, and one component several lesions); its Dice
  and HD95 (DeepMind surface distances, :mod:`evaluation.metrics.surface`) are against the union of
  its matching components; an unmatched lesion has Dice 0 and HD95 ``penalty`` (374 mm in BraTS);
- reference lesions of volume <= ``minimum_volume`` (mm³) leave the evaluation (neither TP nor FN,
  and their matching components are no false positives); predicted components matching no lesion
  are false positives (whatever their size), each with Dice 0 and HD95 ``penalty``;
- the lesion-wise score is the sum over kept lesions and false positives divided by their number;
  with neither, Dice 1 and HD95 0.

``dilation=0`` matches on overlap with the lesion itself (the official code has no such setting:
SciPy dilates until nothing changes at 0 iterations).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.boxes import bounding_box
from evaluation.metrics.lesions import CONNECTIVITIES, connected_components
from evaluation.metrics.overlap import dice
from evaluation.metrics.surface import hausdorff_distance
from evaluation.metrics.volumes import voxel_volume

HD95_PENALTY = 374.0  # mm, BraTS 2023


@dataclass(frozen=True)
class LesionWiseScores:
    """One case's lesion-wise Dice and HD95 with its lesion counts and the per-lesion values of the
    kept reference lesions (in component order)."""

    dice: float
    hd95: float
    tp: int
    fp: int
    fn: int
    lesion_dice: np.ndarray
    lesion_hd95: np.ndarray


def _grown(box: tuple[slice, ...], margin: int, shape: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(max(s.start - margin, 0), min(s.stop + margin, n)) for s, n in zip(box, shape, strict=True))


def _union(boxes: Sequence[tuple[slice, ...]]) -> tuple[slice, ...]:
    return tuple(slice(min(b[a].start for b in boxes), max(b[a].stop for b in boxes)) for a in range(len(boxes[0])))


def lesion_wise_scores(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    dilation: int = 3,
    minimum_volume: float = 50.0,
    volume_unit: str = "mm3",
    connectivity: int = 26,
    dilation_connectivity: int = 18,
    percent: float = 95.0,
    penalty: float = HD95_PENALTY,
    empty_dice: float = 1.0,
    empty_hd95: float = 0.0,
) -> LesionWiseScores:
    """BraTS 2023 lesion-wise Dice and HD95 of two binary (z, y, x) masks (see the module docstring).

    Parameters
    ----------
    reference, prediction : (z, y, x) binary masks of one shape (one region, e.g. whole tumour).
    spacing : (3,) voxel size in mm along (z, y, x).
    dilation : dilation iterations (voxels) merging and matching reference lesions; BraTS-GLI, -SSA
        and -PED 3, -MEN and -MET 1.
    minimum_volume : reference lesions of at most this volume are not evaluated; BraTS 50 mm³ (-MET 2).
    volume_unit : unit of ``minimum_volume``: ``"mm3"``, ``"ml"`` or ``"voxels"``.
    connectivity : 6, 18 or 26, for the components of both masks and of the dilated reference.
    dilation_connectivity : the dilation's neighbourhood, 6, 18 (BraTS) or 26.
    percent : the Hausdorff percentile (95).
    penalty : HD95 of an unmatched lesion, in mm (374).
    empty_dice, empty_hd95 : the scores of a case with no kept reference lesion and no false positive.

    Returns
    -------
    LesionWiseScores (Dice in [0, 1], HD95 in mm, TP/FP/FN lesion counts).
    """
    reference, prediction = checks.binary_pair(reference, prediction, (3,))
    checks.nonempty("masks", reference.size)
    step = checks.spacing(spacing, 3)
    if isinstance(dilation, bool) or not isinstance(dilation, int | np.integer) or dilation < 0:
        raise ValueError(f"dilation must be a non-negative whole number of voxels, got {dilation!r}")
    if not np.isfinite(minimum_volume) or minimum_volume < 0:
        raise ValueError(f"minimum_volume must be a finite non-negative number, got {minimum_volume}")
    if dilation_connectivity not in CONNECTIVITIES:
        raise ValueError(f"dilation_connectivity must be one of {CONNECTIVITIES}, got {dilation_connectivity!r}")
    if not np.isfinite(penalty):
        raise ValueError(f"penalty must be finite, got {penalty}")
    if not 0 < percent <= 100:  # checked here too: a case without a kept lesion never reaches the HD95
        raise ValueError(f"percent must be in (0, 100], got {percent}")
    from scipy import ndimage  # on first use: 0.3 s of start-up for every evaluation otherwise

    structure = ndimage.generate_binary_structure(3, CONNECTIVITIES.index(dilation_connectivity) + 1)
    box = bounding_box(reference, prediction)
    if box is not None:  # the union's box grown by the dilation within the grid: nothing changes
        around = _grown(box, dilation, reference.shape)
        reference, prediction = reference[around], prediction[around]

    pred_labels, n_pred = connected_components(prediction, connectivity)
    parts, n_parts = connected_components(reference, connectivity)
    part_boxes = ndimage.find_objects(parts, max_label=n_parts)
    # Each component dilated within its box grown by the dilation (beyond the grid is background, as
    # SciPy's border_value=0): their union is the dilated reference, and the dilation of a merged
    # lesion is the union of its components' dilations.
    sizes = np.bincount(parts.ravel(), minlength=n_parts + 1)[1:]
    grown, reach = reference.copy(), []
    for index, box in enumerate(part_boxes):
        around = _grown(box, dilation, reference.shape)
        own = parts[around] == index + 1
        if dilation:
            own = ndimage.binary_dilation(own, structure, iterations=dilation)
            grown[around] |= own
        hits = np.unique(pred_labels[around][own])
        reach.append(hits[hits > 0])
    grown_labels, n_lesions = connected_components(grown, connectivity)
    part_lesion = np.zeros(n_parts + 1, dtype=np.int64)  # each component lies in one dilated lesion
    part_lesion[parts[reference]] = grown_labels[reference]
    part_lesion = part_lesion[1:]
    pred_boxes = ndimage.find_objects(pred_labels, max_label=n_pred)

    matched_any = np.zeros(n_pred + 1, dtype=bool)
    lesion_dice, lesion_hd95, tp, n_kept = [], [], 0, 0
    unit_volume = voxel_volume(step, volume_unit)
    for label in range(1, n_lesions + 1):
        members = np.flatnonzero(part_lesion == label)
        matches = np.unique(np.concatenate([reach[m] for m in members]))
        matched_any[matches] = True
        if sizes[members].sum() * unit_volume <= minimum_volume:
            continue
        n_kept += 1
        tp += bool(matches.size)
        whole = _union([part_boxes[m] for m in members] + [pred_boxes[m - 1] for m in matches])
        lesion = np.isin(parts[whole], members + 1)
        matching = np.isin(pred_labels[whole], matches)
        lesion_dice.append(dice(lesion, matching))
        lesion_hd95.append(hausdorff_distance(lesion, matching, step, percent, one_empty=penalty))
    fp = int(n_pred - np.count_nonzero(matched_any[1:]))
    count = n_kept + fp
    if count == 0:
        total_dice, total_hd95 = float(empty_dice), float(empty_hd95)
    else:
        total_dice = float(np.sum(lesion_dice)) / count
        total_hd95 = (float(np.sum(lesion_hd95)) + fp * float(penalty)) / count
    per_lesion = np.array(lesion_dice, dtype=float), np.array(lesion_hd95, dtype=float)
    return LesionWiseScores(total_dice, total_hd95, tp, fp, n_kept - tp, *per_lesion)
