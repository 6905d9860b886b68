"""autoPET false-positive / false-negative volumes and Dice against the official code's output, and
the voxel volume by hand.

Goldens: ``golden/autopet.json``, computed by github lab-midas/autoPET ``val_script.py`` (autoPET I),
ClinicalDataScience/autoPETIII ``evaluation-metrics/evaluation_metrics.py`` (autoPET III, under NumPy 2)
and lab-midas/autoPETCTIV ``evaluation_metrics/evaluation_metrics.py`` (autoPET IV, the newest; commits,
environment and calls recorded in the file) on ``synthetic_segmentations.cases()`` as binary masks
at ``PET_SPACING``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from metrics.synthetic_segmentations import PET_SPACING, cases

from evaluation.metrics.overlap import dice
from evaluation.metrics.volumes import false_negative_volume, false_positive_volume, mask_volume, voxel_volume

GOLDEN = json.loads((Path(__file__).parent / "golden" / "autopet.json").read_text())
CASES = cases()
NAN = float("nan")


EDITIONS = {  # edition: (empty reference's Dice and FN volume, precision)
    "autoPET-I": (0.0, "nifti"),
    "autoPET-III": (NAN, "nifti-float32"),
    "autoPET-IV": (NAN, "nifti"),
}


def _ours(reference: np.ndarray, prediction: np.ndarray, edition: str) -> dict[str, float]:
    empty, precision = EDITIONS[edition]
    return {
        "dice_sc": dice(reference, prediction, empty=NAN, empty_reference=empty),
        "false_pos_vol": false_positive_volume(reference, prediction, PET_SPACING, precision=precision),
        "false_neg_vol": false_negative_volume(
            reference, prediction, PET_SPACING, precision=precision, empty_reference=empty
        ),
    }


def _same(ours: float, official: float | None) -> bool:
    return math.isnan(ours) if official is None else ours == pytest.approx(official, abs=1e-9)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("edition", sorted(EDITIONS))
def test_every_official_number(case, edition):
    reference, prediction, _ = CASES[case]
    ours = _ours(reference > 0, prediction > 0, edition)
    official = GOLDEN["cases"][case][edition]
    assert set(official) == set(ours)
    for key, value in official.items():
        assert _same(ours[key], value), (key, ours[key], value)


def test_goldens_cover_the_edge_cases():
    golden = GOLDEN["cases"]
    assert golden["empty_reference"]["autoPET-IV"]["false_neg_vol"] is None
    assert golden["empty_reference"]["autoPET-I"]["false_neg_vol"] == 0.0
    assert golden["both_empty"]["autoPET-I"]["dice_sc"] is None
    # an 18-connected component meeting another only at a corner is a lesion of its own
    assert golden["corners"]["autoPET-IV"]["false_neg_vol"] > 0
    assert golden["many_to_one"]["autoPET-IV"]["false_pos_vol"] > 0  # next to the reference, not on it
    three, four = golden["nested"]["autoPET-III"]["false_pos_vol"], golden["nested"]["autoPET-IV"]["false_pos_vol"]
    assert abs(three - four) > 1e-9  # autoPET III's float32 volume under NumPy 2


def test_float32_voxel_volume_is_the_header_rounding():
    single = np.float32(PET_SPACING[2]) * np.float32(PET_SPACING[1]) * np.float32(PET_SPACING[0]) / np.float32(1000)
    assert voxel_volume(PET_SPACING, "ml", "nifti") == float(single)
    exact = PET_SPACING[0] * PET_SPACING[1] * PET_SPACING[2] / 1000
    assert voxel_volume(PET_SPACING) == pytest.approx(exact, rel=1e-15)
    assert abs(voxel_volume(PET_SPACING, precision="nifti") - exact) > 1e-10  # why the option exists
    mask = np.ones((3, 1, 1), dtype=bool)
    assert mask_volume(mask, PET_SPACING, precision="nifti-float32") == float(np.float32(3.0) * single)
    assert voxel_volume((2.0, 1.0, 0.5), "mm3") == 1.0
    assert voxel_volume((2.0, 1.0, 0.5), "voxels") == 1.0


def test_hand_built_volumes():
    reference = np.zeros((6, 6, 6), dtype=bool)
    prediction = np.zeros_like(reference)
    reference[0:2, 0:2, 0:2] = True  # 8 voxels, overlapped
    prediction[1:3, 1:3, 1:3] = True
    reference[4:6, 4:6, 0:1] = True  # 4 voxels, missed
    prediction[5, 0, 5] = True  # 1 voxel, false positive
    prediction[0, 3, 2] = True  # 1 voxel meeting the overlapping prediction at an edge only
    spacing = (2.0, 2.0, 2.5)  # 10 mm³ = 0.01 ml
    assert false_positive_volume(reference, prediction, spacing, 18) == pytest.approx(0.01)  # 18: joined by the edge
    assert false_positive_volume(reference, prediction, spacing, 6) == pytest.approx(0.02)
    assert false_negative_volume(reference, prediction, spacing, unit="mm3") == pytest.approx(40.0)
    assert mask_volume(reference, spacing, "mm3") == pytest.approx(120.0)
    empty = np.zeros_like(reference)
    assert false_positive_volume(reference, empty, spacing) == 0.0
    assert math.isnan(false_negative_volume(empty, prediction, spacing))
    assert false_negative_volume(empty, prediction, spacing, empty_reference=0.0) == 0.0
    flat = np.zeros((4, 4), dtype=bool)
    flat[0, 0] = True
    assert false_positive_volume(np.zeros_like(flat), flat, (1.0, 1.0), unit="mm3") == 1.0


def test_bad_input_raises_one_line():
    mask = np.zeros((3, 3, 3), dtype=bool)
    with pytest.raises(ValueError, match="unit"):
        false_positive_volume(mask, mask, (1, 1, 1), unit="litre")
    with pytest.raises(ValueError, match="precision"):
        mask_volume(mask, (1, 1, 1), precision="float16")
    with pytest.raises(ValueError, match="connectivity"):
        false_positive_volume(mask, mask, (1, 1, 1), connectivity=4)
    with pytest.raises(ValueError, match="spacing"):
        false_negative_volume(mask, mask, (1, 1))
    with pytest.raises(ValueError, match="shapes differ"):
        false_negative_volume(mask, mask[0], (1, 1, 1))
    with pytest.raises(ValueError, match="only 0 and 1"):
        false_positive_volume(mask.astype(int) + 2, mask, (1, 1, 1))
    with pytest.raises(ValueError, match="masks is empty"):
        false_negative_volume(mask[:0], mask[:0], (1, 1, 1))
