"""The metrics of public challenges' segmentations (autoPET volumes, BraTS 2023 lesion-wise scores,
voxel sensitivity / specificity) as a declaration states them: refused in one line when a key is
wrong. Their numbers are checked against the official code in ``test_library.py``."""

from __future__ import annotations

import pytest
from conftest import REPO

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

DECLARATIONS = REPO / "evaluation" / "declarations"
BRATS = (DECLARATIONS / "brats2023-gli.toml").read_text(encoding="utf-8")
AUTOPET = (DECLARATIONS / "autopet4.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "old", "new", "message"),
    [
        (BRATS, "dilation = 3", "dilation = -1", "metrics[0].dilation: must be a whole number of voxels from 0 to"),
        (BRATS, "dilation = 3", "dilation = 1.5", "metrics[0].dilation: must be an integer"),
        (BRATS, "minimum_volume = 50.0", "minimum_volume = -5.0", "metrics[0].minimum_volume: must be non-negative"),
        (BRATS, 'volume_unit = "mm3"', 'volume_unit = "cc"',
         "metrics[0].volume_unit: 'cc' is not one of ml, mm3, voxels"),
        (BRATS, "connectivity = 26", "connectivity = 8", "metrics[0].connectivity: 8 is not one of 6, 18, 26"),
        (BRATS, "penalty = 374.0", "penalty = inf", "metrics[0].penalty: must be a finite number, not inf"),
        (BRATS, "full_reference = 0.0", 'full_reference = "zero"',
         "metrics[5].full_reference: must be a number or 'null', not 'zero'"),
        (BRATS, 'labels = { WT = [1, 2, 3], TC = [1, 3], ET = 3 }', 'labels = { WT = [1, 2, 3], TC = [1, 3], ET = 3 }'
         '\ndimension = 2', "metrics[0].metric: lesion_wise_dice needs a 3D segmentation"),
        (AUTOPET, '\nprecision = "nifti"', '\nprecision = "double"',
         "metrics[1].precision: 'double' is not one of float64, nifti, nifti-float32"),
        (AUTOPET, 'unit = "ml"', 'unit = "litre"', "metrics[1].unit: 'litre' is not one of ml, mm3, voxels"),
        (AUTOPET, 'empty_reference = "null"           # no', 'empty_reference = "none"           # no',
         "metrics[2].empty_reference: must be a number or 'null', not 'none'"),
        (AUTOPET, 'empty_reference = "null"           # ...', 'empty_reference = nan  # ...',
         "metrics[0].empty_reference: must be a finite number, not nan"),
    ],
)  # fmt: skip
def test_bad_keys_are_refused_in_one_line(text, old, new, message):
    assert old in text
    with pytest.raises(ConfigurationError) as caught:
        parse(text.replace(old, new, 1), "c.toml")
    assert f"c.toml: {message}" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_settings_echo_the_declared_keys():
    declaration = parse(AUTOPET, "autopet4.toml")
    dice, false_positives, false_negatives = declaration.metrics
    assert dict(dice.params)["empty_reference"] == "null"
    assert dict(false_positives.params) == {"connectivity": 18, "unit": "ml", "precision": "nifti"}
    assert dict(false_negatives.params)["empty_reference"] == "null"
