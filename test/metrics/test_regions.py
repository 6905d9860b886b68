"""Regions as label unions: KiTS23's Dice and surface Dice per hierarchical region against the official
code's output, and the region masks' checks.

Goldens: ``golden/kits23.json``, computed by github neheller/kits23 ``kits23/evaluation/metrics.py``
(``compute_metrics_for_case``; commit, environment and call recorded in the file) on
``synthetic_segmentations.cases()``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from metrics.synthetic_segmentations import cases

from evaluation.metrics.overlap import dice_per_label, iou_per_label
from evaluation.metrics.regions import region_mask, region_values
from evaluation.metrics.segmentation import LabelRequest, summarise_label_maps
from evaluation.metrics.surface import hausdorff_distance, normalised_surface_dice

GOLDEN = json.loads((Path(__file__).parent / "golden" / "kits23.json").read_text())
# kits23/configuration/labels.py: KITS_HEC_LABEL_MAPPING and HEC_SD_TOLERANCES_MM
KITS23 = {"kidney_and_mass": (1, 2, 3), "mass": (2, 3), "tumor": (2,)}
TOLERANCES = (1.0330772532390826, 1.1328796488598762, 1.1498198361434828)
CASES = cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_official_number(case):
    reference, prediction, spacing = CASES[case]
    regions = list(KITS23.values())
    dice = dice_per_label(reference, prediction, regions)
    for index, (name, region) in enumerate(KITS23.items()):
        official = GOLDEN["cases"][case][name]
        masks = region_mask(reference, region), region_mask(prediction, region)
        nsd = normalised_surface_dice(*masks, spacing, TOLERANCES[index], both_empty=1.0)  # KiTS23: both empty 1
        assert dice[index] == pytest.approx(official["Dice"], abs=1e-9), name
        assert nsd == pytest.approx(official["SD"], abs=1e-9), name


def test_goldens_cover_the_edge_cases():
    golden = GOLDEN["cases"]
    assert golden["both_empty"]["tumor"] == {"Dice": 1.0, "SD": 1.0}
    assert golden["empty_prediction"]["mass"] == {"Dice": 0.0, "SD": 0.0}
    assert golden["touching"]["tumor"] == {"Dice": 0.0, "SD": 0.0}  # label 2 in the prediction only
    assert 0 < golden["random"]["tumor"]["SD"] < 1


def test_region_masks():
    labels = np.array([[0, 1, 2], [3, 2, 1]])
    assert region_mask(labels, 2).tolist() == [[False, False, True], [False, True, False]]
    assert region_mask(labels, (1, 3)).tolist() == [[False, True, False], [True, False, True]]
    assert region_values(np.int64(3)) == (3,)
    assert dice_per_label(labels, labels[:, ::-1], [(1, 2, 3), 2]).tolist() == pytest.approx([0.8, 0.5])
    assert iou_per_label(labels, labels, [(1, 2)]).tolist() == [1.0]


@pytest.mark.parametrize(
    ("region", "message"),
    [((), "at least one"), ((1.5,), "integers"), (("1",), "integers"), ((True,), "integers"), ((2, 2), "repeat")],
)
def test_bad_regions_raise(region, message):
    with pytest.raises(ValueError, match=message):
        region_mask(np.zeros((2, 2)), region)


def test_bad_calls_raise():
    labels = np.zeros((3, 3, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="regions is empty"):
        dice_per_label(labels, labels, [])
    with pytest.raises(ValueError, match="shapes differ"):
        dice_per_label(labels, labels[0], [1])


def test_a_label_request_scores_a_region_as_one_mask():
    reference, prediction, spacing = CASES["nested"]
    summary = summarise_label_maps(
        reference, prediction, spacing, {"wt": LabelRequest((1, 2, 3), hd95=True), "et": LabelRequest(3)}
    )
    whole_ref, whole_pred = region_mask(reference, (1, 2, 3)), region_mask(prediction, (1, 2, 3))
    wt = summary.labels["wt"]
    assert (wt.reference, wt.prediction) == (int(whole_ref.sum()), int(whole_pred.sum()))
    assert wt.intersection == int((whole_ref & whole_pred).sum())
    assert wt.hd95 == hausdorff_distance(whole_ref, whole_pred, spacing, 95.0)
    assert summary.labels["et"].reference == int((reference == 3).sum())
