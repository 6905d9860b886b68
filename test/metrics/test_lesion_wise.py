"""BraTS 2023 lesion-wise metrics and the legacy full-volume ones, against the official code's output.

Goldens: ``golden/brats2023.json``, computed by github rachitsaluja/BraTS-2023-Metrics ``metrics.py``
(commit, environment and call recorded in the file) on ``synthetic_segmentations.cases()``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from metrics.synthetic_segmentations import cases

from evaluation.metrics.lesion_wise import lesion_wise_scores
from evaluation.metrics.overlap import dice, voxel_sensitivity, voxel_specificity
from evaluation.metrics.regions import region_mask
from evaluation.metrics.surface import hausdorff_distance
from evaluation.metrics.volumes import mask_volume

GOLDEN = json.loads((Path(__file__).parent / "golden" / "brats2023.json").read_text())
CHALLENGES = {"BraTS-GLI": (3, 50.0), "BraTS-MEN": (1, 50.0), "BraTS-MET": (1, 2.0)}  # dilation, minimum mm³
REGIONS = {"WT": (1, 2, 3), "TC": (1, 3), "ET": (3,)}
CASES = cases()


def _ours(reference: np.ndarray, prediction: np.ndarray, spacing, dilation: int, minimum: float) -> dict[str, float]:
    scores = lesion_wise_scores(reference, prediction, spacing, dilation=dilation, minimum_volume=minimum)
    return {
        "Num_TP": scores.tp,
        "Num_FP": scores.fp,
        "Num_FN": scores.fn,
        "LesionWise_Score_Dice": scores.dice,
        "LesionWise_Score_HD95": scores.hd95,
        "Legacy_Dice": dice(reference, prediction),
        "Legacy_HD95": hausdorff_distance(reference, prediction, spacing, 95.0, both_empty=0.0, one_empty=374.0),
        "Sensitivity": voxel_sensitivity(reference, prediction),
        "Specificity": voxel_specificity(reference, prediction),
        "GT_Complete_Volume": mask_volume(reference, spacing, "mm3"),
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_official_number(case):
    reference, prediction, spacing = CASES[case]
    for challenge, (dilation, minimum) in CHALLENGES.items():
        for region, values in REGIONS.items():
            ours = _ours(region_mask(reference, values), region_mask(prediction, values), spacing, dilation, minimum)
            official = GOLDEN["cases"][case][challenge][region]
            assert set(official) == set(ours)
            for key, value in official.items():
                assert ours[key] == pytest.approx(value, abs=1e-9), (challenge, region, key)


def test_goldens_cover_the_edge_cases():
    rows = [row for case in GOLDEN["cases"].values() for challenge in case.values() for row in challenge.values()]
    assert {row["LesionWise_Score_HD95"] for row in rows} >= {0.0, 374.0}  # nothing at all; only misses
    assert any(row["Num_TP"] and row["Num_FP"] and row["Num_FN"] for row in rows)
    assert any(row["Legacy_HD95"] == 374.0 for row in rows)  # one region empty: the penalty, not inf
    gli, met = GOLDEN["cases"]["small_lesion"]["BraTS-GLI"]["ET"], GOLDEN["cases"]["small_lesion"]["BraTS-MET"]["ET"]
    assert (gli["Num_TP"], gli["Num_FN"]) == (0, 1)  # only the 90 mm³ lesion (missed) kept at 50 mm³
    assert (met["Num_TP"], met["Num_FN"]) == (2, 1)  # the 36 mm³ one and the tumour's core kept at 2 mm³
    assert GOLDEN["cases"]["touching"]["BraTS-GLI"]["ET"]["Num_TP"] == 1  # two lesions merged by the dilation


def test_merging_many_to_one_and_dilation_zero():
    reference = np.zeros((12, 12, 24), dtype=bool)
    reference[4:8, 4:8, 2:6] = reference[4:8, 4:8, 8:12] = True  # 2 voxels apart
    prediction = np.zeros_like(reference)
    prediction[4:8, 4:8, 2:4] = prediction[4:8, 4:8, 5:6] = True  # two pieces of the first lesion
    prediction[4:8, 4:8, 13:15] = True  # 1 voxel from the second lesion, not on it
    merged = lesion_wise_scores(reference, prediction, (1, 1, 1), dilation=2, minimum_volume=0)
    assert (merged.tp, merged.fp, merged.fn) == (1, 0, 0)  # one lesion, three matching pieces
    assert merged.dice == pytest.approx(2 * 48 / (128 + 32 + 16 + 32))
    apart = lesion_wise_scores(reference, prediction, (1, 1, 1), dilation=0, minimum_volume=0)
    assert (apart.tp, apart.fp, apart.fn) == (1, 1, 1)  # overlap only: two lesions, the far piece a FP
    assert apart.dice == pytest.approx(2 * 48 / (64 + 48) / 3)
    assert apart.hd95 == pytest.approx((apart.lesion_hd95[0] + 2 * 374.0) / 3)
    diagonal = np.zeros((4, 4, 4), dtype=bool)
    diagonal[0, 0, 0] = diagonal[1, 1, 1] = True
    assert lesion_wise_scores(diagonal, diagonal, (1, 1, 1), 0, 0, connectivity=26).tp == 1
    assert lesion_wise_scores(diagonal, diagonal, (1, 1, 1), 0, 0, connectivity=6).tp == 2


def test_minimum_volume_units_and_empty_values():
    reference = np.zeros((6, 6, 6), dtype=bool)
    reference[1:3, 1:3, 1:3] = True  # 8 voxels, 16 mm³ at 2 mm³
    empty = np.zeros_like(reference)
    assert lesion_wise_scores(reference, empty, (2, 1, 1), minimum_volume=16).fn == 0  # <= minimum: left out
    assert lesion_wise_scores(reference, empty, (2, 1, 1), minimum_volume=15.9).fn == 1
    assert lesion_wise_scores(reference, empty, (2, 1, 1), minimum_volume=8, volume_unit="voxels").fn == 0
    nothing = lesion_wise_scores(empty, empty, (1, 1, 1))
    assert (nothing.dice, nothing.hd95, nothing.tp, nothing.fp, nothing.fn) == (1.0, 0.0, 0, 0, 0)
    nan = lesion_wise_scores(empty, empty, (1, 1, 1), empty_dice=float("nan"))
    assert np.isnan(nan.dice)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dilation": -1}, "dilation"),
        ({"dilation": 1.5}, "dilation"),
        ({"minimum_volume": -1.0}, "minimum_volume"),
        ({"connectivity": 8}, "connectivity"),
        ({"dilation_connectivity": 4}, "dilation_connectivity"),
        ({"penalty": float("inf")}, "penalty"),
        ({"volume_unit": "cc"}, "unit"),
        ({"percent": 150.0}, "percent"),
        ({"percent": float("nan")}, "percent"),
    ],
)
def test_bad_parameters_raise_one_line(kwargs, message):
    mask = np.zeros((3, 3, 3), dtype=bool)
    with pytest.raises(ValueError, match=message):
        lesion_wise_scores(mask, mask, (1, 1, 1), **kwargs)


def test_bad_masks_raise():
    with pytest.raises(ValueError, match="shapes differ"):
        lesion_wise_scores(np.zeros((3, 3, 3)), np.zeros((3, 3, 4)), (1, 1, 1))
    with pytest.raises(ValueError, match="3D"):
        lesion_wise_scores(np.zeros((3, 3)), np.zeros((3, 3)), (1, 1))
    with pytest.raises(ValueError, match="only 0 and 1"):
        lesion_wise_scores(np.full((3, 3, 3), 2), np.zeros((3, 3, 3)), (1, 1, 1))
    with pytest.raises(ValueError, match="spacing"):
        lesion_wise_scores(np.zeros((3, 3, 3)), np.zeros((3, 3, 3)), (1, 0, 1))
    with pytest.raises(ValueError, match="masks is empty"):
        lesion_wise_scores(np.zeros((0, 3, 3)), np.zeros((0, 3, 3)), (1, 1, 1))


def test_voxel_sensitivity_and_specificity_edges():
    empty, full = np.zeros((2, 2, 2), dtype=bool), np.ones((2, 2, 2), dtype=bool)
    assert voxel_sensitivity(empty, empty) == 1.0
    assert voxel_sensitivity(empty, full) == 0.0
    assert voxel_specificity(full, full) == 0.0
    assert voxel_specificity(full, full, empty=float("nan")) != voxel_specificity(full, full, empty=float("nan"))
    half = empty.copy()
    half[0] = True
    assert (voxel_sensitivity(half, full), voxel_specificity(half, empty)) == (1.0, 1.0)
    assert (voxel_sensitivity(full, half), voxel_specificity(empty, half)) == (0.5, 0.5)
